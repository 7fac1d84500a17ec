import { promises as fs } from 'node:fs';
import path from 'node:path';
import { RpcServer, checkSocketPath, pointerFile, pointerText, type WispPaths } from '../control/index.js';
import { LIMITS } from '../core/index.js';
import type { LoadProblem } from '../mcp/index.js';
import { sweepTempFilesIn, writeFileAtomic, type StorageProblem } from '../util/index.js';
import { compose } from './compose.js';
import { checkOwnFiles, clearStaleSocket, ensurePrivateDir, serverRecordsFile } from './directories.js';
import { handlers, methodTable, type DaemonParts } from './handlers/index.js';
import { InstanceLock } from './instance-lock.js';
import { DEFAULT_LADDER, type DaemonOptions } from './options.js';
import { ServerRecords } from './server-records.js';
import { clientId } from './views.js';

export { DEFAULT_LADDER, type DaemonOptions } from './options.js';

/**
 * The composition root: builds every area (compose.ts), serves the method table
 * (handlers/), and owns start and stop. Nothing here is global: two daemons can run in
 * one process (on different data dirs).
 */
export class Daemon {
  private readonly parts: DaemonParts;
  private readonly server: RpcServer;
  private readonly locks: InstanceLock[] = [];
  private loadProblem: LoadProblem | null = null;
  private stopping: Promise<void> | undefined;
  private resolveStopped!: () => void;
  /** Resolves once the daemon has fully stopped (by signal, by daemon.shutdown or by stop()). */
  readonly stopped = new Promise<void>((resolve) => (this.resolveStopped = resolve));

  private constructor(private readonly options: DaemonOptions) {
    this.parts = compose(options);
    const table = handlers(this.parts, {
      startedAt: this.parts.now(),
      loadProblem: () => this.loadProblem,
      connections: () => this.server,
      stop: (reason) => void this.stop(reason),
    });
    this.server = new RpcServer({
      methods: methodTable(table),
      // Every answer and notification is checked as it is serialised: no known secret value leaves on the socket, whichever path a string took.
      redactor: options.redactor,
      maxFrameBytes: LIMITS.maxControlFrameBytes,
      maxBacklogBytes: LIMITS.maxClientBacklogBytes,
      logger: options.logger,
    });
    this.parts.events.onEvent((_event, emitted) => this.server.broadcastEvent(emitted));
    this.parts.events.onRefused((event) =>
      options.logger.warn({ code: 'REPLY_TOO_LARGE', method: 'event', seq: event.seq, type: event.type }, 'an event was not sent to subscribers: it could not be serialised, or is over the frame limit'),
    );
    // Servers are always told we can answer elicitations; one is put before a human only while a client that would see it is attached.
    // A gateway's connection shows a request to its MCP client only when every call it belongs to is that connection's own (gateway/elicit-relay.ts): it counts only then.
    this.parts.elicitations.answerableWhen(
      (owners) => this.server.subscribersOf('elicitation.requested', (c) => c.gateway === null || (owners.length > 0 && owners.every((o) => o.clientId === clientId(c)))) > 0,
    );
  }

  get paths(): WispPaths {
    return this.options.paths;
  }

