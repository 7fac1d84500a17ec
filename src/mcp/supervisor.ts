import { isoTime, type CallSignal } from '../util/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { LIMITS, WispError, isErrorCode, transition, type ConnectionEvent, type ConnectionState, type ErrorCode, type ToolWarning, isRemoteTransport } from '../core/index.js';
import type { Connection, ConnectionHooks } from './connection.js';
import { Failure } from './failure.js';
import { StderrTail, type Redact } from './stderr-tail.js';
import type { StoredService } from './service-store.js';
import type { StopLadder } from './stdio-transport.js';
import type { CatalogTool } from './tool-catalog.js';
import { ToolPins, launchDigest } from './tool-pins.js';
import { chooseReviewed, heldReview, type HeldReview, type ReviewedTool } from './tool-review.js';
import { toolWarnings, type OtherTool } from './tool-warnings.js';
import type { BearerSource } from './http-transport.js';
import type { TransportFactory } from './transports.js';
import type { OutboundRules } from './outbound.js';
import type { Sandboxes } from './sandbox/sandboxes.js';
import type { CallClock } from './call-clock.js';
import type { Elicitations } from './elicitations.js';
import type { ServerNotices } from './server-notices.js';
import { elicitSink, failureEvent, trackerFor } from './supervisor-links.js';
import type { McpEvent } from './events.js';

export interface SupervisorOptions {
  readonly version: string;
  readonly ladder: StopLadder;
  /** The daemon's PATH, for bare command names. */
  readonly searchPath: string | undefined;
  /** Where connection changes and tool lists are announced. */
  readonly publish: (event: McpEvent) => void;
  /** Known secret values out of a text; with `edges`, pieces of them at a cut too. */
  readonly redact: Redact;
  readonly now: () => Date;
  /** A service starts stopping (disabled, edited, deleted...), with why: told before its calls are cancelled and its connection closed, so what uses it can end first. */
  readonly onStop?: (serviceId: string, reason: string) => void;
  /** Told when a service's server process group starts and when it is empty again (crash recovery records). */
  readonly processes?: {
    started(serviceId: string, name: string, pid: number): void;
    ended(pid: number): void;
  };
  /** How servers are reached (default: local servers spawned, remote ones over streamable HTTP). */
  readonly transports?: TransportFactory;
  /** The default transports' outbound rules (outbound.ts: a test seam; none in production) and the sandbox sandboxed services run in. */
  readonly outbound?: OutboundRules | undefined;
  readonly sandbox?: Sandboxes | undefined;
  /** The tool pins (default: kept in memory only). */
  readonly pins?: ToolPins;
  /** Where servers' elicitation requests go (none: no server is told we can answer one); their log messages and changes (none: not relayed). */
  readonly elicitations?: Elicitations | undefined;
  readonly notices?: ServerNotices | undefined;
}

/** stderr kept per service, in characters. */
export const STDERR_TAIL_CHARS = 64 * 1024;

interface Entry {
  readonly id: string;
  name: string;
  state: ConnectionState;
  generation: number;
  connection: Connection | undefined;
  activation: AbortController | undefined;
  stopping: Promise<void> | undefined;
  stderr: StderrTail;
  /** The latest tool-list version, so a new connection goes on counting (a version is never reused in a run). */
  toolListVersion: number;
  /** The latest write of its pins (a discovery that pinned or dropped some): done, and its failure handled. */
  pinsSaved?: Promise<void> | undefined;
}

/**
 * Runs services: one entry per service that was ever activated in this daemon run, holding
 * its connection state and current connection, and the catalog of active tools. Nothing
 * starts here unless `activate` is called; nothing is ever restarted automatically.
 */
export class Supervisor {
  private readonly entries = new Map<string, Entry>();
  /** The trusted tools: the only ones offered to models and callable. */
  private readonly catalog = new Map<string, CatalogTool>();
  /** Tools changed or added since the pins: listed for humans, reachable by nothing else until accepted. */
  private readonly held = new Map<string, CatalogTool>();
  /** Moves whenever a tool enters or leaves catalog or held: the warnings cached below are of an older set of names. */
  private namesRevision = 0;
  /** Each tool's warnings, computed once per set of names (they were computed for every call: 11 KB of garbage each). */
  private readonly warningsCache = new WeakMap<CatalogTool, { revision: number; warnings: ToolWarning[] }>();
  readonly pins: ToolPins;
  private readonly background = new Set<Promise<void>>();
  private readonly startedAt: string;

