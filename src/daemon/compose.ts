import path from 'node:path';
import { LIMITS } from '../core/index.js';
import { Approvals, AuditLog } from '../approvals/index.js';
import { InstallSettingsStore, Installer } from '../install/index.js';
import { Elicitations, HEADER_SECRET_PREFIX, OfferPins, ProjectList, ResourceSubscriptions, Sandboxes, ServerNotices, ServiceRegistry, ServiceStore, SourceSync, Supervisor, ToolCalls, ToolPins, type EgressWiring, type McpEvent } from '../mcp/index.js';
import { ModelApiKey, ModelSettingsStore } from '../model/index.js';
import { KeychainSecretStore, MemorySecretStore, Secrets, ServiceSecrets, launchBinding, type Redactor, type SecretStore } from '../secrets/index.js';
import { Sessions, TranscriptFiles } from '../sessions/index.js';
import { DomainBus, connectBridge } from './bridge.js';
import { serverRecordsFile } from './directories.js';
import { hostActions } from './host-actions.js';
import { registerInstalled } from './installs.js';
import { askNetwork } from './net-ask.js';
import { DEFAULT_LADDER, type DaemonOptions } from './options.js';
import { RedactedEventHub } from './redacted.js';
import { SettingsFile } from '../util/index.js';
import { ProfileStore } from './profile-store.js';
import { ServerRecords } from './server-records.js';
import { ServiceOps, secretRefs } from './service-ops.js';
import type { DaemonParts } from './handlers/types.js';

/**
 * Builds every area and wires them together. Nothing here is global: two daemons can run in
 * one process (on different data dirs). The hooks an area is given may name a part built
 * after it (`parts`): none of them runs before this returns.
 */
export function compose(options: DaemonOptions): DaemonParts {
  const { paths, redactor, logger } = options;
  const now = options.now ?? (() => new Date());
  const env = options.env ?? process.env;
  // The hooks below reach the finished parts through this (set at the end).
  const late: { parts?: DaemonParts } = {};
  const parts = (): DaemonParts => {
    if (late.parts === undefined) throw new Error('a hook ran while the daemon was still being built');
    return late.parts;
  };
  const events = new RedactedEventHub(LIMITS.eventHistory, now, redactor);
  const bus = new DomainBus();
  const store = new ServiceStore(paths.dataDir, now);
  const serverRecords = new ServerRecords(serverRecordsFile(paths), (error) => logger.error({ err: String(error) }, 'could not update the record of running MCP servers'));
  // Whether a client can answer is known once the socket server exists (Daemon sets it).
  const elicitations = new Elicitations(bus.publish, now);
  const { notices, subscriptions } = serverNotices(bus, redactor, parts);
  const sandbox = new Sandboxes({ egress: egressWiring(options, parts, bus) });
  const searchPath = options.searchPath ?? process.env.PATH;
  const supervisor = new Supervisor({
    elicitations, notices,
    processes: serverRecords,
    version: options.version,
    ladder: options.ladder ?? DEFAULT_LADDER,
    searchPath,
    publish: bus.publish,
    redact: (text, edges) => (edges === undefined ? redactor.redact(text) : redactor.redactEdges(text, edges)),
    now,
    // Before the service's calls are cancelled and its connection closed: the tasks using it end as cancelled.
    onStop: (serviceId, reason) => parts().sessions.cancelUsing(serviceId, reason),
    pins: toolPins(options, events, now), outbound: options.outbound, sandbox,
  });
  const registry = new ServiceRegistry(store, bus.publish, now);
  const audit = auditLog(options, events);
  const approvals = new Approvals(bus.publish, now);
  const keychain = options.keychain ?? new KeychainSecretStore();
  const sessionSecrets = new MemorySecretStore();
  const secrets = new Secrets(keychain, sessionSecrets, redactor);
  const settingsFile = new SettingsFile(path.join(paths.dataDir, 'settings.json'));
  const modelSettings = new ModelSettingsStore(settingsFile);
  const installSettings = new InstallSettingsStore(settingsFile, options.runtimeDirs);
  const toolCalls = new ToolCalls({
    supervisor,
    approvals,
    publish: bus.publish,
    audit: (record) => audit.append(record),
    redact: (value) => redactor.redactValue(value),
    now,
    elicitations,
  });
  const installer = new Installer({
    installsDir: path.join(paths.dataDir, 'mcp-installs'),
    sandboxDir: path.join(paths.dataDir, 'npm-sandbox'),
    settings: () => installSettings.settings,
    // Every npm run is contained (the installer may not import mcp: the daemon hands it the sandbox).
    contain: (request) => sandbox.contain(request, { socketDir: path.join(paths.dataDir, 'npm-egress'), label: 'installs' }),
    register: (plan, command, args) => registerInstalled(registry, plan, command, args),
    publish: bus.publish,
    now,
  });
  const projects = new ProjectList(paths.dataDir);
  const built = {
    paths, version: options.version, redactor, now, env,
    events, store, registry, serverRecords, supervisor, approvals, elicitations, notices, subscriptions, audit, toolCalls, keychain, sessionSecrets, secrets, settingsFile, modelSettings, installSettings, installer, projects,
    profiles: new ProfileStore(paths.dataDir),
    services: new ServiceOps({ supervisor, secrets, keychain, redactor, env, outbound: options.outbound, sandbox, searchPath }),
    offerPins: new OfferPins(supervisor.pins),
    serviceSecrets: new ServiceSecrets(secrets, (kind, name) => (kind === 'headers' ? `${HEADER_SECRET_PREFIX}${name}` : name)),
    apiKey: modelApiKey(keychain, sessionSecrets, modelSettings, env, redactor),
    sourceSync: new SourceSync(sourceSyncDeps({ registry, supervisor, secrets, sessionSecrets, projects, env, configDir: paths.configDir, events, logger }), now),
  };
  late.parts = { ...built, sessions: sessions(options, built, bus) };
  connectBridge(bus, late.parts);
  return late.parts;
}

