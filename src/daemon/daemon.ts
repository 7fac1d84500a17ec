import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { EventHub, RpcServer, checkSocketPath, type CallContext, type MethodEntry, type WispPaths } from '../control/index.js';
import { LIMITS, PROTOCOL_VERSION, WispError, type MethodName, type Params, type Result, type Approval as ApprovalView, type ConnectionState, type EventPayload, type WispEvent, type Service, type ToolInfo } from '../core/index.js';
import { methods, openRpcDocument } from '../core/wire/index.js';
import { Approvals, AuditLog, type Approval, type ApprovalAnnouncement } from '../approvals/index.js';
import {
  HEADER_SECRET_PREFIX,
  OAUTH_ITEMS,
  ProjectList,
  VaultOAuthProvider,
  listenForCallback,
  probeChallenge,
  type OAuthVault,
  ServiceRegistry,
  ServiceStore,
  SourceSync,
  entryRegistration,
  expandLaunch,
  isIdShaped,
  mergeSources,
  nameKey,
  Supervisor,
  ToolCalls,
  type CatalogTool,
  type LoadProblem,
  type RegistryChange,
  type StopLadder,
  type StoredService,
} from '../mcp/index.js';
import { InstallSettingsStore, Installer, STEPS, attemptView, serviceNameFor, type InstallPlan, type InstallSettings, type Runtime } from '../install/index.js';
import { ModelSettingsStore } from '../model/index.js';
import { KeychainSecretStore, MemorySecretStore, Secrets, launchBinding, type Redactor, type SecretStore, type VariableRef } from '../secrets/index.js';
import { Sessions, TranscriptFiles } from '../sessions/index.js';
import { auth } from '@modelcontextprotocol/sdk/client/auth.js';
import { randomBytes } from 'node:crypto';
import { SettingsFile, sweepTempFilesIn } from '../util/index.js';
import { checkOwnFiles, clearStaleSocket, ensurePrivateDir, serverRecordsFile } from './directories.js';
import { InstanceLock } from './instance-lock.js';
import type { StorageProblem } from '../util/index.js';
import { ServerRecords } from './server-records.js';

export interface DaemonOptions {
  readonly paths: WispPaths;
  readonly logger: Logger;
  readonly redactor: Redactor;
  readonly version: string;
  readonly now?: () => Date;
  /** How long stop() waits for in-flight work and for clients to read their last bytes. */
  readonly stopGraceMs?: number;
  /** The stop ladder for MCP servers (stdin closed -> SIGTERM -> SIGKILL). */
  readonly ladder?: StopLadder;
  /** PATH used to resolve bare command names (default: the daemon's own PATH). */
  readonly searchPath?: string;
  /** The keychain backend (default: the OS keychain). */
  readonly keychain?: SecretStore;
  /** The daemon's own environment, for DEEPSEEK_API_KEY (default: process.env). It never reaches a server. */
  readonly env?: NodeJS.ProcessEnv;
  /** Where installs look for Node and npm unless settings.json says otherwise (default: the fixed system list). */
  readonly runtimeDirs?: readonly string[];
}

/** How long a login waits for its callback. */
const LOGIN_TIMEOUT_MS = 600_000;

/** Where the model API key is filed in the keychain (or the session store). */
const MODEL_KEY = { owner: 'model', name: 'DEEPSEEK_API_KEY', binding: 'model' } as const;

export const DEFAULT_LADDER: StopLadder = { stdinGraceMs: 2000, termGraceMs: 2000 };

type Handlers = { [M in MethodName]: (params: Params<M>, ctx: CallContext) => Result<M> | Promise<Result<M>> };

/**
 * The composition root: builds every area, wires them together and owns start and stop.
 * Nothing here is global: two daemons can run in one process (on different data dirs).
 */
export class Daemon {
  private readonly startedAt: Date;
  private readonly events: EventHub;
  private readonly store: ServiceStore;
  private readonly registry: ServiceRegistry;
  private readonly supervisor: Supervisor;
  private readonly approvals: Approvals;
  private readonly audit: AuditLog;
  private readonly toolCalls: ToolCalls;
  private readonly secrets: Secrets;
  private readonly keychain: SecretStore;
  private readonly sessionSecrets = new MemorySecretStore();
  private readonly settingsFile: SettingsFile;
  private readonly modelSettings: ModelSettingsStore;
  private readonly installSettingsStore: InstallSettingsStore;
  private readonly sessions: Sessions;
  private readonly installer: Installer;
  private readonly projects: ProjectList;
  private readonly sourceSync: SourceSync;
  private modelKey: string | undefined;
  private readonly server: RpcServer;
  private readonly locks: InstanceLock[] = [];
  private readonly serverRecords: ServerRecords;
  private loadProblem: LoadProblem | null = null;
  /** Built once: the document is a few hundred KB and never changes while we run. */
  private discovery: ReturnType<typeof openRpcDocument> | undefined;
  private stopping: Promise<void> | undefined;
  private resolveStopped!: () => void;
  /** Resolves once the daemon has fully stopped (by signal, by daemon.shutdown or by stop()). */
  readonly stopped = new Promise<void>((resolve) => (this.resolveStopped = resolve));