  constructor(private readonly options: SupervisorOptions) {
    this.startedAt = options.now().toISOString();
    this.pins = options.pins ?? new ToolPins({ dataDir: undefined, now: options.now, onProblem: () => undefined, onWriteError: () => undefined });
  }

  /** `registeredAt`: when the service was registered; a service not started in this run is disabled since then, or since the daemon started. */
  state(id: string, registeredAt?: string): ConnectionState {
    return this.entries.get(id)?.state ?? { status: 'disabled', since: this.idleSince(registeredAt) };
  }

  private idleSince(registeredAt: string | undefined): string {
    return registeredAt !== undefined && registeredAt > this.startedAt ? registeredAt : this.startedAt;
  }

  /** The trusted tools that can be called (not unavailable): what models and MCP clients are offered. */
  get activeToolCount(): number {
    let count = 0;
    for (const tool of this.catalog.values()) if (tool.unavailable === null) count += 1;
    return count;
  }

  get runningCount(): number {
    let count = 0;
    for (const entry of this.entries.values()) if (entry.state.status === 'activating' || entry.state.status === 'active') count += 1;
    return count;
  }

  /** The trusted tools that can be called (of one service, or all): what models are offered and calls may reach. */
  tools(serviceId?: string): CatalogTool[] {
    return [...this.catalog.values()].filter((tool) => tool.unavailable === null && (serviceId === undefined || tool.serviceId === serviceId));
  }

  /** The trusted tools that cannot be called (a tool that requires MCP tasks): listed for humans with why, offered to no one. */
  unavailableTools(serviceId?: string): CatalogTool[] {
    return [...this.catalog.values()].filter((tool) => tool.unavailable !== null && (serviceId === undefined || tool.serviceId === serviceId));
  }

  /** The held tools (changed or added since the pins), for humans to review. */
  heldTools(serviceId?: string): CatalogTool[] {
    return [...this.held.values()].filter((tool) => serviceId === undefined || tool.serviceId === serviceId);
  }

  /** Every tool with its pin status and availability, trusted first: what front-ends list. */
  listed(serviceId?: string): CatalogTool[] {
    return [...this.tools(serviceId), ...this.unavailableTools(serviceId), ...this.heldTools(serviceId)];
  }

  /** A tool that cannot be called (trusted or held), by model name or by service and own name: only so that a call on it is told why. */
  unavailableTool(modelName: string | undefined, serviceId?: string, name?: string): CatalogTool | undefined {
    for (const tool of [...this.catalog.values(), ...this.held.values()]) {
      if (tool.unavailable === null) continue;
      if (modelName !== undefined ? tool.modelName === modelName : tool.serviceId === serviceId && tool.name === name) return tool;
    }
    return undefined;
  }

  /** A held tool by model name, or by service and own name: only so that a call on it is told why it is refused. */
  heldTool(modelName: string | undefined, serviceId?: string, name?: string): CatalogTool | undefined {
    if (modelName !== undefined) return this.held.get(modelName);
    for (const tool of this.held.values()) if (tool.serviceId === serviceId && tool.name === name) return tool;
    return undefined;
  }

  /** Warnings about a tool's text: hidden characters, names of other services' tools (as the catalog is now). */
  warnings(tool: CatalogTool): ToolWarning[] {
    const cached = this.warningsCache.get(tool);
    if (cached?.revision === this.namesRevision) return cached.warnings;
    const others: OtherTool[] = [...this.catalog.values(), ...this.held.values()].filter((other) => other.serviceId !== tool.serviceId);
    const warnings = toolWarnings(tool.definition, others);
    this.warningsCache.set(tool, { revision: this.namesRevision, warnings });
    return warnings;
  }

