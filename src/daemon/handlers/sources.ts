import { WispError, type Params, type Result, type Service } from '../../core/index.js';
import { entryRegistration, mergeSources } from '../../mcp/index.js';
import { launchBinding } from '../../secrets/index.js';
import { parseJsonc } from '../../util/index.js';
import type { DaemonParts, Handlers } from './types.js';

type SourceMethods = 'sources.list' | 'sources.reload' | 'sources.addProject' | 'sources.removeProject' | 'services.import';
type Deps = Pick<DaemonParts, 'paths' | 'projects' | 'sourceSync' | 'registry' | 'secrets' | 'services' | 'env'>;

/** Config sources (settings.json, plugins, project files) kept in sync, and a one-off import of such a file. */
export function sourceHandlers(parts: Deps): Pick<Handlers, SourceMethods> {
  const { projects, sourceSync } = parts;
  const view = (): Result<'sources.list'> => ({
    configDir: parts.paths.configDir,
    projects: [...projects.list()],
    allowEnv: projects.sources().filter((p) => p.allowEnv.length > 0).map((p) => ({ directory: p.directory, variables: [...p.allowEnv] })),
    report: sourceSync.report,
  });
  return {
    'sources.list': () => view(),
    'sources.reload': async () => {
      await sourceSync.sync();
      return view();
    },
    'sources.addProject': async (params) => {
      // A project whose file cannot be used is refused by add (UNSAFE_FILE, INVALID_CONFIG)
      // before it is recorded; one whose sync then fails is taken back out: a failed add
      // leaves nothing behind for the next start to trip on.
      const before = projects.snapshot();
      await projects.add(params.directory, params.allowEnv);
      try {
        await sourceSync.sync();
      } catch (error) {
        await projects.restore(before).catch(() => undefined);
        await sourceSync.sync().catch(() => undefined);
        throw error;
      }
      return view();
    },
    'sources.removeProject': async (params) => {
      await projects.remove(params.directory);
      await sourceSync.sync();
      return view();
    },
    'services.import': (params) => importFile(parts, params),
  };
}

/** One-off import: each entry becomes a service (disabled) with an import origin, its values in the chosen store. */
async function importFile(parts: Deps, params: Params<'services.import'>): Promise<Result<'services.import'>> {
  const { registry, secrets, services } = parts;
  let json: unknown;
  try {
    // JSON with comments too: VS Code's mcp.json may have them (mcp import --from vscode read them already).
    json = parseJsonc(params.content);
  } catch (error) {
    throw new WispError('INVALID_PARAMS', `${params.file ?? 'the file'} is not valid JSON: ${(error as Error).message}`);
  }
  const doc = (typeof json === 'object' && json !== null ? json : {}) as { mcpServers?: unknown; servers?: unknown };
  const servers = doc.mcpServers ?? doc.servers;
  if (typeof servers !== 'object' || servers === null) throw new WispError('INVALID_PARAMS', `${params.file ?? 'the file'} has no mcpServers or servers object`);
  const merged = mergeSources([{ kind: 'global', file: params.file ?? 'the imported file', content: { json: { mcpServers: servers } } }], parts.env);
  const imported: Service[] = [];
  // Recorded on each service so `mcp get` says where it came from (it is not synced: the file may be edited or gone).
  const origin = { kind: 'import' as const, file: (params.file ?? 'a pasted file').slice(0, 4096) || 'a pasted file', at: new Date().toISOString() };
  const skipped = merged.skipped.map((s) => ({ name: s.name, reason: s.reason, ...(s.code !== undefined ? { code: s.code } : {}) }));
  const warnings: string[] = [];
  for (const entry of merged.entries) {
    warnings.push(...entry.warnings);
    try {
      const { input, values } = entryRegistration(entry, params.storage);
      const config = await registry.register({ ...input, origin });
      try {
        await secrets.write(config.id, launchBinding(config), values);
      } catch (error) {
        await registry.delete({ id: config.id });
        throw error;
      }
      imported.push(services.view(config));
      const plain = values.filter((v) => v.plain === true).map((v) => v.name);
      if (plain.length > 0) {
        warnings.push(
          `${entry.name}: ${plain.join(', ')} ${plain.length === 1 ? 'is' : 'are'} kept as plain ${plain.length === 1 ? 'value' : 'values'} (a path, a number or a setting), not redacted: ` +
            `an approval shows arguments holding ${plain.length === 1 ? 'it' : 'them'} as they are sent. A secret among them? Set it again: wispctl mcp env set ${entry.name} ${plain[0]}`,
        );
      }
    } catch (error) {
      if (error instanceof WispError && error.code === 'KEYCHAIN_UNAVAILABLE') throw error;
      skipped.push({ name: entry.name, reason: error instanceof WispError ? `${error.code}: ${error.message}` : String(error), ...(error instanceof WispError ? { code: error.code } : {}) });
    }
  }
  return { imported, skipped, warnings };
}