  private constructor(private readonly options: DaemonOptions) {
    const now = options.now ?? (() => new Date());
    this.startedAt = now();
    this.events = new RedactedEventHub(LIMITS.eventHistory, now, options.redactor);
    this.store = new ServiceStore(options.paths.dataDir, now);
    this.serverRecords = new ServerRecords(serverRecordsFile(options.paths), (error) =>
      options.logger.error({ err: String(error) }, 'could not update the record of running MCP servers'),
    );
    this.supervisor = new Supervisor({
      processes: this.serverRecords,
      version: options.version,
      ladder: options.ladder ?? DEFAULT_LADDER,
      searchPath: options.searchPath ?? process.env.PATH,
      emit: (event) => this.events.emit(event),
      redact: (text, edges) => (edges === undefined ? options.redactor.redact(text) : options.redactor.redactEdges(text, edges)),
      now,
      // Before the service's calls are cancelled and its connection closed: the tasks using it end as cancelled.
      onStop: (serviceId, reason) => this.sessions.cancelUsing(serviceId, reason),
    });
    this.registry = new ServiceRegistry(this.store, (change) => this.onRegistryChange(change), now);
    this.audit = new AuditLog(path.join(options.paths.dataDir, 'audit.jsonl'), (error) =>
      options.logger.error({ err: String(error) }, 'could not append to the audit log'),
    );
    this.approvals = new Approvals((announcement) => this.onApproval(announcement), now);
    this.keychain = options.keychain ?? new KeychainSecretStore();
    this.secrets = new Secrets(this.keychain, this.sessionSecrets, options.redactor);
    this.settingsFile = new SettingsFile(path.join(options.paths.dataDir, 'settings.json'));
    this.modelSettings = new ModelSettingsStore(this.settingsFile);
    this.installSettingsStore = new InstallSettingsStore(this.settingsFile, options.runtimeDirs);
    this.toolCalls = new ToolCalls({
      supervisor: this.supervisor,
      approvals: this.approvals,
      emit: (event) => this.events.emit(event),
      audit: (record) => this.audit.append(options.redactor.redactValue(record)),
      redact: (value) => options.redactor.redactValue(value),
      now,
    });
    this.installer = new Installer({
      installsDir: path.join(options.paths.dataDir, 'mcp-installs'),
      sandboxDir: path.join(options.paths.dataDir, 'npm-sandbox'),
      settings: () => this.installSettings(),
      register: (plan, command, args) => this.registerInstalled(plan, command, args),
      events: {
        progress: (plan, step, status, pid) =>
          this.events.emit({
            type: 'install.progress',
            install: { digest: plan.digest, package: plan.package, version: plan.version },
            step,
            index: STEPS.indexOf(step) + 1,
            total: STEPS.length,
            status,
            pid,
          }),
        finished: (attempt) => {
          const { logTail: _omitted, ...shown } = attemptView(attempt);
          this.events.emit({ type: 'install.finished', attempt: shown });
        },
      },
      now,
    });
    this.projects = new ProjectList(options.paths.dataDir);
    this.sourceSync = new SourceSync(
      {
        registry: this.registry,
        configDir: () => options.paths.configDir,
        projects: () => this.projects.list(),
        env: () => options.env ?? process.env,
        writeSecrets: (config, values) => this.secrets.write(config.id, launchBinding(config), values),
        eraseSecrets: (config) => this.secrets.erase(config.id, secretRefs(config)),
        stop: async (id) => {
          await this.supervisor.stop(id);
        },
        storedSecrets: async (config) => {
          const values: Record<string, string> = {};
          for (const ref of secretRefs(config)) {
            const secret = await this.sessionSecrets.get(config.id, ref.name);
            if (secret === null) return null;
            values[ref.name] = secret.value;
          }
          return values;
        },
      },
      now,
    );
    this.sessions = new Sessions({
      transcripts: new TranscriptFiles(path.join(options.paths.dataDir, 'sessions'), (record) => options.redactor.redactValue(record)),
      toolCalls: this.toolCalls,
      approvals: this.approvals,
      host: {
        listServices: () =>
          this.registry.list().map((config) => ({
            id: config.id,
            name: config.name,
            state: this.supervisor.state(config.id).status,
            env: (config.env ?? []).map((v) => v.name),
            tools: this.supervisor.tools(config.id).length,
          })),
        describe: (ref) => {
          const config = this.registry.get(ref);
          return {
            id: config.id,
            name: config.name,
            command: config.command,
            args: [...config.args],
            cwd: config.cwd,
            env: (config.env ?? []).map((v) => v.name),
            fromEnvironment: [...(config.fromEnvironment ?? [])],
            configVersion: config.configVersion,
          };
        },
        register: async (input) => {
          const config = await this.registry.register(input);
          return { id: config.id, name: config.name, configVersion: config.configVersion };
        },
        activate: (id, configVersion, signal) => this.activate(this.registry.get({ id }), configVersion, signal),
        planInstall: async (input, signal) => {
          const { plan } = await this.installer.plan(input, signal);
          await this.installer.preflight(plan);
          this.assertRoomFor(plan);
          return { digest: plan.digest, title: installTitle(plan), shown: planShown(plan) };
        },
        install: async (digest, signal) => {
          const { attempt, reused } = await this.installer.install(this.installer.getPlan(digest), signal);
          return {
            service: { id: attempt.serviceId ?? '', name: attempt.serviceName ?? '' },
            lockedPackages: attempt.lockedPackages,
            installScriptsNotRun: attempt.installScripts,
            reused,
          };
        },
      },
      activeTools: () => this.supervisor.tools(),
      settings: () => this.modelSettings.settings,
      apiKey: () => this.apiKey(),
      redact: (value) => options.redactor.redactValue(value),
      emit: (event) => this.events.emit(event),
      now,
      log: (obj, msg) => options.logger.error(obj, msg),
    });
    // Approvals never outlive what they are bound to: a service that leaves `active`
    // cancels them; a new tool list makes them stale.
    this.events.onEvent((event) => {
      if (event.type === 'service.state' && event.connection.status !== 'active') {
        this.approvals.cancelWhere(
          (a) => a.kind === 'tool_call' && a.binding.serviceId === event.service.id,
          `${event.service.name} is ${event.connection.status}`,
        );
      } else if (event.type === 'service.tools') {
        this.approvals.staleWhere(
          (a) => a.kind === 'tool_call' && a.binding.serviceId === event.service.id && a.binding.toolListVersion !== event.toolListVersion,
          `the tool list of ${event.service.name} changed`,
        );
      }
    });
    this.server = new RpcServer({
      methods: this.methodTable(),
      maxFrameBytes: LIMITS.maxControlFrameBytes,
      maxBacklogBytes: LIMITS.maxClientBacklogBytes,
      logger: options.logger,
    });
    this.events.onEvent((event, serialized) => this.server.broadcast('event', event, serialized));
  }

  get paths(): WispPaths {
    return this.options.paths;
  }

  get registryFile(): string {
    return this.store.file;
  }

  static async start(options: DaemonOptions): Promise<Daemon> {
    const daemon = new Daemon(options);
    try {
      await daemon.open();
    } catch (error) {
      await daemon.releaseLocks();
      throw error;
    }
    return daemon;
  }

