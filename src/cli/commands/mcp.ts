import type { Command } from 'commander';
import { WispError, exitStatusFor } from '../../core/index.js';
import { absoluteDir, parseArgsJson, parseNonNegative, ref } from '../args.js';
import type { CliContext } from '../context.js';
import { documentSubcommand } from '../output.js';
import { servicesWideTable } from '../render/wide.js';
import { describeService, removedText, servicesTable, stateLine, updatedText } from '../render/services.js';
import * as connectClient from './connect-client.js';
import * as env from './env.js';
import { MEDIA_HELP, registerAdd, warnShellLine } from './mcp-add.js';
import { registerAddJson } from './mcp-add-json.js';
import { activateWithQuestion, failureTailOf, registerRestart, sandboxPlan } from './mcp-restart.js';
import { registerSandbox } from './mcp-sandbox.js';
import { registerAllow } from './mcp-allow.js';
import { registerProfile } from './mcp-profile.js';
import { planLines } from '../render/sandbox.js';
import { clean } from '../render.js';
import * as review from './review.js';
import * as serve from './mcp-serve.js';
import * as sources from './sources.js';
import * as tools from './tools.js';

type EditOptions = { name?: string; argsJson?: string; cwd?: string | false; timeoutMs?: number; url?: string; media?: boolean };
type ServiceChange = { name?: string; command?: string; args?: string[]; cwd?: string | null; timeoutMs?: number | null; url?: string; media?: boolean };

/** wispctl mcp ...: registering, trusting and running MCP servers (tools, env and sources in their own files). */
export function register(program: Command, ctx: CliContext): void {
  const mcp = program.command('mcp').description('manage MCP server registrations');
  registerEditing(mcp, ctx);
  registerLifecycle(mcp, ctx);
  registerRestart(mcp, ctx);
  registerSandbox(mcp, ctx);
  registerAllow(mcp, ctx);
  tools.register(mcp, ctx);
  review.register(mcp, ctx);
  env.register(mcp, ctx);
  sources.register(mcp, ctx);
  serve.register(mcp, ctx);
  registerProfile(mcp, ctx);
  const fields = ['id', 'name', 'transport', 'command', 'url', 'args', 'cwd', 'env', 'headers', 'origin', 'configVersion', 'connection', 'heldTools'];
  documentSubcommand(mcp, 'list', { json: 'an array of services', fields, wide: 'adds ID, VERSION (configVersion), ORIGIN and COMMAND OR URL' });
  documentSubcommand(mcp, 'show', { json: 'one service', fields });
  // Last: it adds --print-config to the gateway's `mcp serve`.
  connectClient.register(mcp, ctx);
}

/** add, list, show, edit, remove. */
function registerEditing(mcp: Command, ctx: CliContext): void {
  registerAdd(mcp, ctx);
  registerAddJson(mcp, ctx);

  mcp
    .command('list')
    .alias('ls')
    .description('list registered services with their state (the status panel; alias: ls)')
    .option('--names', 'only the names, one per line (for scripts and shell completion)')
    .action((opts: { names?: boolean }) =>
      ctx.withClient(async (client) => {
        const { services } = await client.call('services.list');
        if (opts.names === true) {
          const names = services.map((service) => service.name);
          ctx.print(names, () => names.join('\n'));
          return;
        }
        ctx.print(services, () => servicesTable(services), () => servicesWideTable(services));
      }),
    );

  mcp
    .command('show')
    .alias('get')
    .description('show one service (alias: get)')
    .argument('<name>', 'service name (or id)')
    .action((name: string) =>
      ctx.withClient(async (client) => {
        const { service } = await client.call('services.get', ref(name));
        // Text only: what the sandbox lets it see, worked out now (--json stays the service).
        const plan = ctx.json() ? undefined : await sandboxPlan(client, service);
        const seen = plan === undefined ? [] : 'error' in plan ? [`sandbox:  what it needs to run could not be worked out: ${clean(plan.error)}`] : planLines(service, plan.plan, '');
        // A failed one: why, where it failed (its last stderr lines), and how to follow its log.
        const tail = ctx.json() ? undefined : await failureTailOf(client, service);
        ctx.print(service, () => [describeService(service), ...seen, ...(tail !== undefined ? [tail] : [])].join('\n'));
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
    .option('--cwd <dir>', 'new working directory (a relative one is resolved against the current directory)', absoluteDir)
    .option('--no-cwd', 'clear the working directory')
    .option('--url <url>', 'a remote service\'s new URL (its saved OAuth login is forgotten)')
    .option('--timeout-ms <ms>', 'deadline for initialize + discovery, and for each tool call (a progress notification from the server starts it again); 100-600000; 0 restores the default', (v) => parseNonNegative(v, '--timeout-ms'))
    .option('--media', MEDIA_HELP)
    .option('--no-media', 'images, audio and binary resources become markers for MCP clients too (the default)')
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

/** What `mcp edit` asks to change. */
function serviceChange(command: string | undefined, args: string[], opts: EditOptions): ServiceChange {
  const set: ServiceChange = {};
  if (opts.timeoutMs !== undefined) set.timeoutMs = opts.timeoutMs === 0 ? null : opts.timeoutMs;
  if (opts.name !== undefined) set.name = opts.name;
  if (opts.url !== undefined) set.url = opts.url;
  if (opts.media !== undefined) set.media = opts.media;
  if (command !== undefined) {
    set.command = command;
    set.args = args;
  }
  if (opts.argsJson !== undefined) set.args = parseArgsJson(opts.argsJson, command !== undefined ? args : []);
  if (opts.cwd === false) set.cwd = null;
  else if (opts.cwd !== undefined) set.cwd = opts.cwd;
  if (Object.keys(set).length === 0) throw new WispError('INVALID_PARAMS', 'nothing to change: give --name, --url, --cwd, --no-cwd, --timeout-ms, --media, --no-media, --args-json or -- COMMAND [ARGS...]');
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
        await activateWithQuestion(client, ctx, service, opts.yes === true);
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
        // A refresh that found changed or new tools holds them: its state line says how many, and how to review them.
        ctx.print(service, () => stateLine(service));
        if (service.connection.status === 'failed') process.exitCode = exitStatusFor(service.connection.code);
      }),
    );
}
