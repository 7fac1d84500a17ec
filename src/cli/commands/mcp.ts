import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { EXIT, WispError, exitStatusFor } from '../../core/index.js';
import { parseArgsJson, parseNonNegative, ref } from '../args.js';
import type { CliContext } from '../context.js';
import { confirm } from '../prompt.js';
import { fitToTerminal, showArg, stderrColumns } from '../render.js';
import { activationQuestion, activationText, describeService, registeredText, removedText, servicesTable, stateLine, updatedText } from '../render/services.js';
import * as connectClient from './connect-client.js';
import * as env from './env.js';
import * as serve from './mcp-serve.js';
import * as sources from './sources.js';
import * as tools from './tools.js';

type EditOptions = { name?: string; argsJson?: string; cwd?: string | false; timeoutMs?: number };
type ServiceChange = { name?: string; command?: string; args?: string[]; cwd?: string | null; timeoutMs?: number | null };

/** wispctl mcp ...: registering, trusting and running MCP servers (tools, env and sources in their own files). */
export function register(program: Command, ctx: CliContext): void {
  const mcp = program.command('mcp').description('manage MCP server registrations');
  registerEditing(mcp, ctx);
  registerLifecycle(mcp, ctx);
  tools.register(mcp, ctx);
  env.register(mcp, ctx);
  sources.register(mcp, ctx);
  serve.register(mcp, ctx);
  // Last: it adds --print-config to the gateway's `mcp serve`.
  connectClient.register(mcp, ctx);
}

/** add, list, show, edit, remove. */
function registerEditing(mcp: Command, ctx: CliContext): void {
  mcp
    .command('add')
    .description('register a stdio MCP server (stored disabled; nothing runs)')
    .argument('<name>', 'unique name: 1-64 of A-Z a-z 0-9 . _ -')
    .argument('[command]', 'executable: an absolute path is best (a bare name is looked up on the daemon\'s PATH)')
    .argument('[args...]', 'arguments, passed item by item (put them after --)')
    .option('--args-json <json>', 'arguments as a JSON array of strings, instead of after --')
    .option('--cwd <dir>', 'absolute working directory')
    .option('--timeout-ms <ms>', 'deadline for initialize + discovery, and for each tool call (a progress notification from the server starts it again); 100-600000, default 10000', (v) => parseNonNegative(v, '--timeout-ms'))
    .addHelpText('after', '\nExample:\n  wispctl mcp add files -- /usr/local/bin/node /opt/mcp/files/server.js --root /home/me/docs')
    .action((name: string, command: string | undefined, args: string[], opts: { argsJson?: string; cwd?: string; timeoutMs?: number }) =>
      ctx.withClient(async (client) => {
        if (command === undefined) throw new WispError('INVALID_PARAMS', 'give the command after the name: wispctl mcp add NAME -- COMMAND [ARGS...]');
        const argList = opts.argsJson !== undefined ? parseArgsJson(opts.argsJson, args) : args;
        const { service } = await client.call('services.register', {
          name,
          command,
          args: argList,
          ...(opts.cwd !== undefined ? { cwd: opts.cwd } : {}),
          ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
        });
        warnShellLine(ctx, service.name, command, argList);
        ctx.print(service, () => registeredText(service));
      }),
    );

  mcp
    .command('list')
    .description('list registered services with their state (the status panel)')
    .action(() =>
      ctx.withClient(async (client) => {
        const { services } = await client.call('services.list');
        ctx.print(services, () => servicesTable(services));
      }),
    );

  mcp
    .command('show')
    .description('show one service')
    .argument('<name>', 'service name (or id)')
    .action((name: string) =>
      ctx.withClient(async (client) => {
        const { service } = await client.call('services.get', ref(name));
        ctx.print(service, () => describeService(service));
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
    .option('--timeout-ms <ms>', 'deadline for initialize + discovery, and for each tool call (a progress notification from the server starts it again); 100-600000; 0 restores the default', (v) => parseNonNegative(v, '--timeout-ms'))
    .action((name: string, command: string | undefined, args: string[], opts: EditOptions) =>
      ctx.withClient(async (client) => {
        const set = serviceChange(command, args, opts);
        const { service } = await client.call('services.update', { ...ref(name), set });
        if (set.command !== undefined) warnShellLine(ctx, service.name, set.command, set.args ?? []);
        ctx.print(service, () => updatedText(service));
      }),
    );

  mcp
    .command('remove')
    .alias('rm')
    .description('remove a service from the registry')
    .argument('<name>', 'service name (or id)')
    .action((name: string) =>
      ctx.withClient(async (client) => {
        const { deleted } = await client.call('services.delete', ref(name));
        ctx.print(deleted, () => removedText(deleted));
      }),
    );
}

/**
 * `-- "node server.js"` is one program name, not a shell line, and would fail only at
 * activation: a command with spaces that names no file gets a warning with the split form.
 */
function warnShellLine(ctx: CliContext, name: string, command: string, args: readonly string[]): void {
  if (!/\s/.test(command.trim()) || existsSync(command)) return;
  const split = [...command.trim().split(/\s+/), ...args].map(showArg).join(' ');
  ctx.io.err(`warning: the command ${showArg(command)} has spaces and no such file exists; it is one program name, not a shell line. Did you mean: wispctl mcp edit ${showArg(name)} -- ${split}`);
}

/** What `mcp edit` asks to change. */
function serviceChange(command: string | undefined, args: string[], opts: EditOptions): ServiceChange {
  const set: ServiceChange = {};
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
  return set;
}

/** activate, disable, refresh. */
function registerLifecycle(mcp: Command, ctx: CliContext): void {
  mcp
    .command('activate')
    // The word users reach for as disable's opposite: the same command, the same trust question.
    .alias('enable')
    .description('trust and activate a service: shows what will run, asks, then starts it and discovers its tools (alias: enable)')
    .argument('<name>', 'service name (or id)')
    .option('-y, --yes', 'do not ask (for scripts); you still trust exactly the configuration shown')
    .action((name: string, opts: { yes?: boolean }) =>
      ctx.withClient(async (client) => {
        const { service } = await client.call('services.get', ref(name));
        if (opts.yes !== true) {
          // Lines too wide for the terminal are broken by us, never wrapped by it.
          ctx.io.err(fitToTerminal(activationText(service), stderrColumns()));
          if (!(await confirm(activationQuestion(service), 'not a terminal, so nobody can confirm: pass --yes to trust this configuration'))) {
            ctx.io.err('not activated');
            process.exitCode = EXIT.refused;
            return;
          }
        }
        const result = await client.call('services.activate', { id: service.id, configVersion: service.configVersion });
        const c = result.service.connection;
        ctx.print(result.service, () => stateLine(result.service));
        if (c.status === 'failed') process.exitCode = exitStatusFor(c.code);
      }),
    );

  mcp
    .command('disable')
    .description('stop a service and withdraw its tools (again, while stopping: force it)')
    .argument('<name>', 'service name (or id)')
    .action((name: string) =>
      ctx.withClient(async (client) => {
        const { service } = await client.call('services.disable', ref(name));
        ctx.print(service, () => stateLine(service));
      }),
    );

  mcp
    .command('refresh')
    .description('discover the tools of an active service again')
    .argument('<name>', 'service name (or id)')
    .action((name: string) =>
      ctx.withClient(async (client) => {
        const { service } = await client.call('services.refreshTools', ref(name));
        ctx.print(service, () => stateLine(service));
        if (service.connection.status === 'failed') process.exitCode = exitStatusFor(service.connection.code);
      }),
    );
}