  private async open(): Promise<void> {
    const { paths, logger } = this.options;
    checkSocketPath(paths.socket);
    await ensurePrivateDir(paths.dataDir, '--data-dir');
    await ensurePrivateDir(paths.runtimeDir, '--runtime-dir or --socket');
    await checkOwnFiles(paths);
    this.locks.push(await InstanceLock.acquire(path.join(paths.dataDir, 'wispd.lock'), paths.socket));
    this.locks.push(await InstanceLock.acquire(`${paths.socket}.lock`, paths.socket));
    await clearStaleSocket(paths.socket);
    await this.recoverServers();
    // Temp files of atomic writes a crash left behind (settings, sources, registry, install records).
    const swept = [...(await sweepTempFilesIn(paths.dataDir)), ...(await sweepTempFilesIn(path.join(paths.dataDir, 'mcp-installs')))];
    if (swept.length > 0) logger.info({ files: swept }, 'removed temp files left by an interrupted write');

    const loaded = await this.store.load();
    if (loaded.sweptTempFiles.length > 0) logger.info({ files: loaded.sweptTempFiles }, 'removed temp files left by an interrupted write');
    if (loaded.problem !== null) {
      this.loadProblem = loaded.problem;
      logger.error({ ...loaded.problem }, 'mcp-servers.json could not be used; moved it aside and started with an empty registry');
      this.storageWarning({
        file: this.store.file,
        problem: `${loaded.problem.code}: ${loaded.problem.message}: moved aside intact, the daemon started with an EMPTY registry (restore it by hand from the moved file)`,
        movedTo: loaded.problem.movedTo,
      });
    }
    for (const problem of this.registry.adopt(loaded.services)) this.storageWarning({ file: this.store.file, problem, movedTo: null });
    const projectsProblem = await this.projects.load();
    if (projectsProblem !== null) this.storageWarning(projectsProblem);
    try {
      const report = await this.sourceSync.sync();
      if (report.problems.length > 0 || report.skipped.length > 0) logger.warn({ problems: report.problems, skipped: report.skipped.length }, 'some config source entries were not used (wispctl mcp sources)');
    } catch (error) {
      if (error instanceof WispError && error.code === 'UNSAFE_FILE') throw error;
      logger.error({ err: String(error) }, 'the config sources could not be synced');
    }
    const settingsProblem = await this.settingsFile.load();
    if (settingsProblem !== null) this.storageWarning(settingsProblem);
    for (const problem of await this.sessions.load()) this.storageWarning(problem);
    for (const problem of await this.installer.load()) this.storageWarning(problem);

    await this.server.listen(paths.socket);
    await fs.chmod(paths.socket, 0o600);
    logger.info({ socket: paths.socket, dataDir: paths.dataDir, services: this.registry.count, version: this.options.version }, 'wispd ready');
  }

  /** A persisted file or record that was bad when read: a log line and a storage.warning event, naming the file. */
  private storageWarning(problem: StorageProblem): void {
    this.options.logger.warn({ file: problem.file, problem: problem.problem, movedTo: problem.movedTo }, `${problem.file}: ${problem.problem}`);
    this.events.emit({ type: 'storage.warning', file: problem.file, problem: problem.problem, movedTo: problem.movedTo });
  }

  /** Stops accepting, cancels in-flight work, flushes state, removes the socket. Idempotent. */
  stop(reason: string): Promise<void> {
    this.stopping ??= this.close(reason);
    return this.stopping;
  }

  private async close(reason: string): Promise<void> {
    const grace = this.options.stopGraceMs ?? 2000;
    this.options.logger.info({ reason }, 'wispd stopping');
    await this.server.stopAccepting(grace);
    this.events.emit({ type: 'daemon.stopping' });
    await this.sessions.stopAll();
    await this.installer.stopAll();
    await this.supervisor.stopAll();
    await this.serverRecords.flush();
    await this.registry.flush();
    await this.audit.close();
    await this.server.closeConnections(grace);
    await fs.rm(this.options.paths.socket, { force: true });
    await this.releaseLocks();
    this.options.logger.info({}, 'wispd stopped');
    this.resolveStopped();
  }

  /** After a crash: the MCP servers the last run left behind are stopped (never a pid reused since), and said so. */
  private async recoverServers(): Promise<void> {
    const grace = (this.options.ladder ?? DEFAULT_LADDER).termGraceMs;
    const servers = await ServerRecords.recover(serverRecordsFile(this.options.paths), grace);
    if (servers.length === 0) return;
    this.options.logger.warn({ servers }, 'an earlier run of wispd did not stop these MCP servers: stopped the ones still running');
    this.events.emit({ type: 'daemon.recovered', servers });
  }

  private async releaseLocks(): Promise<void> {
    for (const lock of this.locks.reverse()) await lock.release();
    this.locks.length = 0;
  }

  /** Trust and activate, with the service's secrets read only now (after the supervisor's checks). */
  private activate(config: StoredService, configVersion: number, signal: AbortSignal): Promise<ConnectionState> {
    return this.supervisor.activate(this.launchOf(config), configVersion, signal, async () => {
      if (config.transport !== 'http') return this.secrets.read(config.id, launchBinding(config), config.env ?? []);
      // A remote service's secrets are its header values, handed to its transport only.
      const values = await this.secrets.read(config.id, launchBinding(config), secretRefs(config));
      return Object.fromEntries(Object.entries(values).map(([name, value]) => [name.slice(HEADER_SECRET_PREFIX.length), value]));
    }, () => this.savedLogin(config));
  }

  /**
   * The service as it is launched: `${VAR}` in command, args and url filled in from the
   * daemon's environment (config sources only). The values are held by the redactor and
   * live only in memory and in the child's argv; the stored config keeps the templates.
   */
  private launchOf(config: StoredService): StoredService {
    const { config: launch, values } = expandLaunch(config, this.options.env ?? process.env);
    for (const { name, value } of values) this.options.redactor.hold(`daemon-env/${name}`, name, value);
    return launch;
  }

  /** A remote service's OAuth items in the keychain, bound to its URL: a token saved for another URL reads as absent. */
  private vault(config: StoredService): OAuthVault {
    const binding = launchBinding(config);
    return {
      get: async (name) => {
        const secret = await this.keychain.get(config.id, name);
        const value = secret !== null && secret.binding === binding ? secret.value : null;
        if (value !== null) this.holdOAuth(config.id, name, value);
        return value;
      },
      set: async (name, value) => {
        this.holdOAuth(config.id, name, value);
        await this.keychain.set(config.id, name, { value, binding });
      },
      delete: async (name) => {
        await this.keychain.delete(config.id, name);
        this.options.redactor.releaseAll(`oauth:${config.id}/${name}`);
      },
    };
  }

