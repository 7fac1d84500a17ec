import { closeSync, writeSync } from 'node:fs';
import { Command, Option } from 'commander';
import { WispError, exitStatusFor } from '../core/index.js';
import { packageVersion } from '../util/index.js';
import { resolvePaths } from '../control/index.js';
import { Redactor } from '../secrets/index.js';
import { disableCoreDumps, logCoreDumps } from './core-dumps.js';
import { Daemon } from './daemon.js';
import { createLogger } from './logger.js';

interface WispdOptions {
  dataDir?: string;
  runtimeDir?: string;
  configDir?: string;
  socket?: string;
  logLevel: string;
  logPretty?: boolean;
  readyFd?: string;
  stopGraceMs?: number;
}

/** The wispd entry point: parse flags, start the daemon, stop it cleanly on SIGTERM/SIGINT. */
export async function main(argv: readonly string[]): Promise<void> {
  const version = packageVersion();
  const program = new Command('wispd')
    .description('Wisp Host daemon: runs MCP servers for AI models, asks a human before every tool call.')
    .version(version)
    .option('--data-dir <dir>', 'data directory (default: WISP_HOME, else the platform data dir)')
    .option('--runtime-dir <dir>', 'directory for the control socket (default: $XDG_RUNTIME_DIR/wisp or <data>/run)')
    .option('--config-dir <dir>', 'config sources: settings.json and plugins/ (default: WISP_CONFIG_HOME, <data>/config when the data dir is given, else $XDG_CONFIG_HOME/wisp or ~/.config/wisp)')
    .option('--socket <path>', 'control socket path (default: <runtime-dir>/wispd.sock)')
    .addOption(new Option('--log-level <level>', 'log level').choices(['trace', 'debug', 'info', 'warn', 'error', 'fatal']).default('info'))
    .option('--log-pretty', 'human-readable logs (default when stdout is a terminal)')
    .option('--no-log-pretty', 'JSON logs even on a terminal')
    .option('--stop-grace-ms <ms>', 'stopping an MCP server: wait this long after closing stdin, and again after SIGTERM (default 2000)', (v) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n < 0 || n > 60_000) throw new Error('--stop-grace-ms must be an integer from 0 to 60000');
      return n;
    })
    .addOption(new Option('--ready-fd <fd>', 'write one line to this fd once the socket is listening, then close it').hideHelp())
    .parse([...argv]);
  const opts = program.opts<WispdOptions>();

  const redactor = new Redactor();
  const logger = createLogger({ level: opts.logLevel, pretty: opts.logPretty ?? process.stdout.isTTY, redactor });
  // A bug that escapes every handler ends the daemon (the service manager restarts it), but
  // through the logger first, so the reason is on record with known secrets redacted,
  // never Node's raw dump of the error.
  const fatal = (kind: string) => (error: unknown): void => {
    logger.fatal({ err: error instanceof Error ? error.stack : String(error) }, `${kind}: wispd stops`);
    process.exit(70);
  };
  process.on('uncaughtException', fatal('uncaught exception'));
  process.on('unhandledRejection', fatal('unhandled rejection'));
  logCoreDumps(logger, disableCoreDumps()); // before any secret is read
  const paths = resolvePaths({ dataDir: opts.dataDir, runtimeDir: opts.runtimeDir, configDir: opts.configDir, socket: opts.socket });

  let daemon: Daemon;
  try {
    const ladder = opts.stopGraceMs !== undefined ? { stdinGraceMs: opts.stopGraceMs, termGraceMs: opts.stopGraceMs } : undefined;
    daemon = await Daemon.start({ paths, logger, redactor, version, ...(ladder !== undefined ? { ladder } : {}) });
  } catch (error) {
    const code = error instanceof WispError ? error.code : 'INTERNAL_ERROR';
    const message = error instanceof Error ? error.message : String(error);
    logger.fatal({ code, err: message }, 'wispd could not start');
    process.stderr.write(`wispd: ${message}\n`);
    // Whoever waits on the ready fd (wispctl daemon start) gets the code as well as the exit status.
    if (opts.readyFd !== undefined) {
      const fd = Number(opts.readyFd);
      writeSync(fd, `${JSON.stringify({ ready: false, code, message })}\n`);
      closeSync(fd);
    }
    process.exitCode = exitStatusFor(code);
    return;
  }

  if (opts.readyFd !== undefined) {
    const fd = Number(opts.readyFd);
    writeSync(fd, `${JSON.stringify({ ready: true, pid: process.pid, socket: paths.socket })}\n`);
    closeSync(fd);
  }

  let signals = 0;
  const onSignal = (signal: NodeJS.Signals): void => {
    signals += 1;
    if (signals > 1) {
      logger.warn({ signal }, 'second signal: exiting at once');
      process.exit(1);
    }
    void daemon.stop(signal);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  process.on('SIGHUP', () => logger.info({}, 'SIGHUP ignored (use wispctl to change configuration)'));

  await daemon.stopped;
  process.off('SIGTERM', onSignal);
  process.off('SIGINT', onSignal);
  process.exitCode = 0;
  // Everything is closed; should a stray handle keep the loop alive, do not hang a shutdown.
  setTimeout(() => process.exit(0), 2000).unref();
}
