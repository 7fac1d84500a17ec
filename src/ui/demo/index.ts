import { WispError, servicesSummary, type DaemonStatus, type WispEvent } from '../../core/index.js';
import type { PanelBackend } from '../backend.js';
import { DemoChat } from './chat.js';
import { DemoInstalls } from './installs.js';
import { oneOf, text, type Params } from './params.js';
import { SERVICE_METHODS, activate, addStdio } from './services.js';
import { DemoSources } from './sources.js';
import { DemoWorld, PANEL_CLIENT_ID } from './world.js';

const NOWHERE = '(demo: nothing on disk)';

/**
 * `wispctl ui --demo`: an in-memory daemon behind the same panel, for trying it without
 * risk. Sample services (a command named fail shows a start failure), a scripted model, the
 * conversational install -> separate activation -> call approvals. It never starts a
 * process, reads or writes a file, opens a socket or touches the keychain.
 */
export class DemoDaemon implements PanelBackend {
  readonly demo = true;
  private readonly world = new DemoWorld();
  private readonly installs = new DemoInstalls(this.world);
  private readonly chat = new DemoChat(this.world, this.installs);
  private readonly sources = new DemoSources(this.world);
  private readonly methods: Readonly<Record<string, (p: Params) => unknown>>;

  private constructor() {
    const world = this.world;
    this.methods = {
      ...Object.fromEntries(Object.entries(SERVICE_METHODS).map(([name, handler]) => [name, (p: Params) => handler(world, p)])),
      'daemon.status': () => this.status(),
      'events.subscribe': () => ({ runId: world.runId, lastSeq: world.lastSeq, replayed: 0, missed: false }),
      'approvals.list': () => ({ approvals: [...world.approvals.values()].map((o) => o.approval).filter((a) => a.state.status === 'pending'), nextCursor: null }),
      'approvals.respond': (p) => ({ approval: world.respond(text(p, 'id', 128), oneOf(p, 'decision', ['approve', 'deny'] as const), PANEL_CLIENT_ID) }),
      'installs.plan': (p) => this.installs.plan(p),
      'installs.start': (p) => this.installs.start(p),
      'installs.list': () => this.installs.list(),
      'installs.get': (p) => this.installs.get(p),
      'sources.list': () => this.sources.view(),
      'sources.reload': () => this.sources.view(),
      'sources.addProject': (p) => this.sources.addProject(p),
      'sources.removeProject': (p) => this.sources.removeProject(p),
      'sessions.list': () => this.chat.list(),
      'sessions.create': (p) => this.chat.create(p),
      'sessions.get': (p) => this.chat.get(p),
      'sessions.send': (p) => this.chat.send(p),
      'sessions.cancel': (p) => this.chat.cancel(p),
      'sessions.delete': (p) => this.chat.delete(p),
      'services.checkKeychain': () => ({ available: false, reason: 'the demo never touches the keychain' }),
      // No demo server asks for input.
      'elicitations.list': () => ({ elicitations: [] }),
    };
  }

  /** The demo with its samples in place: one active service, one whose command is fail, one remote. */
  static async start(): Promise<DemoDaemon> {
    const demo = new DemoDaemon();
    const notes = addStdio(demo.world, { name: 'notes', command: '/usr/local/bin/notes-mcp', args: ['--dir', '/home/you/notes'], cwd: '/home/you' });
    addStdio(demo.world, { name: 'broken', command: 'fail', args: [], cwd: null });
    demo.methods['services.registerRemote']?.({ name: 'tickets', url: 'https://tickets.example/mcp' });
    demo.sources.seed();
    await activate(demo.world, notes, notes.configVersion);
    return demo;
  }

  call(method: string, params: object): Promise<unknown> {
    const handler = this.methods[method];
    if (handler === undefined) return Promise.reject(new WispError('METHOD_NOT_FOUND', `the demo has no ${method.slice(0, 64)}`));
    // A refusal thrown at once becomes a rejection, as the daemon's answer would be.
    return Promise.resolve().then(() => handler(params as Params));
  }

  onEvent(listener: (event: WispEvent) => void): () => void {
    return this.world.onEvent(listener);
  }

  onClose(): void {
    // The demo ends only with close(): there is no daemon to go away.
  }

  close(): Promise<void> {
    this.world.close();
    return Promise.resolve();
  }

  private status(): DaemonStatus {
    const services = [...this.world.services.values()];
    return {
      version: 'demo',
      protocolVersion: 'demo',
      pid: process.pid,
      runId: this.world.runId,
      startedAt: this.world.startedAt,
      uptimeMs: Date.now() - Date.parse(this.world.startedAt),
      nodeVersion: process.version,
      paths: { dataDir: NOWHERE, configDir: NOWHERE, runtimeDir: NOWHERE, socket: NOWHERE, registryFile: NOWHERE },
      counts: {
        services: services.length,
        enabledServices: services.filter((s) => s.enabled).length,
        activeTools: [...this.world.tools.values()].flat().length,
        clients: 1,
        subscribers: 1,
      },
      services: servicesSummary(services),
      load: { connections: 1, heldFrameBytes: 0, pendingCalls: 0, gateways: 0, gatewayConnections: 0, gatewayPendingCalls: 0 },
      lastSeq: this.world.lastSeq,
      you: { clientId: PANEL_CLIENT_ID },
      registryLoadError: null,
      sourceProblems: [],
    };
  }
}
