import { promises as fs } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline/promises';
import { Command, CommanderError } from 'commander';
import { WispClient, packageVersion, resolvePaths, type WispPaths } from '../control/client.js';
import { ERROR_CATALOG, EXIT, WispError, exitStatusFor, type Approval, type ConnectionState, type Service, type Task, type WispEvent } from '../core/index.js';
import { startDaemon, statusOrNull, stopDaemon } from './daemon-control.js';
import { clean, cleanBlock, clip, describeApproval, fitToTerminal, formatDuration, jsonForTerminal, oneLine, registeredTool, showArg, showJson, table, terminalText } from './render.js';
import { chat, runTask } from './chat.js';
import { addInstallCommands } from './install.js';
import { addSourceCommands } from './sources.js';
import { allTools } from './pages.js';
import { promptApproval } from './prompt.js';
import { readSecret } from './secret-input.js';
import { defaultPlanInputs, planUnit, runCommand } from './service-manager.js';

interface GlobalOptions {
  socket?: string;
  dataDir?: string;
  json?: boolean;
}

export interface CliIo {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
}

const defaultIo: CliIo = {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
};

function errorCodeHelp(): string {
  const rows = Object.entries(ERROR_CATALOG).map(([code, entry]) => `  ${code.padEnd(20)} exit ${entry.exit}`);
  return `\nExit statuses: 0 ok, 1 failure, 2 bad usage or input, 3 no daemon, 4 not found, 5 conflict, 6 limit reached, 7 refused.\nError codes (docs/errors.md explains each):\n${rows.join('\n')}\n`;
}

export async function main(argv: readonly string[], rawIo: CliIo = defaultIo): Promise<void> {
  // The last guard: whatever a renderer forgot, nothing unsafe reaches the terminal.
  const io: CliIo = { out: (text) => rawIo.out(terminalText(text)), err: (text) => rawIo.err(terminalText(text)) };
  const program = buildProgram(io);
  try {
    await program.parseAsync([...argv]);
  } catch (error) {
    if (error instanceof CommanderError) {
      process.exitCode = error.exitCode === 0 ? EXIT.ok : EXIT.usage;
      return;
    }
    if (error instanceof WispError) {
      // The message may carry a server's text: cleaned, its continuation lines indented.
      io.err(`wispctl: ${cleanBlock(error.message, '  ')} (${clean(error.code)})`);
      const details = error.details.errors;
      if (Array.isArray(details)) for (const d of details as { path: unknown; message: unknown }[]) io.err(`  ${clean(String(d.path))}: ${clean(String(d.message))}`);
      process.exitCode = exitStatusFor(error.code);
      return;
    }
    io.err(`wispctl: ${cleanBlock(error instanceof Error ? error.message : String(error), '  ')}`);
    process.exitCode = EXIT.failure;
  } finally {
    // A terminal's stdin stays referenced after a prompt has used it: let it go, or the
    // process would not exit.
    process.stdin.pause();
    (process.stdin as { unref?: () => void }).unref?.();
  }
}