  /** What a human reviews before accepting: each held tool against its pin. */
  review(serviceId: string, name: string): HeldReview {
    const entry = this.entries.get(serviceId);
    if (entry?.state.status !== 'active') {
      throw new WispError('SERVICE_NOT_ACTIVE', `${name} is not active (${this.state(serviceId).status})`, { status: this.state(serviceId).status });
    }
    return heldReview(entry.state, this.heldTools(serviceId), this.pins, (tool) => this.warnings(tool));
  }

  /**
   * A human accepts the held tools named, each as reviewed (its digest), of exactly
   * `toolListVersion`: pinned as they are now (written first), then moved to the trusted
   * catalog. The digests bind it to what was shown: versions count anew in each daemon run.
   */
  async accept(serviceId: string, name: string, toolListVersion: number, reviewed: readonly ReviewedTool[]): Promise<{ accepted: string[]; stillHeld: number }> {
    const entry = this.entries.get(serviceId);
    if (entry?.state.status !== 'active') {
      throw new WispError('SERVICE_NOT_ACTIVE', `${name} is not active (${this.state(serviceId).status})`, { status: this.state(serviceId).status });
    }
    if (entry.state.toolListVersion !== toolListVersion || entry.connection?.isChanging === true) {
      throw new WispError('APPROVAL_STALE', `the tool list of ${name} changed since version ${toolListVersion} (now ${entry.state.toolListVersion}): review it again`, {
        toolListVersion: entry.state.toolListVersion,
      });
    }
    const chosen = chooseReviewed(name, this.heldTools(serviceId), reviewed);
    await this.pins.accept(serviceId, chosen);
    // Whatever is held now (a new list may have come meanwhile) and matches its pin is trusted.
    for (const tool of this.heldTools(serviceId)) {
      if (this.pins.pinned(serviceId, tool.name)?.digest !== tool.pinDigest) continue;
      this.held.delete(tool.modelName);
      this.catalog.set(tool.modelName, { ...tool, pin: 'trusted' });
      this.namesRevision += 1;
    }
    const accepted = chosen.map((tool) => tool.name);
    this.options.publish({ kind: 'tools.accepted', service: { id: serviceId, name: entry.name }, toolListVersion, accepted });
    return { accepted, stillHeld: this.heldTools(serviceId).length };
  }

  /** A callable tool by model name (trusted, not unavailable). */
  tool(modelName: string): CatalogTool | undefined {
    const tool = this.catalog.get(modelName);
    return tool?.unavailable === null ? tool : undefined;
  }

  /** A service's callable tool by its own name (no list is built: this is on every call's path). */
  toolOf(serviceId: string, name: string): CatalogTool | undefined {
    for (const tool of this.catalog.values()) if (tool.serviceId === serviceId && tool.name === name) return tool.unavailable === null ? tool : undefined;
    return undefined;
  }

  logs(id: string): { stderr: string; droppedChars: number } {
    const entry = this.entries.get(id);
    if (entry === undefined) return { stderr: '', droppedChars: 0 };
    const { text, droppedChars } = entry.stderr.snapshot();
    return { stderr: text, droppedChars };
  }