  /** OAuth tokens and a client secret are secrets too: held in the redactor while the keychain has them. */
  private holdOAuth(serviceId: string, item: string, value: string): void {
    const holder = `oauth:${serviceId}/${item}`;
    if (item === OAUTH_ITEMS.clientSecret) this.options.redactor.hold(holder, 'OAUTH_CLIENT_SECRET', value);
    else if (item === OAUTH_ITEMS.tokens || item === OAUTH_ITEMS.client) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(value);
      } catch {
        return;
      }
      if (typeof parsed !== 'object' || parsed === null) return;
      for (const field of ['access_token', 'refresh_token', 'id_token', 'client_secret']) {
        const v = (parsed as Record<string, unknown>)[field];
        if (typeof v === 'string') this.options.redactor.hold(`${holder}/${field}`, `OAUTH_${field.toUpperCase()}`, v);
      }
    }
  }

  /** The provider for an activation: only for an OAuth service that has logged in (tokens saved). */
  private async savedLogin(config: StoredService): Promise<VaultOAuthProvider | undefined> {
    if (config.oauth?.enabled !== true) return undefined;
    const vault = this.vault(config);
    const [tokens, redirect] = await Promise.all([vault.get(OAUTH_ITEMS.tokens), vault.get(OAUTH_ITEMS.redirect)]);
    if (tokens === null || redirect === null) return undefined;
    // A refresh that fails wants a new login: the activation then ends in needs_auth.
    return new VaultOAuthProvider(vault, { ...config.oauth, clientSecret: await this.clientSecret(config) }, redirect, () => undefined);
  }

  /** A pre-registered client's secret, when one was given (only then is the keychain asked). */
  private async clientSecret(config: StoredService): Promise<string | null> {
    if (config.oauth?.clientId == null) return null;
    return this.vault(config).get(OAUTH_ITEMS.clientSecret);
  }

  /**
   * wispctl mcp login: a loopback listener armed first, the authorization URL announced,
   * the callback's state checked, the tokens saved in the keychain, then activation.
   */
  private async login(params: Params<'services.login'>, signal: AbortSignal): Promise<Result<'services.login'>> {
    const config = this.registry.get({ id: params.id, name: params.name });
    if (config.transport !== 'http' || config.url == null) throw new WispError('INVALID_CONFIG', `${config.name} is not a remote service`, { field: 'transport' });
    if (config.oauth?.enabled !== true) {
      throw new WispError('INVALID_CONFIG', `${config.name} does not use OAuth: register it with --oauth (or "oauth": {"enabled": true} in its config file)`, { field: 'oauth' });
    }
    if (config.configVersion !== params.configVersion) {
      throw new WispError('APPROVAL_STALE', `${config.name} changed since it was shown (configVersion ${config.configVersion}); show it again`, { configVersion: config.configVersion });
    }
    const vault = this.vault(config);
    const previous = await vault.get(OAUTH_ITEMS.redirect);
    const expectedState = randomBytes(24).toString('base64url');
    const callback = await listenForCallback(expectedState, signal, previous !== null ? Number(new URL(previous).port) : 0);
    try {
      // A client registered for another loopback port cannot use this one: register again.
      if (previous !== callback.redirectUri && config.oauth.clientId === null) await vault.delete(OAUTH_ITEMS.client);
      await vault.set(OAUTH_ITEMS.redirect, callback.redirectUri);
      let authorizationUrl: URL | undefined;
      const settings = { ...config.oauth, clientSecret: await this.clientSecret(config) };
      const provider = new VaultOAuthProvider(vault, settings, callback.redirectUri, (url) => (authorizationUrl = url), expectedState);
      await vault.delete(OAUTH_ITEMS.tokens);
      // The scope: what the server last asked for (a step-up), else what it asks a newcomer, else the configured one.
      const serverUrl = this.launchOf(config).url ?? config.url;
      const challenge = await probeChallenge(serverUrl, this.options.version);
      const state = this.supervisor.state(config.id);
      const scope = (state.status === 'needs_auth' ? state.scope : null) ?? challenge.scope ?? config.oauth.scopes ?? undefined;
      const where = { serverUrl, ...(scope !== undefined ? { scope } : {}), ...(challenge.resourceMetadataUrl !== undefined ? { resourceMetadataUrl: challenge.resourceMetadataUrl } : {}) };
      const first = await authStep(() => auth(provider, where));
      if (first === 'REDIRECT') {
        if (authorizationUrl === undefined) throw new WispError('AUTH_FAILED', 'the authorization server gave no authorization URL');
        this.events.emit({ type: 'service.login', service: { id: config.id, name: config.name }, authorizationUrl: authorizationUrl.href, redirectUri: callback.redirectUri });
        let timer: NodeJS.Timeout | undefined;
        const code = await Promise.race([
          callback.code,
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new WispError('TIMEOUT', 'nobody finished the login within 10 minutes')), LOGIN_TIMEOUT_MS);
          }),
        ]).finally(() => clearTimeout(timer));
        await authStep(() => auth(provider, { ...where, authorizationCode: code }));
      }
      await vault.delete(OAUTH_ITEMS.verifier);
    } finally {
      await callback.close();
    }
    await this.activate(config, params.configVersion, signal);
    return { service: this.view(this.registry.get({ id: config.id })) };
  }

  /** A service's login, gone from the keychain (logout); with `everything`, its client secret too (the service deleted). */
  private async forgetLogin(config: StoredService, everything = false): Promise<void> {
    if (config.oauth == null) return;
    for (const name of Object.values(OAUTH_ITEMS)) {
      if (name !== OAUTH_ITEMS.clientSecret || everything) {
        await this.keychain.delete(config.id, name);
        this.options.redactor.releaseAll(`oauth:${config.id}/${name}`);
      }
    }
  }

  /**
   * services.setEnv and services.setHeaders: values first (a keychain failure changes
   * nothing), then the names, then the entries no longer wanted are erased.
   */
  private async setSecrets(
    ref: { id?: string | undefined; name?: string | undefined; mode: 'replace' | 'upsert' },
    kind: 'env' | 'headers',
    given: readonly { name: string; value: string; storage: 'keychain' | 'session' }[],
  ): Promise<{ service: Service }> {
    const target = this.registry.get({ id: ref.id, name: ref.name });
    this.assertEditable(target);
    if ((kind === 'headers') !== (target.transport === 'http')) {
      throw new WispError('INVALID_CONFIG', kind === 'headers' ? `${target.name} is a local (stdio) service: set variables, not headers` : `${target.name} is a remote (http) service: set headers, not variables`, { field: kind });
    }
    // Header names are case-insensitive; variable names are not.
    const norm = (name: string): string => (kind === 'headers' ? name.toLowerCase() : name);
    const names = given.map((v) => norm(v.name));
    const duplicate = given.find((v, i) => names.indexOf(norm(v.name)) !== i);
    if (duplicate !== undefined) throw new WispError('INVALID_CONFIG', `${duplicate.name} is given twice`, { field: kind });
    const stored = (name: string): string => (kind === 'headers' ? `${HEADER_SECRET_PREFIX}${name}` : name);
    let gone: VariableRef[] = [];
    const updated = await this.registry.update({ id: target.id }, async (config) => {
      const before: VariableRef[] = (kind === 'env' ? config.env : config.headers) ?? [];
      const kept = ref.mode === 'upsert' ? before.filter((v) => !names.includes(norm(v.name))) : [];
      const after: VariableRef[] = [...kept, ...given.map((v) => ({ name: v.name, storage: v.storage }))];
      if (after.length > LIMITS.maxEnvVars) {
        throw new WispError('LIMIT_EXCEEDED', `at most ${LIMITS.maxEnvVars} ${kind === 'env' ? 'variables' : 'headers'} per service`, { limit: 'maxEnvVars', max: LIMITS.maxEnvVars });
      }
      await this.secrets.write(config.id, launchBinding(config), given.map((v) => ({ name: stored(v.name), value: v.value, storage: v.storage })));
      gone = before.filter((old) => !after.some((v) => v.name === old.name && v.storage === old.storage)).map((v) => ({ name: stored(v.name), storage: v.storage }));
      return kind === 'env' ? { env: after } : { headers: after };
    });
    await this.secrets.erase(updated.id, gone);
    await this.supervisor.stop(updated.id);
    return { service: this.view(updated) };
  }

  /** A service from a config file is edited in the file, not here. */
  private assertEditable(config: StoredService): void {
    if (config.origin?.kind === 'source') {
      throw new WispError('INVALID_CONFIG', `${config.name} comes from ${config.origin.file}: edit that file, then run wispctl mcp reload`, { field: 'origin' });
    }
  }

  private sourcesView(): Result<'sources.list'> {
    return { configDir: this.options.paths.configDir, projects: [...this.projects.list()], report: this.sourceSync.report };
  }

  /** One-off import: each entry becomes a service registered by hand (disabled), its values in the chosen store. */
  private async importFile(params: Params<'services.import'>): Promise<Result<'services.import'>> {
    let json: unknown;
    try {
      json = JSON.parse(params.content);
    } catch (error) {
      throw new WispError('INVALID_PARAMS', `${params.file ?? 'the file'} is not valid JSON: ${(error as Error).message}`);
    }
    const doc = (typeof json === 'object' && json !== null ? json : {}) as { mcpServers?: unknown; servers?: unknown };
    const servers = doc.mcpServers ?? doc.servers;
    if (typeof servers !== 'object' || servers === null) throw new WispError('INVALID_PARAMS', `${params.file ?? 'the file'} has no mcpServers or servers object`);
    const merged = mergeSources([{ kind: 'global', file: params.file ?? 'the imported file', content: { json: { mcpServers: servers } } }], this.options.env ?? process.env);
    const imported: Service[] = [];
    const skipped = merged.skipped.map((s) => ({ name: s.name, reason: s.reason }));
    for (const entry of merged.entries) {
      try {
        const { input, values } = entryRegistration(entry, params.storage);
        const config = await this.registry.register(input);
        try {
          await this.secrets.write(config.id, launchBinding(config), values);
        } catch (error) {
          await this.registry.delete({ id: config.id });
          throw error;
        }
        imported.push(this.view(config));
      } catch (error) {
        if (error instanceof WispError && error.code === 'KEYCHAIN_UNAVAILABLE') throw error;
        skipped.push({ name: entry.name, reason: error instanceof WispError ? `${error.code}: ${error.message}` : String(error) });
      }
    }
    return { imported, skipped, warnings: merged.entries.flatMap((e) => e.warnings) };
  }

  /** The model API key: saved (keychain or session) if the user set one, else the daemon's DEEPSEEK_API_KEY. */
  private async apiKey(): Promise<string> {
    if (this.modelKey !== undefined) return this.modelKey;
    const storage = this.modelSettings.keyStorage;
    let key: string | undefined;
    if (storage !== null) {
      const store = storage === 'keychain' ? this.keychain : this.sessionSecrets;
      key = (await store.get(MODEL_KEY.owner, MODEL_KEY.name))?.value;
    } else {
      const fromEnv = (this.options.env ?? process.env).DEEPSEEK_API_KEY;
      key = fromEnv === undefined || fromEnv === '' ? undefined : fromEnv;
    }
    if (key === undefined) {
      throw new WispError(
        'MODEL_NO_KEY',
        storage === 'session'
          ? 'the model API key was kept for the last daemon run only: set it again (wispctl model set-key)'
          : 'no model API key: set one with `wispctl model set-key`, or start the daemon with DEEPSEEK_API_KEY',
      );
    }
    this.options.redactor.hold('model', 'DEEPSEEK_API_KEY', key);
    this.modelKey = key;
    return key;
  }

  private installSettings(): InstallSettings {
    return this.installSettingsStore.settings;
  }

  private installSettingsView(): Result<'installs.getSettings'>['settings'] {
    return this.installSettingsStore.view;
  }

  /** An installed server is registered DISABLED, once per plan: the same plan again finds its service. */
  private async registerInstalled(plan: InstallPlan, command: string, args: string[]): Promise<{ id: string; name: string }> {
    const existing = this.registry.list().find((s) => s.origin?.kind === 'install' && s.origin.planDigest === plan.digest);
    if (existing !== undefined) return existing;
    const taken = new Set(this.registry.list().map((s) => nameKey(s.name)));
    const config = await this.registry.register({
      name: serviceNameFor(plan.bin, (name) => taken.has(nameKey(name)) || isIdShaped(name)),
      command,
      args,
      cwd: plan.directory,
      origin: { kind: 'install', planDigest: plan.digest, package: plan.package, version: plan.version },
    });
    return config;
  }

  /** Refused before anything runs: an install whose service could not be registered. */
  private assertRoomFor(plan: InstallPlan): void {
    if (this.registry.list().some((s) => s.origin?.kind === 'install' && s.origin.planDigest === plan.digest)) return;
    if (this.registry.count >= LIMITS.maxServices) {
      throw new WispError('LIMIT_EXCEEDED', `at most ${LIMITS.maxServices} services may be registered: remove one before installing another`, {
        limit: 'maxServices',
        max: LIMITS.maxServices,
      });
    }
  }

  /** installs.start and the model's mcp_install_npm: one approval of kind install, bound to the plan digest, spent once. */
  private async approveInstall(plan: InstallPlan, requester: Approval['requester'], signal: AbortSignal): Promise<void> {
    const binding = { planDigest: plan.digest };
    const approval = this.approvals.create(
      requester,
      binding,
      {
        serviceName: 'wisp host',
        toolName: 'install',
        modelName: 'install',
        title: installTitle(plan),
        arguments: planShown(plan),
        annotations: null,
      },
      'install',
    );
    this.approvals.spend(await this.approvals.wait(approval.id, signal), binding, `the install of ${plan.package}@${plan.version}`);
  }

  private modelSettingsView(): Result<'model.getSettings'>['settings'] {
    const settings = this.modelSettings.settings;
    const storage = this.modelSettings.keyStorage;
    const fromEnv = (this.options.env ?? process.env).DEEPSEEK_API_KEY;
    return {
      baseUrl: settings.baseUrl,
      model: settings.model,
      firstByteTimeoutMs: settings.firstByteTimeoutMs,
      idleTimeoutMs: settings.idleTimeoutMs,
      maxRetries: settings.maxRetries,
      deferToolsAbove: settings.deferToolsAbove,
      key: storage ?? (fromEnv !== undefined && fromEnv !== '' ? 'environment' : 'none'),
    };
  }

  private onApproval({ type, approval }: ApprovalAnnouncement): void {
    this.events.emit({ type: type === 'requested' ? 'approval.requested' : 'approval.resolved', approval: approvalView(approval) });
    if (type === 'resolved') {
      const state = approval.state;
      void this.audit.append(this.options.redactor.redactValue({
        at: 'at' in state ? state.at : new Date().toISOString(),
        record: 'approval',
        approvalId: approval.id,
        decision: state.status,
        ...('by' in state ? { by: state.by } : {}),
        ...('reason' in state ? { reason: state.reason } : {}),
        serviceId: approval.binding.serviceId,
        service: approval.summary.serviceName,
        tool: approval.summary.toolName,
        argumentsDigest: approval.binding.argumentsDigest,
        client: approval.requester.clientId,
        session: approval.requester.sessionId,
      }));
    }
  }

  /** A configuration change stops the service at once (its tools vanish before the process does). */
  private onRegistryChange(change: RegistryChange): void {
    switch (change.type) {
      case 'registered':
        this.events.emit({ type: 'service.registered', service: this.view(change.service) });
        return;
      case 'updated':
        this.supervisor.rename(change.service.id, change.service.name);
        void this.supervisor.stop(change.service.id, false, `the service ${change.service.name} was edited`);
        this.events.emit({ type: 'service.updated', service: this.view(change.service) });
        return;
      case 'deleted':
        void this.supervisor.remove(change.service.id, `the service ${change.service.name} was deleted`);
        this.events.emit({ type: 'service.deleted', service: change.service });
        return;
    }
  }

  private view(config: StoredService): Service {
    const connection = this.supervisor.state(config.id);
    return {
      id: config.id,
      name: config.name,
      transport: config.transport ?? 'stdio',
      command: config.command,
      url: config.url ?? null,
      headers: (config.headers ?? []).map((h) => ({ name: h.name, storage: h.storage })),
      oauth: config.oauth != null ? { ...config.oauth } : null,
      args: [...config.args],
      cwd: config.cwd,
      timeoutMs: config.timeoutMs ?? null,
      env: (config.env ?? []).map((v) => ({ name: v.name, storage: v.storage })),
      fromEnvironment: [...(config.fromEnvironment ?? [])],
      origin: config.origin ?? { kind: 'manual' },
      enabled: connection.status === 'activating' || connection.status === 'active',
      configVersion: config.configVersion,
      connection,
      createdAt: config.createdAt,
      updatedAt: config.updatedAt,
    };
  }

  private methodTable(): Record<string, MethodEntry> {
    const handlers: Handlers = {
      'daemon.status': (_params, ctx) => ({
        version: this.options.version,
        protocolVersion: PROTOCOL_VERSION,
        pid: process.pid,
        runId: this.events.runId,
        startedAt: this.startedAt.toISOString(),
        uptimeMs: Math.max(0, Math.round((this.options.now?.() ?? new Date()).getTime() - this.startedAt.getTime())),
        nodeVersion: process.version,
        paths: { ...this.options.paths, registryFile: this.registryFile },
        counts: {
          services: this.registry.count,
          enabledServices: this.supervisor.runningCount,
          activeTools: this.supervisor.activeToolCount,
          clients: this.server.clientCount,
          subscribers: this.server.subscriberCount,
        },
        lastSeq: this.events.lastSeq,
        you: { clientId: clientId(ctx.connection.id) },
        registryLoadError: this.loadProblem,
      }),
      'daemon.shutdown': (_params, ctx) => {
        ctx.afterResponse(() => void this.stop('daemon.shutdown requested'));
        return { stopping: true as const };
      },
      'rpc.discover': () => (this.discovery ??= openRpcDocument(this.options.version)),
      'events.subscribe': (params, ctx) => {
        const sameRun = params.runId === undefined || params.runId === this.events.runId;
        if (sameRun && params.since !== undefined && params.since > this.events.lastSeq) {
          throw new WispError('EVENTS_UNAVAILABLE', `since ${params.since} is ahead of the newest event (${this.events.lastSeq})`, {
            lastSeq: this.events.lastSeq,
          });
        }
        // Computed and sent in the same tick as the response, so no event is missed or repeated.
        const replay = this.events.replay(params.since, params.runId);
        ctx.afterResponse(() => {
          for (const event of replay.events) ctx.connection.notify('event', event);
          ctx.connection.subscribed = true;
        });
        return { runId: this.events.runId, lastSeq: this.events.lastSeq, replayed: replay.events.length, missed: replay.missed };
      },
      'events.unsubscribe': (_params, ctx) => {
        ctx.connection.subscribed = false;
        return { subscribed: false as const };
      },
      'services.register': async (params) => ({ service: this.view(await this.registry.register(params)) }),
      'services.list': () => ({ services: this.registry.list().map((config) => this.view(config)) }),
      'services.get': (params) => ({ service: this.view(this.registry.get(params)) }),
      'services.update': async (params) => {
        this.assertEditable(this.registry.get({ id: params.id, name: params.name }));
        const config = await this.registry.update({ id: params.id, name: params.name }, params.set, params.configVersion);
        await this.supervisor.stop(config.id);
        return { service: this.view(config) };
      },
      'services.delete': async (params) => {
        // The secrets go first: if the keychain refuses, nothing is deleted.
        const deleted = await this.registry.delete(params, async (config) => {
          await this.secrets.erase(config.id, secretRefs(config));
          await this.forgetLogin(config, true);
        });
        await this.supervisor.remove(deleted.id);
        return { deleted };
      },
      'services.activate': async (params, ctx) => {
        const config = this.registry.get({ id: params.id, name: params.name });
        await this.activate(config, params.configVersion, ctx.signal);
        return { service: this.view(this.registry.get({ id: config.id })) };
      },
      'services.setEnv': (params) => this.setSecrets(params, 'env', params.variables),
      'services.setHeaders': (params) => this.setSecrets(params, 'headers', params.headers),
      'services.registerRemote': async (params) => {
        const secret = params.oauth?.clientSecret;
        if (secret !== undefined && params.oauth?.clientId === undefined) {
          throw new WispError('INVALID_CONFIG', 'a client secret goes with a pre-registered client id (--client-id)', { field: 'oauth.clientSecret' });
        }
        const config = await this.registry.register({
          name: params.name,
          transport: 'http',
          command: '',
          url: params.url,
          timeoutMs: params.timeoutMs,
          oauth: params.oauth !== undefined ? { enabled: true, clientId: params.oauth.clientId ?? null, scopes: params.oauth.scopes ?? null } : null,
        });
        if (secret !== undefined) {
          // Secret first into the keychain; if it refuses, the registration is undone.
          try {
            await this.vault(config).set(OAUTH_ITEMS.clientSecret, secret);
          } catch (error) {
            await this.registry.delete({ id: config.id });
            throw error;
          }
        }
        return { service: this.view(config) };
      },
      'services.login': (params, ctx) => this.login(params, ctx.signal),
      'services.logout': async (params) => {
        const config = this.registry.get(params);
        if (config.transport !== 'http') throw new WispError('INVALID_CONFIG', `${config.name} is not a remote service`, { field: 'transport' });
        await this.supervisor.stop(config.id);
        await this.forgetLogin(config);
        return { service: this.view(this.registry.get({ id: config.id })) };
      },
      'services.carryOverEnv': async (params) => {
        const config = this.registry.get({ id: params.id, name: params.name });
        if (config.configVersion !== params.configVersion) {
          throw new WispError('APPROVAL_STALE', `${config.name} changed since it was shown (configVersion ${config.configVersion}); show it again`, {
            configVersion: config.configVersion,
          });
        }
        this.assertEditable(config);
        await this.secrets.carryOver(config.id, launchBinding(config), config.env ?? []);
        return { service: this.view(config) };
      },
      'services.disable': async (params) => {
        const config = this.registry.get(params);
        await this.supervisor.stop(config.id, this.supervisor.state(config.id).status === 'stopping', `the service ${config.name} was disabled`);
        return { service: this.view(config) };
      },
      'services.refreshTools': async (params) => {
        const config = this.registry.get(params);
        await this.supervisor.refresh(config.id, config.name);
        return { service: this.view(config) };
      },
      'services.logs': (params) => this.supervisor.logs(this.registry.get(params).id),
      'tools.list': (params) => toolsPage(this.supervisor.tools(params.serviceId), params.cursor),
      'tools.call': (params, ctx) =>
        this.toolCalls.call({
          modelName: params.modelName,
          serviceId: params.serviceId,
          toolName: params.toolName,
          arguments: params.arguments,
          requester: { clientId: clientId(ctx.connection.id), sessionId: null, taskId: null },
          signal: ctx.signal,
        }),
      'sessions.create': async (params) => ({ session: await this.sessions.create(params.title) }),
      'sessions.list': () => ({ sessions: this.sessions.list() }),
      'sessions.get': (params) => this.sessions.get(params.id),
      'sessions.delete': async (params) => {
        await this.sessions.delete(params.id);
        return { deleted: params.id };
      },
      'sessions.send': async (params, ctx) => ({ task: await this.sessions.send(params.id, params.text, clientId(ctx.connection.id)) }),
      'sessions.cancel': async (params) => ({ task: await this.sessions.cancel(params.id) }),
      'model.getSettings': () => ({ settings: this.modelSettingsView() }),
      'model.setSettings': async (params) => {
        await this.modelSettings.update(params);
        return { settings: this.modelSettingsView() };
      },
      'model.setKey': async (params) => {
        const store = params.storage === 'keychain' ? this.keychain : this.sessionSecrets;
        if (params.value === '') {
          await store.delete(MODEL_KEY.owner, MODEL_KEY.name);
          await this.modelSettings.update({ keyStorage: null });
          this.modelKey = undefined;
          this.options.redactor.release('model');
        } else {
          await store.set(MODEL_KEY.owner, MODEL_KEY.name, { value: params.value, binding: MODEL_KEY.binding });
          this.options.redactor.hold('model', 'DEEPSEEK_API_KEY', params.value);
          await this.modelSettings.update({ keyStorage: params.storage });
          this.modelKey = params.value;
        }
        return { settings: this.modelSettingsView() };
      },
      'installs.plan': async (params, ctx) => {
        const { plan, runtime } = await this.installer.plan({ package: params.package, version: params.version, bin: params.bin, args: params.args ?? [] }, ctx.signal);
        return { plan: planView(plan, runtime) };
      },
      'installs.start': async (params, ctx) => {
        const plan = this.installer.getPlan(params.planDigest);
        await this.installer.preflight(plan);
        this.assertRoomFor(plan);
        await this.approveInstall(plan, { clientId: clientId(ctx.connection.id), sessionId: null, taskId: null }, ctx.signal);
        const outcome = await this.installer.install(plan, ctx.signal);
        return { attempt: attemptView(outcome.attempt), service: this.view(this.registry.get({ id: outcome.attempt.serviceId ?? '' })), reused: outcome.reused };
      },
      'installs.list': async () => ({ attempts: (await this.installer.list()).map(attemptView) }),
      'installs.get': async (params) => ({ attempt: attemptView(await this.installer.get(params.digest)) }),
      'installs.cancel': (params) => ({ cancelled: this.installer.cancel(params.digest) }),
      'installs.discard': async (params) => ({ discarded: attemptView(await this.installer.discard(params.digest)) }),
      'installs.getSettings': () => ({ settings: this.installSettingsView() }),
      'installs.setSettings': async (params) => {
        await this.installSettingsStore.update(params);
        return { settings: this.installSettingsView() };
      },
      'sources.list': () => this.sourcesView(),
      'sources.reload': async () => {
        await this.sourceSync.sync();
        return this.sourcesView();
      },
      'sources.addProject': async (params) => {
        await this.projects.add(params.directory);
        await this.sourceSync.sync();
        return this.sourcesView();
      },
      'sources.removeProject': async (params) => {
        await this.projects.remove(params.directory);
        await this.sourceSync.sync();
        return this.sourcesView();
      },
      'services.import': (params) => this.importFile(params),
      'approvals.list': (params) => approvalsPage(this.approvals, params),
      'approvals.respond': (params, ctx) => ({
        approval: approvalView(this.approvals.respond(params.id, params.decision, clientId(ctx.connection.id))),
      }),
    };
    const table: Record<string, MethodEntry> = {};
    for (const name of Object.keys(methods) as MethodName[]) {
      table[name] = { paramsSchema: methods[name].params, handle: redactedHandler(handlers[name] as MethodEntry['handle'], this.options.redactor), ...METHOD_TRAITS[name] };
    }
    return table;
  }
}