function buildProgram(io: CliIo): Command {
  const program = new Command('wispctl')
    .description('Control wispd, the Wisp Host daemon, over its socket.')
    .version(packageVersion())
    .option('--socket <path>', 'daemon socket (default: WISP_SOCKET, else derived from the data dir)')
    .option('--data-dir <dir>', 'data directory of the daemon to talk to (default: WISP_HOME, else the platform data dir)')
    .option('--json', 'machine-readable JSON output')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) })
    .addHelpText('after', errorCodeHelp())
    .showHelpAfterError();

  const globals = (): GlobalOptions => program.opts<GlobalOptions>();
  const paths = (): WispPaths => resolvePaths({ socket: globals().socket, dataDir: globals().dataDir });
  const print = (value: unknown, human: () => string): void => io.out(globals().json === true ? jsonForTerminal(value, 2) : human());
  // Flags that make a started or installed daemon use the same data dir and socket as this CLI.
  const daemonFlags = (): string[] => {
    const p = paths();
    const explicitData = globals().dataDir !== undefined || (process.env.WISP_HOME ?? '') !== '';
    const explicitSocket = globals().socket !== undefined || (process.env.WISP_SOCKET ?? '') !== '';
    return [...(explicitData ? ['--data-dir', p.dataDir] : []), ...(explicitSocket ? ['--socket', p.socket] : [])];
  };
  const withClient = async <T>(fn: (client: WispClient) => Promise<T>): Promise<T> => {
    const client = await WispClient.connect(paths().socket);
    try {
      return await fn(client);
    } finally {
      await client.close();
    }
  };

  program
    .command('status')
    .description('show the daemon: version, pid, uptime, paths, counts')
    .action(() =>
      withClient(async (client) => {
        const status = await client.call('daemon.status');
        print(status, () => {
          const lines = [
            `wispd ${status.version} running (pid ${status.pid}, up ${formatDuration(status.uptimeMs)})`,
            `socket:    ${clean(status.paths.socket)}`,
            `data dir:  ${clean(status.paths.dataDir)}`,
            `services:  ${status.counts.services} (${status.counts.enabledServices} enabled)`,
            `clients:   ${status.counts.clients} (${status.counts.subscribers} following events)`,
          ];
          if (status.registryLoadError !== null) {
            lines.push(
              `warning:   mcp-servers.json was unreadable at start (${clean(status.registryLoadError.message)}); it was moved to ${clean(status.registryLoadError.movedTo)}`,
            );
          }
          return lines.join('\n');
        });
      }),
    );

  program
    .command('events')
    .description('print the events the daemon still holds; with --follow, keep printing new ones')
    .option('-f, --follow', 'keep following until interrupted or the daemon stops')
    .option('--since <seq>', 'only events after this seq', (v) => parseNonNegative(v, '--since'))
    .action(async (opts: { follow?: boolean; since?: number }) => {
      const client = await WispClient.connect(paths().socket);
      const json = globals().json === true;
      const printEvent = (event: WispEvent): void => io.out(json ? jsonForTerminal(event) : describeEvent(event));
      client.onEvent(printEvent);
      const ended = new Promise<void>((resolve) => client.onClose(() => resolve()));
      await client.call('events.subscribe', { since: opts.since ?? 0 });
      if (opts.follow !== true) {
        // Replayed events were written right after the answer; a status round trip flushes them.
        await client.call('daemon.status');
        await client.close();
        return;
      }
      const stop = (): void => void client.close();
      process.once('SIGINT', stop);
      await ended;
      process.off('SIGINT', stop);
    });

  const mcp = program.command('mcp').description('manage MCP server registrations');

  mcp
    .command('add')
    .description('register a stdio MCP server (stored disabled; nothing runs)')
    .argument('<name>', 'unique name: 1-64 of A-Z a-z 0-9 . _ -')
    .argument('[command]', 'executable: an absolute path is best (a bare name is looked up on the daemon\'s PATH)')
    .argument('[args...]', 'arguments, passed item by item (put them after --)')
    .option('--args-json <json>', 'arguments as a JSON array of strings, instead of after --')
    .option('--cwd <dir>', 'absolute working directory')
    .option('--timeout-ms <ms>', 'initialize + discovery deadline (100-600000, default 10000)', (v) => parseNonNegative(v, '--timeout-ms'))
    .addHelpText('after', '\nExample:\n  wispctl mcp add files -- /usr/local/bin/node /opt/mcp/files/server.js --root /home/me/docs')
    .action((name: string, command: string | undefined, args: string[], opts: { argsJson?: string; cwd?: string; timeoutMs?: number }) =>
      withClient(async (client) => {
        if (command === undefined) throw new WispError('INVALID_PARAMS', 'give the command after the name: wispctl mcp add NAME -- COMMAND [ARGS...]');
        const argList = opts.argsJson !== undefined ? parseArgsJson(opts.argsJson, args) : args;
        const { service } = await client.call('services.register', {
          name,
          command,
          args: argList,
          ...(opts.cwd !== undefined ? { cwd: opts.cwd } : {}),
          ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
        });
        print(service, () => `registered ${clean(service.name)} (disabled, id ${clean(service.id)})\n${describeService(service)}`);
      }),
    );

  mcp
    .command('list')
    .description('list registered services with their state (the status panel)')
    .action(() =>
      withClient(async (client) => {
        const { services } = await client.call('services.list');
        print(services, () =>
          services.length === 0
            ? 'no services registered (add one with: wispctl mcp add NAME -- COMMAND [ARGS...])'
            : table(
                ['NAME', 'STATE', 'PID', 'TOOLS', 'SINCE', 'TRANSPORT', 'REASON'],
                services.map((s) => {
                  const c = s.connection;
                  const state = c.status === 'activating' ? `activating/${c.phase}` : c.status;
                  const pid = 'pid' in c && c.pid !== null ? String(c.pid) : '-';
                  const tools = c.status === 'active' ? String(c.toolCount) : '-';
                  const since = c.status === 'failed' || c.status === 'needs_auth' ? c.at : c.since;
                  // Cells are cleaned by table(); a reason is one line.
                  const reason =
                    c.status === 'failed' ? `${c.code}: ${c.message}` : c.status === 'needs_auth' ? `log in: wispctl mcp login ${s.name}${c.authorizationServer !== null ? ` (${c.authorizationServer})` : ''}` : '';
                  return [s.name, state, pid, tools, since, s.transport, reason];
                }),
              ),
        );
      }),
    );

  mcp
    .command('show')
    .description('show one service')
    .argument('<name>', 'service name (or id)')
    .action((name: string) =>
      withClient(async (client) => {
        const { service } = await client.call('services.get', ref(name));
        print(service, () => describeService(service));
      }),
    );

  mcp
    .command('edit')
    .description('edit a service; it is disabled and must be trusted again')
    .argument('<name>', 'service name (or id)')
    .argument('[command]', 'new command (put it after --, followed by its arguments)')
    .argument('[args...]', 'new arguments')
    .option('--name <new>', 'rename')
    .option('--args-json <json>', 'new arguments as a JSON array of strings')
    .option('--cwd <dir>', 'new absolute working directory')
    .option('--no-cwd', 'clear the working directory')
    .option('--timeout-ms <ms>', 'initialize + discovery deadline (100-600000); 0 restores the default', (v) => parseNonNegative(v, '--timeout-ms'))
    .action(
      (name: string, command: string | undefined, args: string[], opts: { name?: string; argsJson?: string; cwd?: string | false; timeoutMs?: number }) =>
        withClient(async (client) => {
          const set: { name?: string; command?: string; args?: string[]; cwd?: string | null; timeoutMs?: number | null } = {};
          if (opts.timeoutMs !== undefined) set.timeoutMs = opts.timeoutMs === 0 ? null : opts.timeoutMs;
          if (opts.name !== undefined) set.name = opts.name;
          if (command !== undefined) {
            set.command = command;
            set.args = args;
          }
          if (opts.argsJson !== undefined) set.args = parseArgsJson(opts.argsJson, command !== undefined ? args : []);
          if (opts.cwd === false) set.cwd = null;
          else if (opts.cwd !== undefined) set.cwd = opts.cwd;
          if (Object.keys(set).length === 0) throw new WispError('INVALID_PARAMS', 'nothing to change: give --name, --cwd, --no-cwd, --timeout-ms, --args-json or -- COMMAND [ARGS...]');
          const { service } = await client.call('services.update', { ...ref(name), set });
          print(service, () => `updated ${clean(service.name)} (disabled, configVersion ${service.configVersion})\n${describeService(service)}`);
        }),
    );

  mcp
    .command('remove')
    .alias('rm')
    .description('remove a service from the registry')
    .argument('<name>', 'service name (or id)')
    .action((name: string) =>
      withClient(async (client) => {
        const { deleted } = await client.call('services.delete', ref(name));
        print(deleted, () => `removed ${clean(deleted.name)} (${clean(deleted.id)})`);
      }),
    );

  mcp
    .command('activate')
    .description('trust and activate a service: shows what will run, asks, then starts it and discovers its tools')
    .argument('<name>', 'service name (or id)')
    .option('-y, --yes', 'do not ask (for scripts); you still trust exactly the configuration shown')
    .action((name: string, opts: { yes?: boolean }) =>
      withClient(async (client) => {
        const { service } = await client.call('services.get', ref(name));
        if (opts.yes !== true) {
          // Every field is the daemon's own record of what will run (services.get), cleaned;
          // lines too wide for the terminal are broken by us, never wrapped by it.
          io.err(
            fitToTerminal(
              (service.transport === 'http'
                ? [
                    `${clean(service.name)} is a remote server: the daemon will send it requests, and what it answers is untrusted.`,
                    `  url:          ${clean(service.url ?? '')}`,
                    `  headers:      ${service.headers.length === 0 ? '(none)' : service.headers.map((h) => `${clean(h.name)} (${h.storage})`).join(', ')}`,
                    `  origin:       ${describeOrigin(service.origin)}`,
                  ]
                : [
                    `${clean(service.name)} will run as you, with your permissions. Its working directory is not a sandbox.`,
                    `  command:      ${showArg(service.command)}`,
                    `  args:         ${service.args.length === 0 ? '(none)' : service.args.map(showArg).join(' ')}`,
                    `  cwd:          ${service.cwd !== null ? showArg(service.cwd) : '(daemon default)'}`,
                    `  environment:  ${service.env.length === 0 ? '(no variables of its own; the minimal inherited set only)' : `the minimal inherited set, plus ${service.env.map((v) => `${clean(v.name)} (${v.storage})`).join(', ')}`}`,
                    `  origin:       ${describeOrigin(service.origin)}`,
                  ]
              ).join('\n'),
              process.stderr.isTTY ? process.stderr.columns : undefined,
            ),
          );
          if (!process.stdin.isTTY) {
            throw new WispError('INVALID_PARAMS', 'not a terminal, so nobody can confirm: pass --yes to trust this configuration');
          }
          const rl = createInterface({ input: process.stdin, output: process.stderr });
          const answer = await rl.question(
            service.transport === 'http' ? `Trust and connect to ${clean(service.name)}? [y/N] ` : `Trust and start ${showArg(service.command)} (service ${clean(service.name)})? [y/N] `,
          );
          rl.close();
          if (!/^y(es)?$/i.test(answer.trim())) {
            io.err('not activated');
            process.exitCode = EXIT.refused;
            return;
          }
        }
        const result = await client.call('services.activate', { id: service.id, configVersion: service.configVersion });
        const c = result.service.connection;
        print(result.service, () => `${clean(result.service.name)}: ${describeConnection(c)}`);
        if (c.status === 'failed') process.exitCode = exitStatusFor(c.code);
      }),
    );

  mcp
    .command('disable')
    .description('stop a service and withdraw its tools (again, while stopping: force it)')
    .argument('<name>', 'service name (or id)')
    .action((name: string) =>
      withClient(async (client) => {
        const { service } = await client.call('services.disable', ref(name));
        print(service, () => `${clean(service.name)}: ${describeConnection(service.connection)}`);
      }),
    );

  mcp
    .command('refresh')
    .description('discover the tools of an active service again')
    .argument('<name>', 'service name (or id)')
    .action((name: string) =>
      withClient(async (client) => {
        const { service } = await client.call('services.refreshTools', ref(name));
        print(service, () => `${clean(service.name)}: ${describeConnection(service.connection)}`);
        if (service.connection.status === 'failed') process.exitCode = exitStatusFor(service.connection.code);
      }),
    );

  mcp
    .command('tools')
    .description('list active tools (of one service, or all)')
    .argument('[name]', 'service name (or id)')
    .action((name: string | undefined) =>
      withClient(async (client) => {
        const serviceId = name === undefined ? undefined : (await client.call('services.get', ref(name))).service.id;
        const tools = await allTools(client, serviceId);
        print(tools, () =>
          tools.length === 0
            ? 'no active tools'
            : table(
                ['SERVICE', 'TOOL', 'MODEL NAME', 'HINTS', 'DESCRIPTION (from the server, untrusted)'],
                tools.map((t) => [
                  t.serviceName,
                  showArg(t.name), // table() cleans every cell
                  t.modelName,
                  Object.entries(t.annotations ?? {})
                    .filter(([k, v]) => k.endsWith('Hint') && v === true)
                    .map(([k]) => k.replace(/Hint$/, ''))
                    .join(',') || '-',
                  oneLine(t.description, 60),
                ]),
              ),
        );
      }),
    );

  mcp
    .command('logs')
    .description('print the tail of what a service wrote to stderr (held in memory only)')
    .argument('<name>', 'service name (or id)')
    .action((name: string) =>
      withClient(async (client) => {
        const logs = await client.call('services.logs', ref(name));
        print(logs, () => (logs.droppedChars > 0 ? `[${logs.droppedChars} older characters dropped]\n` : '') + cleanBlock(logs.stderr.replace(/\n$/, '')));
      }),
    );

  mcp
    .command('call')
    .description('call a tool: waits for an approval (answered here on a terminal, or by any client with wispctl approve)')
    .argument('<name>', 'service name (or id)')
    .argument('<tool>', 'the tool\'s own name (see wispctl mcp tools)')
    .argument('[arguments]', 'arguments as a JSON object', '{}')
    .action((name: string, toolName: string, argsText: string) =>
      withClient(async (client) => {
        const args = parseJson(argsText, 'arguments');
        if (typeof args !== 'object' || args === null || Array.isArray(args)) throw new WispError('INVALID_PARAMS', 'arguments must be a JSON object');
        const { service } = await client.call('services.get', ref(name));
        const me = (await client.call('daemon.status')).you.clientId;
        const interactive = process.stdin.isTTY && globals().json !== true;
        client.onEvent((event) => {
          if (event.type !== 'approval.requested' || event.approval.requester.clientId !== me) return;
          io.err(fitToTerminal(describeApproval(event.approval), process.stderr.isTTY ? process.stderr.columns : undefined));
          if (!interactive) {
            io.err(`waiting for a human: wispctl approve ${clean(event.approval.id)} (or deny)`);
            return;
          }
          promptApproval(client, event.approval, io.err);
        });
        await client.call('events.subscribe', {});
        try {
          const result = await client.call('tools.call', { serviceId: service.id, toolName, arguments: args });
          print(result, () => {
            const omitted = result.content.filter((c) => c.type === 'omitted').map((c) => `[omitted ${clean(c.originalType)}${c.mimeType !== null ? ` ${clean(c.mimeType)}` : ''}${c.bytes !== null ? `, ${c.bytes} bytes` : ''}]`);
            const structured = result.structuredContent !== null ? [`structured: ${showJson(result.structuredContent)}`] : [];
            const note = result.truncated ? [`[truncated: ${result.originalLength} characters, ${result.text.length} shown]`] : [];
            return [cleanBlock(result.text), ...omitted, ...structured, ...note].filter((l) => l !== '').join('\n');
          });
        } catch (error) {
          if (error instanceof WispError && error.code === 'TOOL_ERROR') {
            const result = error.details.result as { text?: string } | undefined;
            io.err(cleanBlock(typeof result?.text === 'string' ? result.text : ''));
          }
          throw error;
        }
      }),
    );

  const env = mcp.command('env').description('a service\'s environment variables: values go to the OS keychain (or memory), never to files');

  env
    .command('set')
    .description('set one variable; the value is read without echo from the terminal, or from stdin (never from the command line)')
    .argument('<name>', 'service name (or id)')
    .argument('<var>', 'variable name (letters, digits, _; not starting with a digit)')
    .option('--session', 'keep the value in memory only, for this daemon run (not in the keychain)')
    .action((name: string, variable: string, opts: { session?: boolean }) =>
      withClient(async (client) => {
        const { service } = await client.call('services.get', ref(name));
        const value = await readSecret(`value for ${clean(variable)} (${clean(service.name)}, not shown): `, io.err);
        const result = await client.call('services.setEnv', {
          id: service.id,
          mode: 'upsert',
          variables: [{ name: variable, value, storage: opts.session === true ? 'session' : 'keychain' }],
        });
        print(result.service.env, () => `${clean(result.service.name)}: ${clean(variable)} saved (${opts.session === true ? 'session only' : 'keychain'}); the service is disabled until activated again`);
      }),
    );

  env
    .command('list')
    .description('list the variable names and where each value is kept (values are never shown)')
    .argument('<name>', 'service name (or id)')
    .action((name: string) =>
      withClient(async (client) => {
        const { service } = await client.call('services.get', ref(name));
        print(service.env, () => (service.env.length === 0 ? 'no variables' : table(['VARIABLE', 'STORAGE'], service.env.map((v) => [v.name, v.storage]))));
      }),
    );

  env
    .command('clear')
    .description('remove every variable of a service (keychain entries included)')
    .argument('<name>', 'service name (or id)')
    .action((name: string) =>
      withClient(async (client) => {
        const { service } = await client.call('services.get', ref(name));
        await client.call('services.setEnv', { id: service.id, mode: 'replace', variables: [] });
        print([], () => `${clean(service.name)}: variables cleared`);
      }),
    );

  env
    .command('carry-over')
    .description('after editing the command, args or cwd: let the saved values go to the new program')
    .argument('<name>', 'service name (or id)')
    .option('-y, --yes', 'do not ask')
    .action((name: string, opts: { yes?: boolean }) =>
      withClient(async (client) => {
        const { service } = await client.call('services.get', ref(name));
        io.err(`${clean(service.env.map((v) => v.name).join(', '))} will be given to: ${[service.command, ...service.args].map(showArg).join(' ')} (cwd ${service.cwd !== null ? showArg(service.cwd) : 'daemon default'})`);
        if (opts.yes !== true) {
          if (!process.stdin.isTTY) throw new WispError('INVALID_PARAMS', 'not a terminal, so nobody can confirm: pass --yes');
          const rl = createInterface({ input: process.stdin, output: process.stderr });
          const answer = await rl.question('Carry the saved values over to this program? [y/N] ');
          rl.close();
          if (!/^y(es)?$/i.test(answer.trim())) {
            io.err('nothing changed');
            process.exitCode = EXIT.refused;
            return;
          }
        }
        const result = await client.call('services.carryOverEnv', { id: service.id, configVersion: service.configVersion });
        print(result.service, () => `${clean(result.service.name)}: variables carried over`);
      }),
    );

  program
    .command('send')
    .description('send one request to the model and stream the answer; tool calls wait for approval (asked here on a terminal)')
    .argument('<text>', 'what to ask')
    .option('--session <id>', 'continue this session (default: a new one)')
    .option('--reasoning', 'also print the model\'s reasoning (to stderr)')
    .action((text: string, opts: { session?: string; reasoning?: boolean }) =>
      withClient(async (client) => {
        const sessionId = opts.session ?? (await client.call('sessions.create', { title: text.slice(0, 60) })).session.id;
        const task = await runTask(client, sessionId, text, { io, interactive: process.stdin.isTTY, reasoning: opts.reasoning === true, json: globals().json === true });
        if (task.state.status === 'failed') process.exitCode = exitStatusFor(task.state.code);
        else if (task.state.status !== 'completed') process.exitCode = EXIT.failure;
      }),
    );

  program
    .command('chat')
    .description('talk to the model: each line is a request; /tools, /sessions, /quit; Ctrl-C cancels a running request')
    .option('--session <id>', 'continue this session (default: a new one)')
    .action((opts: { session?: string }) => withClient((client) => chat(client, opts.session, io)));

  const sessions = program.command('sessions').description('model sessions');
  sessions
    .command('list', { isDefault: true })
    .description('list sessions')
    .action(() =>
      withClient(async (client) => {
        const { sessions: list } = await client.call('sessions.list');
        print(list, () =>
          list.length === 0
            ? 'no sessions'
            : table(
                ['ID', 'TITLE', 'MESSAGES', 'LAST TASK', 'UPDATED'],
                list.map((s) => [s.id, oneLine(s.title, 40), String(s.messageCount), s.lastTask === null ? '-' : describeTaskState(s.lastTask.state), s.updatedAt]),
              ),
        );
      }),
    );
  sessions
    .command('show')
    .description('show a session\'s transcript')
    .argument('<id>', 'session id')
    .action((id: string) =>
      withClient(async (client) => {
        const result = await client.call('sessions.get', { id });
        print(result, () =>
          (result.omittedMessages > 0 ? [`[${result.omittedMessages} earlier messages not shown]`] : [])
            .concat(result.messages.map((m) => {
              if (m.role === 'tool') return `tool (${clean(m.tool_call_id ?? '')}): ${oneLine(m.content ?? '', 200)}`;
              const calls = (m.tool_calls ?? []).map((c) => `\n  -> ${clean(c.function.name)} ${clean(c.function.arguments)}`).join('');
              return `${m.role}: ${cleanBlock(m.content ?? '', '  ')}${calls}`;
            }))
            .join('\n'),
        );
      }),
    );
  sessions
    .command('delete')
    .description('delete a session and its transcript')
    .argument('<id>', 'session id')
    .action((id: string) =>
      withClient(async (client) => {
        await client.call('sessions.delete', { id });
        print({ deleted: id }, () => `deleted ${clean(id)}`);
      }),
    );

  const model = program.command('model').description('the model API: settings and key');
  model
    .command('show')
    .description('show the model settings and where the key comes from')
    .action(() =>
      withClient(async (client) => {
        const { settings } = await client.call('model.getSettings');
        print(settings, () => Object.entries(settings).map(([k, v]) => `${k.padEnd(19)} ${clean(String(v))}`).join('\n'));
      }),
    );
  model
    .command('set')
    .description('change model settings')
    .option('--base-url <url>', 'API base URL (e.g. https://api.deepseek.com)')
    .option('--model <name>', 'model name (e.g. deepseek-chat)')
    .option('--first-byte-timeout-ms <ms>', 'deadline for the first byte (keep-alives count)', (v) => parseNonNegative(v, '--first-byte-timeout-ms'))
    .option('--idle-timeout-ms <ms>', 'deadline between chunks', (v) => parseNonNegative(v, '--idle-timeout-ms'))
    .option('--max-retries <n>', 'retries before the stream starts (0-5)', (v) => parseNonNegative(v, '--max-retries'))
    .option('--defer-tools-above <n>', 'above this many tools, offer search and execute instead (0-128)', (v) => parseNonNegative(v, '--defer-tools-above'))
    .action((opts: { baseUrl?: string; model?: string; firstByteTimeoutMs?: number; idleTimeoutMs?: number; maxRetries?: number; deferToolsAbove?: number }) =>
      withClient(async (client) => {
        const { settings } = await client.call('model.setSettings', opts);
        print(settings, () => `model settings saved: ${clean(settings.model)} at ${clean(settings.baseUrl)}`);
      }),
    );
  model
    .command('set-key')
    .description('save the API key; read without echo from the terminal, or from stdin (never from the command line)')
    .option('--session', 'keep it in memory only, for this daemon run (not in the keychain)')
    .action((opts: { session?: boolean }) =>
      withClient(async (client) => {
        const value = await readSecret('model API key (not shown): ', io.err);
        if (value === '') throw new WispError('INVALID_PARAMS', 'the key is empty');
        const { settings } = await client.call('model.setKey', { value, storage: opts.session === true ? 'session' : 'keychain' });
        print(settings, () => `API key saved (${clean(settings.key)})`);
      }),
    );

  addInstallCommands(program, { withClient, print, err: io.err, json: () => globals().json === true });
  addSourceCommands(mcp, { withClient, print, err: io.err, ref, describeService });

  program
    .command('approvals')
    .description('list open approvals (with --all, recently resolved ones too)')
    .option('--all', 'include resolved approvals')
    .action((opts: { all?: boolean }) =>
      withClient(async (client) => {
        const approvals: Approval[] = [];
        let cursor: string | null = null;
        do {
          const page: { approvals: Approval[]; nextCursor: string | null } = await client.call('approvals.list', { all: opts.all === true, ...(cursor !== null ? { cursor } : {}) });
          approvals.push(...page.approvals);
          cursor = page.nextCursor;
        } while (cursor !== null);
        print(approvals, () => (approvals.length === 0 ? 'no open approvals' : approvals.map(describeApproval).join('\n\n')));
      }),
    );

  for (const [command, decision] of [
    ['approve', 'approve'],
    ['deny', 'deny'],
  ] as const) {
    program
      .command(command)
      .description(`${decision} a pending approval (the first answer from any client wins)`)
      .argument('<id>', 'approval id (wispctl approvals lists them)')
      .action((id: string) =>
        withClient(async (client) => {
          const { approval } = await client.call('approvals.respond', { id, decision });
          print(approval, () => `${clean(approval.id)}: ${clean(approval.state.status)}`);
        }),
      );
  }

  program
    .command('call')
    .description('send one raw request to the daemon and print the result (for scripts)')
    .argument('<method>', 'method name, e.g. daemon.status (rpc.discover lists them all)')
    .argument('[params]', 'params as a JSON object', '{}')
    .action((method: string, params: string) =>
      withClient(async (client) => {
        const parsed = parseJson(params, 'params');
        const result = await (client.call as (m: string, p: unknown) => Promise<unknown>)(method, parsed);
        io.out(jsonForTerminal(result, 2));
      }),
    );

  const daemon = program.command('daemon').description('start, stop and install the daemon');

  daemon
    .command('start')
    .description('start wispd in the background and wait until its socket answers')
    .action(async () => {
      const result = await startDaemon(paths(), daemonFlags());
      print(result, () =>
        result.alreadyRunning
          ? `wispd is already running (pid ${result.pid}, socket ${clean(result.socket)})`
          : `wispd started (pid ${result.pid}, socket ${clean(result.socket)}, log ${clean(String(result.logFile))})`,
      );
    });

  daemon
    .command('stop')
    .description('ask wispd to shut down and wait until it has exited')
    .action(async () => {
      const result = await stopDaemon(paths().socket);
      print(result, () => (result.wasRunning ? `wispd stopped (pid ${String(result.pid)})` : 'wispd is not running'));
    });

  daemon
    .command('status')
    .description('is wispd running, and is it installed as a user service?')
    .action(async () => {
      const p = paths();
      const status = await statusOrNull(p.socket);
      const plan = await planUnit(defaultPlanInputs([]));
      const installed = await fs.access(plan.file).then(() => true, () => false);
      const value = { running: status !== null, pid: status?.pid ?? null, socket: p.socket, serviceManager: plan.manager, unitFile: plan.file, installed };
      print(value, () =>
        [
          status !== null ? `running (pid ${status.pid}, up ${formatDuration(status.uptimeMs)}, socket ${clean(p.socket)})` : `not running (socket ${clean(p.socket)})`,
          installed ? `installed as a ${plan.manager} user service: ${clean(plan.file)}` : `not installed as a ${plan.manager} user service (wispctl daemon install)`,
        ].join('\n'),
      );
      if (status === null) process.exitCode = EXIT.noDaemon;
    });

  daemon
    .command('install')
    .description('install wispd as a user service (launchd on macOS, systemd --user on Linux) and start it')
    .option('--dry-run', 'print the unit file and the commands without writing or running anything')
    .action(async (opts: { dryRun?: boolean }) => {
      const plan = await planUnit(defaultPlanInputs(daemonFlags()));
      if (opts.dryRun === true) {
        print({ ...plan, dryRun: true }, () =>
          [`would write ${clean(plan.file)}:`, cleanBlock(plan.content), 'would run:', ...plan.install.map((c) => `  ${c.map(showArg).join(' ')}`)].join('\n'),
        );
        return;
      }
      await fs.mkdir(path.dirname(plan.file), { recursive: true });
      await fs.writeFile(plan.file, plan.content, { mode: 0o644 });
      io.err(`wrote ${clean(plan.file)}`);
      await runAll(plan.install, io);
    });

  daemon
    .command('uninstall')
    .description('stop and remove the user service')
    .option('--dry-run', 'print the commands and the file to remove without doing anything')
    .action(async (opts: { dryRun?: boolean }) => {
      const plan = await planUnit(defaultPlanInputs([]));
      if (opts.dryRun === true) {
        print({ file: plan.file, commands: plan.uninstall, dryRun: true }, () =>
          ['would run:', ...plan.uninstall.map((c) => `  ${c.map(showArg).join(' ')}`), `would remove ${clean(plan.file)}`].join('\n'),
        );
        return;
      }
      await runAll(plan.uninstall.slice(0, 1), io);
      await fs.rm(plan.file, { force: true });
      io.err(`removed ${clean(plan.file)}`);
      await runAll(plan.uninstall.slice(1), io);
    });

  return program;
}