  /**
   * Trust and activate, bound to the configVersion the human was shown. Resolves with the
   * resulting state once activation has ended (active, or failed with the process gone).
   */
  async activate(
    config: StoredService,
    configVersion: number,
    signal: AbortSignal,
    loadEnv: () => Promise<Record<string, string>> = () => Promise.resolve({}),
    /** A remote service with OAuth: its saved login (none: no login yet). */
    loadAuth: () => Promise<BearerSource | undefined> = () => Promise.resolve(undefined),
    /** What the tool pins are bound to: the launch as stored (default: as given). */
    trust: string = launchDigest(config),
  ): Promise<ConnectionState> {
    if (config.configVersion !== configVersion) {
      throw new WispError(
        'APPROVAL_STALE',
        `${config.name} was edited since it was shown (configVersion ${config.configVersion}, not ${configVersion}); show its command, args and cwd again`,
        { id: config.id, configVersion: config.configVersion },
      );
    }
    const entry = this.entryFor(config);
    if (entry.state.status === 'active') return entry.state;
    if (entry.state.status === 'activating' || entry.state.status === 'stopping') {
      throw new WispError('SERVICE_BUSY', `${config.name} is ${entry.state.status}`, { status: entry.state.status });
    }
    // Secrets are read only now, after the checks, and only for a service that has variables.
    const env = await loadEnv();
    const bearer = isRemoteTransport(config.transport) ? await loadAuth() : undefined;
    // Loaded with the first activation: the MCP SDK, zod and the schema compilers behind it
    // are most of the daemon's start-up cost, and no service is active when it starts.
    const [{ Connection }, { defaultTransports }] = await Promise.all([import('./connection.js'), import('./transports.js')]);
    await this.pins.prepare(config.id, trust);
    if (statusOf(entry) !== 'disabled' && statusOf(entry) !== 'failed' && statusOf(entry) !== 'needs_auth') {
      throw new WispError('SERVICE_BUSY', `${config.name} is ${entry.state.status}`, { status: entry.state.status });
    }
    entry.generation += 1;
    entry.stderr = new StderrTail(STDERR_TAIL_CHARS, this.options.redact);
    const connection = new Connection(config, entry.generation, this.hooks(entry, entry.generation), {
      version: this.options.version,
      ladder: this.options.ladder,
      stderr: entry.stderr,
      searchPath: this.options.searchPath,
      env,
      bearer,
      redact: this.options.redact,
      tracker: trackerFor(this.options.processes, config),
      transports: this.options.transports ?? defaultTransports(this.options.outbound, this.options.sandbox),
      toolListVersionBase: entry.toolListVersion,
      elicit: elicitSink(this.options.elicitations, entry),
      notices: this.options.notices?.sink(entry),
    });
    entry.connection = connection;
    const controller = new AbortController();
    entry.activation = controller;
    this.apply(entry, { type: 'activate', generation: entry.generation });
    try {
      await connection.activate(AbortSignal.any([signal, controller.signal]));
      // The pins of a first discovery are on disk before activation is reported (or it failed with STORAGE_FAILED).
      await entry.pinsSaved;
    } catch (error) {
      const failure = error instanceof Failure ? error : new Failure('INTERNAL_ERROR', String(error));
      // Re-read the state: stop() or a failure hook may have moved it meanwhile.
      if (this.isCurrent(entry, connection) && statusOf(entry) === 'activating') {
        this.withdraw(entry.id);
        await connection.stop(true);
        if (this.isCurrent(entry, connection) && statusOf(entry) === 'activating') {
          this.apply(entry, failureEvent(failure));
        }
      }
    } finally {
      if (entry.activation === controller) entry.activation = undefined;
    }
    return entry.state;
  }

  /**
   * Stops a service: tools withdrawn at once, its approvals cancelled (by the state event),
   * the users of it told (`onStop`), its running calls cancelled with `reason` (the server
   * gets notifications/cancelled, the callers CANCELLED), then the stop ladder. `force` (a
   * second request from a human) skips to SIGKILL; otherwise a stop under way is joined.
   */
  async stop(id: string, force = false, reason?: string): Promise<ConnectionState> {
    const entry = this.entries.get(id);
    if (entry === undefined || entry.state.status === 'disabled') return this.state(id);
    if (entry.state.status === 'stopping') {
      if (force) void entry.connection?.stop(true);
      await entry.stopping;
      return entry.state;
    }
    this.withdraw(id);
    entry.activation?.abort();
    this.apply(entry, { type: 'stop' });
    const connection = entry.connection;
    const why = reason ?? `the service ${entry.name} was stopped`;
    this.options.onStop?.(id, why);
    connection?.cancelCalls(why);
    entry.stopping = (async () => {
      await connection?.stop(force);
      this.apply(entry, { type: 'stopped' });
    })();
    await entry.stopping;
    entry.stopping = undefined;
    return entry.state;
  }

  /** A logout: the service, stopped, waits in needs_auth (a call to it then asks for a login). */
  async loggedOut(config: StoredService, message: string): Promise<ConnectionState> {
    await this.stop(config.id);
    const entry = this.entryFor(config);
    if (entry.state.status === 'disabled') this.apply(entry, { type: 'needs_auth', authorizationServer: null, scope: null, message });
    return entry.state;
  }

