import { statSync } from 'node:fs';
import path from 'node:path';
import { Option, type Command } from 'commander';
import { WispError, type NetPolicy, type Params, type Service } from '../../core/index.js';
import { ref } from '../args.js';
import type { CliContext } from '../context.js';
import { showArg } from '../render.js';
import { planLines, UNSANDBOXED } from '../render/sandbox.js';
import { describeService } from '../render/services.js';

/**
 * A stdio service's sandbox on the command line: the flags of `mcp add` and the `mcp sandbox`
 * command that changes it (an edit: a new configVersion, the service disabled until trusted
 * again). Paths are made absolute here, against the current directory, and must exist; the
 * daemon checks them again.
 */

export type SandboxProfile = NonNullable<Params<'services.register'>['sandbox']>;
const NET_MODES = ['none', 'ask', 'all'] as const;

export interface SandboxFlags {
  allowRead: string[];
  allowWrite: string[];
  allowNet: string[];
  net?: (typeof NET_MODES)[number];
  /** commander's --no-sandbox: false when given. */
  sandbox: boolean;
}

const collect = (value: string, previous: string[]): string[] => [...previous, value];

export const NO_SANDBOX_HELP = `run it without a sandbox: ${UNSANDBOXED}`;

/** --allow-read, --allow-write, --allow-net, --net and (for add) --no-sandbox. */
export function addSandboxOptions(command: Command, withOff: boolean): Command {
  command
    .option('--allow-read <path>', 'stdio sandbox: a file or directory it may read (repeat for more); made absolute, must exist', collect, [])
    .option('--allow-write <path>', 'stdio sandbox: a file or directory it may read and write (repeat for more); its cwd is granted already', collect, [])
    .option('--allow-net <host[:port]>', 'stdio sandbox: a host it may reach, through the egress proxy (repeat for more; Linux only)', collect, [])
    .addOption(new Option('--net <mode>', 'stdio sandbox network: none (default: its own loopback only), ask (a human is asked for each host and port not granted: wispctl approve ID, or --always to grant it; Linux only), all (any host, unchecked)').choices(NET_MODES));
  if (withOff) command.option('--no-sandbox', NO_SANDBOX_HELP);
  return command;
}

/** A path as given, made absolute against the current directory, checked to exist. */
export function grantPath(given: string, flag: string): string {
  if (given.includes('\0') || /[\r\n]/.test(given)) throw new WispError('INVALID_PARAMS', `${flag}: a path must not contain NUL or a line break`);
  if (given === '') throw new WispError('INVALID_PARAMS', `${flag}: give a path`);
  const absolute = path.resolve(given);
  try {
    statSync(absolute);
  } catch {
    throw new WispError('INVALID_PARAMS', `${flag} ${showArg(given)}: ${showArg(absolute)} does not exist (create it first, or give a path that exists)`);
  }
  return absolute;
}

/** The network a profile gets from --net and --allow-net, on top of what it had. */
function netOf(flags: SandboxFlags, current: NetPolicy): NetPolicy {
  const hosts = [...(current.mode === 'hosts' || current.mode === 'ask' ? (current.hosts ?? []) : []), ...flags.allowNet.map((h) => h.toLowerCase())];
  const unique = [...new Set(hosts)];
  const mode = flags.net ?? (flags.allowNet.length > 0 && (current.mode === 'none' || current.mode === 'all') ? 'hosts' : current.mode);
  if ((mode === 'none' || mode === 'all') && flags.allowNet.length > 0) {
    throw new WispError('INVALID_PARAMS', `--allow-net with --net ${mode} means nothing: ${mode === 'all' ? 'all reaches every host already' : 'none reaches no host'}; give --allow-net alone, or --net ask`);
  }
  if (mode === 'hosts') return { mode: 'hosts', hosts: unique };
  if (mode === 'ask') return unique.length > 0 ? { mode: 'ask', hosts: unique } : { mode: 'ask' };
  return { mode };
}

/** What a profile becomes with these flags (added to `current`, or to the default). */
export function profileFrom(flags: SandboxFlags, current?: SandboxProfile): SandboxProfile {
  const base: SandboxProfile = current ?? { enabled: true, read: [], write: [], net: { mode: 'none' } };
  const read = [...new Set([...base.read, ...flags.allowRead.map((p) => grantPath(p, '--allow-read'))])];
  const write = [...new Set([...base.write, ...flags.allowWrite.map((p) => grantPath(p, '--allow-write'))])];
  return { enabled: base.enabled, read, write, net: netOf(flags, base.net) };
}