async function runAll(commands: readonly (readonly string[])[], io: CliIo): Promise<void> {
  for (const argv of commands) {
    const outcome = await runCommand(argv);
    io.err(`ran: ${argv.map(showArg).join(' ')} -> ${outcome.ok ? 'ok' : 'failed'}${outcome.output !== '' ? `\n${cleanBlock(outcome.output)}` : ''}`);
    if (!outcome.ok) throw new WispError('INTERNAL_ERROR', `${argv.map(showArg).join(' ')} failed; run it yourself to see why`);
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function ref(nameOrId: string): { id: string } | { name: string } {
  return UUID.test(nameOrId) ? { id: nameOrId } : { name: nameOrId };
}

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new WispError('INVALID_PARAMS', `${what} is not valid JSON: ${(error as Error).message}`);
  }
}

function parseArgsJson(text: string, trailing: readonly string[]): string[] {
  if (trailing.length > 0) throw new WispError('INVALID_PARAMS', 'give arguments either after -- or with --args-json, not both');
  const parsed = parseJson(text, '--args-json');
  if (!Array.isArray(parsed) || !parsed.every((a): a is string => typeof a === 'string')) {
    throw new WispError('INVALID_PARAMS', '--args-json must be a JSON array of strings');
  }
  return parsed;
}