/** Every event passes the redactor before it is numbered, kept for replay and delivered. */
class RedactedEventHub extends EventHub {
  constructor(
    capacity: number,
    now: () => Date,
    private readonly redactor: Redactor,
  ) {
    super(capacity, now);
  }

  override emit(payload: EventPayload): WispEvent {
    return super.emit(this.redactor.redactValue(payload));
  }
}

/**
 * Every reply, and every error a method throws, passes the redactor: no known secret value
 * leaves on the socket, whichever path a string took. A synchronous handler stays synchronous.
 */
function redactedHandler(handle: MethodEntry['handle'], redactor: Redactor): MethodEntry['handle'] {
  const redactError = (error: unknown): never => {
    if (error instanceof WispError) throw new WispError(error.code, redactor.redact(error.message), redactor.redactValue(error.details));
    throw error;
  };
  return (params, ctx) => {
    let out: unknown;
    try {
      out = handle(params, ctx);
    } catch (error) {
      return redactError(error);
    }
    if (out instanceof Promise) return out.then((value: unknown) => redactor.redactValue(value), redactError);
    return redactor.redactValue(out);
  };
}
/** How the socket server treats some methods (see MethodEntry). */
const METHOD_TRAITS: Partial<Record<MethodName, Omit<MethodEntry, 'paramsSchema' | 'handle'>>> = {
  'rpc.discover': { staticResult: true },
  'tools.call': { tooDeep: 'INVALID_ARGUMENTS', waits: true },
  'installs.start': { waits: true },
};