  async refresh(id: string, name: string): Promise<ConnectionState> {
    const entry = this.entries.get(id);
    if (entry?.state.status !== 'active' || entry.connection === undefined) {
      throw new WispError('SERVICE_NOT_ACTIVE', `${name} is not active (${this.state(id).status})`, { status: this.state(id).status });
    }
    await entry.connection.refresh();
    return entry.state;
  }

  /** Keeps the name used in events current after a rename. */
  rename(id: string, name: string): void {
    const entry = this.entries.get(id);
    if (entry !== undefined) entry.name = name;
  }

  async remove(id: string, reason?: string): Promise<void> {
    await this.stop(id, false, reason);
    this.entries.delete(id);
  }

  /** Daemon shutdown: every service down the ladder, in parallel. */
  async stopAll(): Promise<void> {
    await Promise.all([...this.entries.keys()].map((id) => this.stop(id)));
    await Promise.all([...this.background]);
  }

  private hooks(entry: Entry, generation: number): ConnectionHooks {
    const current = (): boolean => entry.generation === generation && entry.stopping === undefined;
    return {
      spawned: (pid) => {
        if (current() && entry.state.status === 'activating') this.apply(entry, { type: 'spawned', pid });
      },
      initialized: () => {
        if (current() && entry.state.status === 'activating') this.apply(entry, { type: 'initialized' });
      },
      discovered: (tools, server, toolListVersion) => {
        if (!current()) return;
        const others = this.catalog.size + this.held.size - this.listed(entry.id).length;
        if (others + tools.length > LIMITS.maxActiveTools) {
          const message = `${entry.name} offers ${tools.length} tools and ${others} are already active (at most ${LIMITS.maxActiveTools} in total)`;
          throw new WispError('LIMIT_EXCEEDED', message, { limit: 'maxActiveTools', max: LIMITS.maxActiveTools });
        }
        const { tools: classified, added, changed, saved } = this.pins.classify(entry.id, tools);
        // Pins that cannot be written would let a changed tool pass as trusted after a restart: the service stops instead.
        if (saved !== undefined) {
          entry.pinsSaved = saved.then((error) => {
            if (error !== undefined && current()) this.fail(entry, new Failure(error.code, error.message));
          });
        }
        this.withdraw(entry.id);
        for (const tool of classified) (tool.pin === 'trusted' ? this.catalog : this.held).set(tool.modelName, tool);
        this.namesRevision += 1;
        entry.toolListVersion = toolListVersion;
        this.apply(entry, { type: 'discovered', toolCount: tools.length, toolListVersion, server });
        const service = { id: entry.id, name: entry.name };
        this.options.publish({ kind: 'tools.discovered', service, toolListVersion, toolCount: tools.length });
        if (added.length + changed.length > 0) this.options.publish({ kind: 'tools.held', service, toolListVersion, added, changed });
      },
      failed: (failure) => {
        if (current()) this.fail(entry, failure);
      },
    };
  }

  /** Withdraws the tools, marks the service failed (or needs_auth) and takes the process down the ladder. */
  private fail(entry: Entry, failure: Failure): void {
    if (entry.state.status !== 'active' && entry.state.status !== 'activating') return;
    this.withdraw(entry.id);
    this.apply(entry, failureEvent(failure));
    const connection = entry.connection;
    if (connection !== undefined) {
      const stopping = connection.stop(false).finally(() => this.background.delete(stopping));
      this.background.add(stopping);
    }
  }

  /** The active connection of a service, for a request of what it offers besides tools (offerings.ts); SERVICE_NOT_ACTIVE otherwise. */
  activeConnection(serviceId: string, name: string): Connection {
    const entry = this.entries.get(serviceId);
    if (entry?.state.status === 'active' && entry.connection !== undefined) return entry.connection;
    throw new WispError('SERVICE_NOT_ACTIVE', `${name} is not active (${this.state(serviceId).status}): activate it with wispctl mcp activate ${name}`, { status: this.state(serviceId).status });
  }