function parseNonNegative(value: string, flag: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new WispError('INVALID_PARAMS', `${flag} must be a non-negative integer`);
  return n;
}

function describeOrigin(origin: Service['origin']): string {
  switch (origin.kind) {
    case 'manual':
      return 'registered by hand';
    case 'install':
      return `npm install of ${clean(origin.package)}@${clean(origin.version)} (plan ${clean(origin.planDigest)})`;
    case 'source':
      return `${clean(origin.source)}${origin.plugin !== null ? ` plugin ${clean(origin.plugin)}` : ''}: ${showArg(origin.file)}`;
  }
}

function describeService(service: Service): string {
  const where =
    service.transport === 'http'
      ? [
          `url:      ${clean(service.url ?? '')} (remote: its output is untrusted)`,
          `headers:  ${service.headers.length === 0 ? '(none)' : service.headers.map((h) => `${clean(h.name)} (${h.storage})`).join(', ')}`,
        ]
      : [
          `command:  ${showArg(service.command)}`,
          `args:     ${service.args.length === 0 ? '(none)' : service.args.map(showArg).join(' ')}`,
          `cwd:      ${service.cwd !== null ? showArg(service.cwd) : '(daemon default)'}`,
          `env:      ${service.env.length === 0 ? '(none)' : service.env.map((v) => `${clean(v.name)} (${v.storage})`).join(', ')}`,
        ];
  const c = service.connection;
  return [
    `name:     ${clean(service.name)}`,
    `id:       ${clean(service.id)}`,
    `state:    ${describeConnection(c)}`,
    ...(c.status === 'active' ? [`server:   ${clip(c.server.name, 100)} ${clip(c.server.version, 100)} (what the server says)`] : []),
    `origin:   ${describeOrigin(service.origin)}`,
    ...where,
    `timeout:  ${service.timeoutMs ?? 10000} ms`,
    `version:  ${service.configVersion}`,
    `updated:  ${clean(service.updatedAt)}`,
  ].join('\n');
}