function toolInfo(tool: CatalogTool): ToolInfo {
  return {
    serviceId: tool.serviceId,
    serviceName: tool.serviceName,
    name: tool.name,
    modelName: tool.modelName,
    title: tool.title,
    description: tool.description,
    inputSchema: tool.inputSchema,
    annotations: tool.annotations,
    generation: tool.generation,
    toolListVersion: tool.toolListVersion,
  };
}

function installTitle(plan: InstallPlan): string {
  return `Install ${plan.package}@${plan.version} from ${plan.registry} into ${plan.directory} and register it DISABLED (no install scripts run)`;
}

type PlanShown = Omit<Result<'installs.plan'>['plan'], 'digest' | 'runtime'>;

/** What a human sees before approving an install. */
function planShown(plan: InstallPlan): PlanShown {
  return {
    package: plan.package,
    version: plan.version,
    bin: plan.bin,
    args: [...plan.args],
    registry: plan.registry,
    directory: plan.directory,
    will: [...plan.will],
    wont: [...plan.wont],
  };
}

function planView(plan: InstallPlan, runtime: Runtime): Result<'installs.plan'>['plan'] {
  return {
    digest: plan.digest,
    ...planShown(plan),
    runtime: { node: runtime.node, nodeVersion: runtime.nodeVersion, npmVersion: runtime.npmVersion },
  };
}