/** Whether any sandbox flag was given (they mean nothing for a remote server, or with --no-sandbox). */
export function anySandboxFlag(flags: SandboxFlags): boolean {
  return flags.allowRead.length > 0 || flags.allowWrite.length > 0 || flags.allowNet.length > 0 || flags.net !== undefined;
}

/** The `sandbox` of services.register for `mcp add`: the default, these grants, or off. */
export function addProfile(flags: SandboxFlags): SandboxProfile {
  if (!flags.sandbox) {
    if (anySandboxFlag(flags)) throw new WispError('INVALID_PARAMS', '--no-sandbox gives the server every file and host you have: --allow-read, --allow-write, --allow-net and --net mean nothing with it');
    return { enabled: false, read: [], write: [], net: { mode: 'none' } };
  }
  return profileFrom(flags);
}

type EditFlags = SandboxFlags & { on?: boolean; off?: boolean; revoke: string[]; revokeNet: string[] };

/** The profile `mcp sandbox` asks for, from the service as it is. */
export function editedProfile(service: Service, flags: EditFlags): SandboxProfile {
  if (flags.on === true && flags.off === true) throw new WispError('INVALID_PARAMS', 'give --on or --off, not both');
  const s = service.sandbox;
  const current: SandboxProfile | undefined = s.status === 'on' ? { enabled: true, read: s.read, write: s.write, net: s.net } : undefined;
  if (flags.off === true) {
    if (anySandboxFlag(flags)) throw new WispError('INVALID_PARAMS', '--off gives the server every file and host you have: grants mean nothing with it');
    return { enabled: false, read: current?.read ?? [], write: current?.write ?? [], net: current?.net ?? { mode: 'none' } };
  }
  if (current === undefined && flags.on !== true) {
    throw new WispError('INVALID_PARAMS', `${showArg(service.name)} is not sandboxed (${s.status}): turn it on with --on (grants may come with it)`);
  }
  const revoked = new Set(flags.revoke.map((p) => path.resolve(p)));
  const kept: SandboxProfile = current !== undefined ? { ...current, read: current.read.filter((p) => !revoked.has(p)), write: current.write.filter((p) => !revoked.has(p)) } : { enabled: true, read: [], write: [], net: { mode: 'none' } };
  const next = profileFrom(flags, kept);
  if (flags.revokeNet.length === 0 || next.net.mode === 'none' || next.net.mode === 'all') return next;
  const gone = new Set(flags.revokeNet.map((h) => h.toLowerCase()));
  const hosts = (next.net.hosts ?? []).filter((h) => !gone.has(h));
  return { ...next, net: next.net.mode === 'ask' ? { mode: 'ask', hosts } : hosts.length > 0 ? { mode: 'hosts', hosts } : { mode: 'none' } };
}

/** wispctl mcp sandbox NAME: show a service's sandbox, or change it. */
export function registerSandbox(mcp: Command, ctx: CliContext): void {
  const command = mcp
    .command('sandbox')
    .description('show what a stdio service\'s sandbox lets it see, or change it (an edit: it is disabled and must be trusted again)')
    .argument('<name>', 'service name (or id)')
    .option('--on', 'sandbox it (a service registered before sandboxes runs unsandboxed until you do)')
    .option('--off', NO_SANDBOX_HELP)
    .option('--revoke <path>', 'take back a --allow-read or --allow-write grant (repeat for more)', collect, [])
    .option('--revoke-net <host[:port]>', 'take back a --allow-net grant (repeat for more)', collect, []);
  addSandboxOptions(command, false).action((name: string, flags: EditFlags) =>
    ctx.withClient(async (client) => {
      const { service } = await client.call('services.get', ref(name));
      const changing = flags.on === true || flags.off === true || anySandboxFlag(flags) || flags.revoke.length > 0 || flags.revokeNet.length > 0;
      const shown = changing ? (await client.call('services.update', { id: service.id, configVersion: service.configVersion, set: { sandbox: editedProfile(service, flags) } })).service : service;
      if (shown.sandbox.status === 'off' && changing) ctx.io.err(`warning: ${showArg(shown.name)}: ${UNSANDBOXED}`);
      const plan = shown.sandbox.status === 'on' ? await client.call('services.sandboxPlan', { id: shown.id }).catch(() => undefined) : undefined;
      ctx.print(shown, () => [changing ? `updated ${showArg(shown.name)} (disabled, configVersion ${shown.configVersion}): trust it again with wispctl mcp activate ${showArg(shown.name)}` : '', describeService(shown), ...planLines(shown, plan?.plan ?? null, '')].filter((l) => l !== '').join('\n'));
    }),
  );
}
