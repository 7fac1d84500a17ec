import type { Result } from '../../core/index.js';
import { clean, cleanBlock, showArg, table } from '../render.js';

/** Config sources and what became of their entries; one-off imports. */

function where(origin: { source: string; file: string; plugin: string | null }): string {
  return `${clean(origin.source)}${origin.plugin !== null ? ` (${clean(origin.plugin)})` : ''} ${showArg(origin.file)}`;
}

export function sourcesText(view: Result<'sources.list'>): string {
  const named = (dir: string): string => {
    const variables = view.allowEnv.find((a) => a.directory === dir)?.variables ?? [];
    return variables.length === 0 ? showArg(dir) : `${showArg(dir)} (may read ${variables.map((v) => `\${${clean(v)}}`).join(', ')})`;
  };
  const lines = [`config dir: ${showArg(view.configDir)}`, `projects:   ${view.projects.length === 0 ? '(none: wispctl mcp sources add-project DIR)' : view.projects.map(named).join(', ')}`];
  const report = view.report;
  if (report === null) return [...lines, 'not synced yet'].join('\n');
  lines.push(`synced:     ${clean(report.at)}`, '');
  if (report.entries.length > 0) {
    lines.push(
      table(
        ['NAME', 'TRANSPORT', 'ACTION', 'FROM', 'OVERRIDES'],
        report.entries.map((e) => [e.name, e.transport, e.action + (e.reason !== null ? `: ${e.reason}` : ''), where(e.origin), e.overrides !== null ? where(e.overrides) : '-']),
      ),
    );
  } else lines.push('no entries');
  for (const e of report.entries) for (const w of e.warnings) lines.push(`warning: ${clean(w)}`);
  for (const s of report.skipped) lines.push(`skipped ${clean(s.name)} (${where(s.origin)}): ${clean(s.reason)}`);
  for (const p of report.problems) {
    const kept = p.kept !== undefined && p.kept.length > 0 ? `; kept as they were: ${p.kept.map(clean).join(', ')}` : '';
    lines.push(`unusable: ${showArg(p.file)}: ${cleanBlock(p.message, '  ')}${p.code !== undefined ? ` (${clean(p.code)}): skipped${kept}` : ''}`);
  }
  for (const r of report.removed) lines.push(`removed ${clean(r)}: its entry is gone`);
  return lines.join('\n');
}

export function importText(result: Result<'services.import'>): string {
  return [
    ...result.imported.map((s) => `imported ${clean(s.name)} (${s.transport}, disabled${s.sandbox.status === 'on' ? ', sandboxed' : ''})`),
    ...result.skipped.map((s) => `skipped ${clean(s.name)}: ${clean(s.reason)}`),
    ...result.warnings.map((w) => `warning: ${clean(w)}`),
    // What the client it came from let it do, and Wisp does not: said before anyone trusts it.
    ...(result.imported.some((s) => s.sandbox.status === 'on')
      ? ['the local ones run sandboxed: no network, their cwd only, nothing else of yours (not your home, not other projects); a path their args name is not granted by itself. See and grant with: wispctl mcp sandbox NAME']
      : []),
    result.imported.length > 0 ? 'trust and start each with: wispctl mcp activate NAME' : 'nothing imported',
  ].join('\n');
}