/** Every secret a service has in the stores: its variables, and (http) its header values. */
function secretRefs(config: StoredService): VariableRef[] {
  return [...(config.env ?? []), ...(config.headers ?? []).map((h) => ({ name: `${HEADER_SECRET_PREFIX}${h.name}`, storage: h.storage }))];
}

/** An SDK auth() step; what it throws (network, a refused exchange) becomes AUTH_FAILED. */
async function authStep<T>(step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    if (error instanceof WispError) throw error;
    throw new WispError('AUTH_FAILED', `the OAuth flow failed: ${error instanceof Error ? error.message : String(error)}`);
  }
}

function clientId(connectionId: number): string {
  return `client-${connectionId}`;
}

/** One page of tools.list: bounded in bytes, so its reply always fits a frame (at least one tool per page). */
function toolsPage(tools: readonly CatalogTool[], cursor: string | undefined): Result<'tools.list'> {
  const start = cursor === undefined ? 0 : Number(cursor);
  const page: ToolInfo[] = [];
  let bytes = 0;
  let next = start;
  for (; next < tools.length; next++) {
    const info = toolInfo(tools[next] as CatalogTool);
    const size = Buffer.byteLength(JSON.stringify(info));
    if (page.length > 0 && bytes + size > LIMITS.maxPageBytes) break;
    page.push(info);
    bytes += size;
  }
  return { tools: page, nextCursor: next < tools.length ? String(next) : null };
}

/** One page of approvals.list: bounded in count and in bytes, so its reply always fits a frame. */
function approvalsPage(approvals: Approvals, params: Params<'approvals.list'>): Result<'approvals.list'> {
  const limit = Math.min(params.limit ?? LIMITS.maxApprovalsPage, LIMITS.maxApprovalsPage);
  const candidates = approvals.listAfter(params.all === true ? 'all' : 'open', params.cursor === undefined ? 0 : Number(params.cursor));
  const page: ApprovalView[] = [];
  let bytes = 0;
  let last = 0;
  for (const { approval, position } of candidates) {
    if (page.length >= limit) break;
    const view = approvalView(approval);
    const size = Buffer.byteLength(JSON.stringify(view));
    if (page.length > 0 && bytes + size > LIMITS.maxPageBytes) break;
    page.push(view);
    bytes += size;
    last = position;
  }
  return { approvals: page, nextCursor: page.length < candidates.length ? String(last) : null };
}

function approvalView(approval: Approval): ApprovalView {
  return {
    id: approval.id,
    kind: approval.kind,
    requester: { ...approval.requester },
    binding: { ...approval.binding },
    summary: { ...approval.summary },
    createdAt: approval.createdAt,
    state: { ...approval.state },
  };
}
