import type { Elicitation } from '../../core/index.js';
import { clean, cleanBlock, oneLine, showJson, table } from '../render.js';

/** Servers asking the user for input, as wispctl shows them: the server's words always marked as its own, untrusted. */

export function elicitationsTable(elicitations: readonly Elicitation[]): string {
  if (elicitations.length === 0) return 'No server is asking for input.';
  return table(
    ['ID', 'SERVICE', 'MODE', 'ASKED', 'MESSAGE (from the server, untrusted)'],
    elicitations.map((e) => [e.id, e.service.name, e.mode === 'url' ? `url ${e.host ?? ''}` : 'form', e.createdAt, oneLine(e.message, 60)]),
  );
}

/** The full request: the message as the server's text, each form field, or the URL with its host. */
export function elicitationText(e: Elicitation): string {
  const lines = [
    `${clean(e.service.name)} asks for input (elicitation ${clean(e.id)}).`,
    `  The server says (untrusted text, not from wispctl):`,
    `    | ${cleanBlock(e.message, '    | ')}`,
  ];
  if (e.mode === 'url') {
    lines.push(`  It asks you to open this URL yourself (wispctl never opens it):`, `    ${clean(e.url ?? '')}`, `    host: ${clean(e.host ?? '')}`);
  } else {
    const schema = (e.requestedSchema ?? {}) as { properties?: Record<string, Record<string, unknown>>; required?: unknown };
    const properties = schema.properties ?? {};
    const required = new Set(Array.isArray(schema.required) ? schema.required.map(String) : []);
    lines.push('  Fields:');
    for (const [name, field] of Object.entries(properties)) lines.push(`    ${fieldLine(name, field, required.has(name))}`);
  }
  return lines.join('\n');
}

function fieldLine(name: string, field: Record<string, unknown>, required: boolean): string {
  const type = typeof field.type === 'string' ? field.type : 'value';
  const choices = Array.isArray(field.enum) ? ` one of ${field.enum.map((v) => showJson(v)).join(', ')}` : '';
  const fallback = 'default' in field ? ` (default ${showJson(field.default)})` : '';
  const about = typeof field.description === 'string' ? ` — ${oneLine(field.description, 120)}` : '';
  return `${clean(name)}: ${clean(type)}${choices}${required ? ', required' : ''}${fallback}${about}`;
}

export function elicitationDone(e: Elicitation): string {
  return `elicitation ${clean(e.id)} ${clean(e.status)}${e.by !== null ? ` by ${clean(e.by)}` : ''}${e.reason !== null ? `: ${clean(e.reason)}` : ''}`;
}