  get registryFile(): string {
    return this.parts.store.file;
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

  /** Stops accepting, cancels in-flight work, flushes state, removes the socket. Idempotent. */
  stop(reason: string): Promise<void> {
    this.stopping ??= this.close(reason);
    return this.stopping;
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
    await this.loadRegistry();
    await this.loadTheRest();
    await this.server.listen(paths.socket);
    await fs.chmod(paths.socket, 0o600);
    await this.writePointer();
    logger.info({ socket: paths.socket, dataDir: paths.dataDir, services: this.parts.registry.count, version: this.options.version }, 'wispd ready');
  }

  /** mcp-servers.json: a file that cannot be used is moved aside and the daemon starts with an empty registry, loudly. */
  private async loadRegistry(): Promise<void> {
    const { store, registry } = this.parts;
    const { logger } = this.options;
    const loaded = await store.load();
    if (loaded.sweptTempFiles.length > 0) logger.info({ files: loaded.sweptTempFiles }, 'removed temp files left by an interrupted write');
    if (loaded.problem !== null) {
      this.loadProblem = loaded.problem;
      logger.error({ ...loaded.problem }, 'mcp-servers.json could not be used; moved it aside and started with an empty registry');
      this.storageWarning({
        file: store.file,
        problem: `${loaded.problem.code}: ${loaded.problem.message}: moved aside intact, the daemon started with an EMPTY registry (restore it by hand from the moved file)`,
        movedTo: loaded.problem.movedTo,
      });
    }
    for (const problem of registry.adopt(loaded.services)) this.storageWarning({ file: store.file, problem, movedTo: null });
  }

  /**
   * Projects, config sources, settings, transcripts, install records and profiles: what is bad is
   * reported, never fatal. A config source (settings.json, a plugin, a project's .mcp.json)
   * that is not the user's own is skipped too: another user who can write a project directory
   * must not be able to stop the daemon (the data dir's own files stay fatal: checkOwnFiles).
   */
  private async loadTheRest(): Promise<void> {
    const { projects, sourceSync, settingsFile, sessions, installer, profiles } = this.parts;
    const { logger } = this.options;
    const projectsProblem = await projects.load();
    if (projectsProblem !== null) this.storageWarning(projectsProblem);
    try {
      const report = await sourceSync.sync();
      if (report.problems.length > 0 || report.skipped.length > 0) logger.warn({ problems: report.problems, skipped: report.skipped.length }, 'some config source entries were not used (wispctl mcp sources)');
    } catch (error) {
      logger.error({ err: String(error) }, 'the config sources could not be synced');
      this.storageWarning({ file: this.options.paths.configDir, problem: `the config sources could not be synced (${String(error).slice(0, 300)}): the services are as they were`, movedTo: null });
    }
    const settingsProblem = await settingsFile.load();
    if (settingsProblem !== null) this.storageWarning(settingsProblem);
    for (const problem of await sessions.load()) this.storageWarning(problem);
    for (const problem of await installer.load()) this.storageWarning(problem);
    const profilesProblem = await profiles.load();
    if (profilesProblem !== null) this.storageWarning(profilesProblem);
  }

  /** A persisted file or record that was bad when read: a log line and a storage.warning event, naming the file. */
  private storageWarning(problem: StorageProblem): void {
    this.options.logger.warn({ file: problem.file, problem: problem.problem, movedTo: problem.movedTo }, `${problem.file}: ${problem.problem}`);
    this.parts.events.emit({ type: 'storage.warning', file: problem.file, problem: problem.problem, movedTo: problem.movedTo });
  }

  private async close(reason: string): Promise<void> {
    const { sessions, installer, supervisor, serverRecords, registry, audit, events } = this.parts;
    const grace = this.options.stopGraceMs ?? 2000;
    this.options.logger.info({ reason }, 'wispd stopping');
    await this.server.stopAccepting(grace);
    events.emit({ type: 'daemon.stopping' });
    await sessions.stopAll();
    await installer.stopAll();
    await supervisor.stopAll();
    await supervisor.pins.flush();
    await serverRecords.flush();
    await registry.flush();
    await audit.close();
    await this.server.closeConnections(grace);
    await fs.rm(this.options.paths.socket, { force: true });
    // Only one daemon has this data dir (its lock is still held): the pointer is ours.
    await fs.rm(pointerFile(this.options.paths.dataDir), { force: true });
    await this.releaseLocks();
    this.options.logger.info({}, 'wispd stopped');
    this.resolveStopped();
  }

  /**
   * <data>/wispd-socket.json names the socket, for clients started without the environment
   * that locates it (control/socket-pointer.ts). Written atomically, 0600, once the socket
   * listens. Should it fail, the daemon runs on (clients that are told the socket, or share
   * its environment, still find it) without a pointer of an earlier run left behind.
   */
  private async writePointer(): Promise<void> {
    const { paths, logger } = this.options;
    const file = pointerFile(paths.dataDir);
    try {
      await writeFileAtomic(file, pointerText(paths.socket, process.pid), 0o600);
    } catch (error) {
      await fs.rm(file, { force: true }).catch(() => undefined);
      logger.error({ file, err: String(error) }, 'the socket pointer could not be written: clients that do not get XDG_RUNTIME_DIR need --socket');
    }
  }

  /** After a crash: the MCP servers the last run left behind are stopped (never a pid reused since), and said so. */
  private async recoverServers(): Promise<void> {
    const grace = (this.options.ladder ?? DEFAULT_LADDER).termGraceMs;
    const servers = await ServerRecords.recover(serverRecordsFile(this.options.paths), grace);
    if (servers.length === 0) return;
    this.options.logger.warn({ servers }, 'an earlier run of wispd did not stop these MCP servers: stopped the ones still running');
    this.parts.events.emit({ type: 'daemon.recovered', servers });
  }

  private async releaseLocks(): Promise<void> {
    for (const lock of this.locks.reverse()) await lock.release();
    this.locks.length = 0;
  }
}