/**
 * What servers say of their own accord becomes events (a resource's change only when some
 * client subscribed to it); subscriptions are sent on the service's active connection. Both
 * follow calls, service states and deletions: MCP events (the other areas' kinds are none of those).
 */
function serverNotices(bus: DomainBus, redactor: DaemonOptions['redactor'], parts: () => DaemonParts): { notices: ServerNotices; subscriptions: ResourceSubscriptions } {
  const subscriptions = new ResourceSubscriptions((service, method, uri) => parts().supervisor.activeConnection(service.id, service.name).offer(method, { uri }, AbortSignal.timeout(LIMITS.defaultTimeoutMs)));
  const notices = new ServerNotices(bus.publish, redactor, (serviceId, uri) => subscriptions.has(serviceId, uri));
  bus.on((event) => {
    notices.observe(event as McpEvent);
    subscriptions.observe(event as McpEvent);
  });
  return { notices, subscriptions };
}

/** The model's API key: the keychain's, a session's, or the environment's; held by the redactor while known. */
function modelApiKey(keychain: SecretStore, session: SecretStore, settings: ModelSettingsStore, env: NodeJS.ProcessEnv, redactor: Redactor): ModelApiKey {
  return new ModelApiKey({ keychain, session, settings, env, hold: (value) => redactor.hold('model', 'DEEPSEEK_API_KEY', value), release: () => redactor.release('model') });
}

/** Where sandboxed services' egress proxies live (beside the socket), whose grants they read (the registry's, live), where their connections go. */
function egressWiring({ paths }: DaemonOptions, parts: () => DaemonParts, bus: DomainBus): EgressWiring {
  return {
    runtimeDir: paths.runtimeDir,
    service: (id) => parts().registry.list().find((service) => service.id === id),
    audit: (record) => void parts().audit.append(record),
    publish: bus.publish,
    ask: (service, host, port, signal) => askNetwork(parts().approvals, service, host, port, signal),
  };
}