/** One line per event; every field that is not the daemon's own number or enum is cleaned. */
function describeEvent(event: WispEvent): string {
  const head = `${String(event.seq).padStart(5)}  ${clean(event.at)}  ${clean(event.type)}`;
  switch (event.type) {
    case 'service.registered':
    case 'service.updated':
      return `${head}  ${clean(event.service.name)} (v${event.service.configVersion})`;
    case 'service.deleted':
      return `${head}  ${clean(event.service.name)}`;
    case 'service.state':
      return `${head}  ${clean(event.service.name)} ${describeConnection(event.connection)}`;
    case 'service.tools':
      return `${head}  ${clean(event.service.name)} ${event.toolCount} tools (list v${event.toolListVersion})`;
    case 'approval.requested':
      return `${head}  ${clean(event.approval.id)} ${clean(event.approval.summary.serviceName)}/${showArg(registeredTool(event.approval))} ${showJson(event.approval.summary.arguments)}`;
    case 'approval.resolved':
      return `${head}  ${clean(event.approval.id)} ${clean(event.approval.state.status)}`;
    case 'tool.call.started':
      return `${head}  ${clean(event.call.service.name)}/${showArg(event.call.toolName)} (${clean(event.call.callId)})`;
    case 'tool.call.finished':
      return `${head}  ${clean(event.call.service.name)}/${showArg(event.call.toolName)} ok in ${event.durationMs} ms${event.truncated ? ' (truncated)' : ''}`;
    case 'tool.call.failed':
      return `${head}  ${clean(event.call.service.name)}/${showArg(event.call.toolName)} ${clean(event.code)}: ${clean(event.message)}`;
    case 'service.login':
      return `${head}  ${clean(event.service.name)} waits for a login: ${clean(event.authorizationUrl)}`;
    case 'install.progress':
      return `${head}  ${clean(event.install.package)}@${clean(event.install.version)} ${event.index}/${event.total} ${clean(event.step)} ${clean(event.status)}`;
    case 'install.finished':
      return `${head}  ${clean(event.attempt.package)}@${clean(event.attempt.version)} ${clean(event.attempt.status)}${event.attempt.serviceName !== null ? ` -> ${clean(event.attempt.serviceName)}` : ''}${event.attempt.error !== null ? ` ${clean(event.attempt.error.code)}` : ''}`;
    case 'session.created':
      return `${head}  ${clean(event.session.id)} ${clean(event.session.title)}`;
    case 'session.deleted':
      return `${head}  ${clean(event.sessionId)}`;
    case 'task.state':
      return `${head}  ${clean(event.sessionId)} task ${clean(event.task.id)} ${describeTaskState(event.task.state)}`;
    case 'model.delta':
      return `${head}  ${clean(event.sessionId)} ${clean(event.kind)} ${showJson(event.text)}`;
    case 'model.turn':
      return `${head}  ${clean(event.sessionId)} round ${event.round} ${clean(event.finishReason ?? '-')}${event.toolCalls.length > 0 ? `, ${event.toolCalls.length} tool calls` : ''}`;
    case 'storage.warning':
      return `${head}  ${showArg(event.file)}: ${clean(event.problem)}${event.movedTo !== null ? ` (now at ${showArg(event.movedTo)})` : ''}`;
    case 'daemon.stopping':
      return head;
    case 'daemon.recovered':
      return `${head}  ${event.servers.map((s) => `${clean(s.name)} pid ${s.pid} ${clean(s.outcome)}`).join(', ')}`;
  }
}

function describeTaskState(state: Task['state']): string {
  switch (state.status) {
    case 'running':
    case 'awaiting_approval':
      return state.status;
    case 'completed':
      return `completed (${clean(state.finishReason)})`;
    case 'failed':
      return `failed ${clean(state.code)}: ${clean(state.message)}`;
    case 'cancelled':
    case 'interrupted':
      return `${state.status}: ${clean(state.reason)}`;
  }
}

function describeConnection(state: ConnectionState): string {
  switch (state.status) {
    case 'disabled':
      return 'disabled';
    case 'activating':
      return `activating (${state.phase}${state.pid !== null ? `, pid ${state.pid}` : ''})`;
    case 'active':
      return `active (${state.pid !== null ? `pid ${state.pid}` : 'remote'}, ${state.toolCount} tools)`;
    case 'failed':
      return `failed ${clean(state.code)}: ${clean(state.message)}`;
    case 'needs_auth':
      return `needs_auth${state.authorizationServer !== null ? ` at ${clean(state.authorizationServer)}` : ''}: ${clean(state.message)} (wispctl mcp login NAME)`;
    case 'stopping':
      return 'stopping';
  }
}