  /** Sends a call on the connection the tool came from, refused unless that exact generation is still the active one. `abort`: aborts `signal`, when the signal belongs to this call alone (see CallRequest.abort); `clock`: the call's time limit. */
  callTool(tool: CatalogTool, args: Record<string, unknown>, signal: CallSignal, abort?: (reason: unknown) => void, clock?: CallClock): Promise<CallToolResult> {
    const entry = this.entries.get(tool.serviceId);
    const connection = entry?.connection;
    if (entry?.state.status !== 'active' || entry.generation !== tool.generation || connection === undefined) {
      return Promise.reject(new WispError('SERVICE_NOT_ACTIVE', `${tool.serviceName} is no longer active on the connection this tool came from`));
    }
    return connection.callTool(tool.name, args, connection.config.timeoutMs ?? LIMITS.defaultTimeoutMs, signal, tool.toolListVersion, abort, clock);
  }

  /** Whether the tool list of the connection `tool` came from is changing (declared changed, the new one not in). */
  changing(tool: CatalogTool): boolean {
    const entry = this.entries.get(tool.serviceId);
    return entry?.generation === tool.generation && entry.connection?.isChanging === true;
  }

  /** Whether `settled` would resolve at once: `tool`'s connection is the live one, and its list is steady. */
  steady(tool: CatalogTool): boolean {
    const entry = this.entries.get(tool.serviceId);
    return entry?.generation === tool.generation && entry.connection?.isSettled === true;
  }

  /**
   * Resolves once the tool list of the connection `tool` came from is not changing (at once
   * when it is not, or when that connection is gone: the call's own checks then refuse it).
   * Rejects with the refresh's error when the new list could not be had.
   */
  async settled(tool: CatalogTool, signal: CallSignal): Promise<void> {
    const entry = this.entries.get(tool.serviceId);
    const connection = entry?.connection;
    if (entry?.generation !== tool.generation || connection === undefined) {
      // The connection already ended (a failed refresh may have ended it before this wait
      // began): the call hears why, as a waiter that came earlier would have.
      if (entry?.generation === tool.generation && entry.state.status === 'failed') throw new Failure(isErrorCode(entry.state.code) ? entry.state.code : 'SERVER_EXITED', entry.state.message);
      return;
    }
    await connection.settled(signal);
  }

  /** A call was cancelled or timed out: close that connection (the service must be activated again). */
  failConnection(serviceId: string, generation: number, code: ErrorCode, message: string): void {
    const entry = this.entries.get(serviceId);
    if (entry?.generation === generation) this.fail(entry, new Failure(code, message));
  }

  private isCurrent(entry: Entry, connection: Connection): boolean {
    return entry.connection === connection && entry.stopping === undefined;
  }

  private entryFor(config: StoredService): Entry {
    let entry = this.entries.get(config.id);
    if (entry === undefined) {
      entry = {
        id: config.id,
        name: config.name,
        state: { status: 'disabled', since: this.idleSince(config.createdAt) },
        generation: 0,
        connection: undefined,
        activation: undefined,
        stopping: undefined,
        stderr: new StderrTail(STDERR_TAIL_CHARS, this.options.redact),
        toolListVersion: 0,
      };
      this.entries.set(config.id, entry);
    }
    if (entry.name !== config.name) this.namesRevision += 1; // a warning names the other tool's service
    entry.name = config.name;
    return entry;
  }

  private withdraw(serviceId: string): void {
    this.namesRevision += 1;
    for (const [modelName, tool] of this.catalog) if (tool.serviceId === serviceId) this.catalog.delete(modelName);
    for (const [modelName, tool] of this.held) if (tool.serviceId === serviceId) this.held.delete(modelName);
  }

  private apply(entry: Entry, event: ConnectionEvent): void {
    entry.state = transition(entry.state, event, isoTime(this.options.now()));
    this.options.publish({ kind: 'connection.changed', service: { id: entry.id, name: entry.name }, state: entry.state });
  }
}

function statusOf(entry: Entry): ConnectionState['status'] {
  return entry.state.status;
}