/** The audit log: a failed append is logged and raised as a storage.warning (once per failing stretch). */
function auditLog({ paths, logger, redactor }: DaemonOptions, events: RedactedEventHub): AuditLog {
  const file = path.join(paths.dataDir, 'audit.jsonl');
  return new AuditLog(
    file,
    (error) => {
      logger.error({ err: String(error) }, 'could not append to the audit log');
      events.emit({ type: 'storage.warning', file, problem: `could not append to the audit log (${String(error).slice(0, 200)}): tool calls are refused until it can be written`, movedTo: null });
    },
    // Redacted as it is serialised (one serialisation, searched): see Redactor.redactedJson.
    (record) => redactor.redactedJson(record).text ?? '{}',
  );
}

/** The tool pins on disk: a bad file is reported (log and storage.warning), a failed write logged. */
function toolPins({ paths, logger, redactor }: DaemonOptions, events: RedactedEventHub, now: () => Date): ToolPins {
  return new ToolPins({
    dataDir: paths.dataDir,
    now,
    redact: (value) => redactor.redactValue(value),
    onProblem: (problem) => {
      logger.warn({ file: problem.file, problem: problem.problem, movedTo: problem.movedTo }, `${problem.file}: ${problem.problem}`);
      events.emit({ type: 'storage.warning', file: problem.file, problem: problem.problem, movedTo: problem.movedTo });
    },
    onWriteError: (file, error) => {
      logger.error({ err: String(error) }, 'could not write the tool pins');
      events.emit({ type: 'storage.warning', file, problem: `could not write the tool pins (${String(error).slice(0, 200)}): the service was stopped`, movedTo: null });
    },
  });
}

function sourceSyncDeps(
  deps: Pick<DaemonParts, 'registry' | 'supervisor' | 'secrets' | 'sessionSecrets' | 'projects' | 'env' | 'events'> & { configDir: string; logger: DaemonOptions['logger'] },
): ConstructorParameters<typeof SourceSync>[0] {
  const { registry, supervisor, secrets, sessionSecrets, projects, events, logger } = deps;
  return {
    registry,
    // A config source that is there but unusable: never fatal, always said (wispctl status, mcp sources, the event).
    warn: ({ file, problem }) => {
      logger.warn({ file, problem }, `${file}: ${problem}`);
      events.emit({ type: 'storage.warning', file, problem, movedTo: null });
    },
    configDir: () => deps.configDir,
    projects: () => projects.sources(),
    env: () => deps.env,
    writeSecrets: (config, values) => secrets.write(config.id, launchBinding(config), values),
    eraseSecrets: (config) => secrets.erase(config.id, secretRefs(config)),
    stop: async (id) => {
      await supervisor.stop(id);
    },
    storedSecrets: async (config) => {
      const values: Record<string, string> = {};
      for (const ref of secretRefs(config)) {
        const secret = await sessionSecrets.get(config.id, ref.name);
        if (secret === null) return null;
        values[ref.name] = secret.value;
      }
      return values;
    },
  };
}

function sessions(options: DaemonOptions, parts: Omit<DaemonParts, 'sessions'>, bus: DomainBus): Sessions {
  const { redactor, logger } = options;
  return new Sessions({
    transcripts: new TranscriptFiles(path.join(options.paths.dataDir, 'sessions'), (record) => redactor.redactValue(record)),
    toolCalls: parts.toolCalls,
    approvals: parts.approvals,
    host: hostActions(parts),
    activeTools: () => parts.supervisor.tools(),
    settings: () => parts.modelSettings.settings,
    apiKey: () => parts.apiKey.resolve(),
    redact: (value) => redactor.redactValue(value),
    publish: bus.publish,
    now: parts.now,
    log: (obj, msg) => logger.error(obj, msg),
  });
}
