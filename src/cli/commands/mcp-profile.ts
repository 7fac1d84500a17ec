import type { Command } from 'commander';
import { WispError, type GatewayProfile } from '../../core/index.js';
import type { WispClient } from '../../control/client.js';
import type { CliContext } from '../context.js';
import { documentOutput } from '../output.js';
import { clean, showArg, table } from '../render.js';

/**
 * wispctl mcp profile add|list|show|edit|remove: named sets of services (kept by the daemon,
 * profiles.*) that `mcp serve --profile NAME` serves, so each MCP client sees only its own.
 */

const HELP = `
A profile is a named set of services: \`wispctl mcp serve --profile NAME\` (and the entry
\`wispctl mcp connect-client CLIENT --profile NAME\` writes, named wisp-NAME) serves exactly
those. The daemon keeps them (profiles.json in its data dir) by service id: a service renamed
stays in, a service deleted drops out (shown as dropped) and is never replaced by another of
the same name. An edit reaches gateways already serving the profile at once: their clients
get tools/list_changed. A profile removed serves nothing.
`;

const FIELDS = ['name', 'description', 'services', 'dropped', 'updatedAt'];

type AddOptions = { services: string; description?: string };
type EditOptions = { services?: string; add?: string; remove?: string; description?: string; clearDescription?: boolean };

/** The profile named, as the daemon has it now, or PROFILE_NOT_FOUND. */
export async function findProfile(client: WispClient, name: string): Promise<GatewayProfile> {
  const { profiles } = await client.call('profiles.list');
  const found = profiles.find((profile) => profile.name === name);
  if (found === undefined) throw new WispError('PROFILE_NOT_FOUND', `no profile named ${name} (wispctl mcp profile list shows them)`, { name });
  return found;
}

/** `--services a,b`: the names, blanks refused here (the daemon checks each name and that it is registered). */
function names(list: string, flag: string): string[] {
  const parsed = list.split(',').map((name) => name.trim());
  if (parsed.some((name) => name === '')) throw new WispError('INVALID_PARAMS', `${flag} takes service names, comma-separated (no empty ones)`);
  return parsed;
}

function memberList(members: GatewayProfile['services']): string {
  return members.length === 0 ? '(none)' : members.map((m) => showArg(m.name)).join(', ');
}

/** The profile as `mcp profile show` prints it. */
export function profileText(profile: GatewayProfile): string {
  const lines = [`profile ${clean(profile.name)}${profile.description !== null ? `: ${clean(profile.description)}` : ''}`, `  services: ${memberList(profile.services)}`];
  if (profile.dropped.length > 0) lines.push(`  dropped (deleted since, no longer served): ${memberList(profile.dropped)}`);
  lines.push(`  serve it: wispctl mcp serve --profile ${clean(profile.name)}  (or: wispctl mcp connect-client CLIENT --profile ${clean(profile.name)})`);
  return lines.join('\n');
}

export function profilesTable(profiles: readonly GatewayProfile[]): string {
  if (profiles.length === 0) return 'no profiles (add one: wispctl mcp profile add NAME --services a,b)';
  return table(
    ['PROFILE', 'SERVICES', 'DROPPED', 'DESCRIPTION'],
    profiles.map((p) => [p.name, p.services.map((m) => m.name).join(',') || '-', p.dropped.map((m) => m.name).join(',') || '-', p.description ?? '']),
  );
}

export function registerProfile(mcp: Command, ctx: CliContext): void {
  const profile = mcp.command('profile').description('named sets of services for mcp serve --profile: each MCP client sees only its own').addHelpText('after', HELP);
  const print = (value: GatewayProfile, verb: string): void => ctx.print(value, () => `${verb}\n${profileText(value)}`);
  profile
    .command('add')
    .description('add a profile of registered services (an unknown one is refused: SERVICE_NOT_FOUND)')
    .argument('<name>', 'the profile\'s name: 1-32 of A-Z a-z 0-9 _ -')
    .requiredOption('--services <names>', 'its services (comma-separated names)')
    .option('--description <text>', 'what it is for (one line)')
    .action((name: string, opts: AddOptions) =>
      ctx.withClient(async (client) => {
        const result = await client.call('profiles.set', { name, create: true, services: names(opts.services, '--services'), ...(opts.description !== undefined ? { description: opts.description } : {}) });
        print(result, `added profile ${clean(name)}`);
      }),
    );
  const list = profile
    .command('list')
    .alias('ls')
    .description('list the profiles')
    .action(() =>
      ctx.withClient(async (client) => {
        const { profiles } = await client.call('profiles.list');
        ctx.print(profiles, () => profilesTable(profiles));
      }),
    );
  documentOutput(list, { json: 'an array of profiles', fields: FIELDS });
  const show = profile
    .command('show')
    .description('show a profile: its services, and those deleted since (dropped)')
    .argument('<name>', 'the profile\'s name')
    .action((name: string) =>
      ctx.withClient(async (client) => {
        const found = await findProfile(client, name);
        ctx.print(found, () => profileText(found));
      }),
    );
  documentOutput(show, { json: 'one profile', fields: FIELDS });
  registerEdit(profile, ctx, print);
  profile
    .command('remove')
    .alias('rm')
    .description('remove a profile (a gateway serving it serves nothing from then on)')
    .argument('<name>', 'the profile\'s name')
    .action((name: string) =>
      ctx.withClient(async (client) => {
        const result = await client.call('profiles.delete', { name });
        ctx.print(result, () => `removed profile ${clean(name)} (it named ${memberList(result.services)})`);
      }),
    );
}

function registerEdit(profile: Command, ctx: CliContext, print: (value: GatewayProfile, verb: string) => void): void {
  profile
    .command('edit')
    .description('change a profile: --services replaces its services; --add and --remove change them; --description')
    .argument('<name>', 'the profile\'s name')
    .option('--services <names>', 'its services from now on (comma-separated names): the whole set')
    .option('--add <names>', 'add these services (comma-separated names)')
    .option('--remove <names>', 'take these services out (comma-separated names)')
    .option('--description <text>', 'what it is for (one line)')
    .option('--clear-description', 'no description from now on')
    .action((name: string, opts: EditOptions) =>
      ctx.withClient(async (client) => {
        if (opts.description !== undefined && opts.clearDescription === true) throw new WispError('INVALID_PARAMS', '--description or --clear-description, not both');
        const description = opts.description !== undefined ? { description: opts.description } : opts.clearDescription === true ? { description: null } : {};
        const result = await client.call('profiles.set', {
          name,
          ...(opts.services !== undefined ? { services: names(opts.services, '--services') } : {}),
          ...(opts.add !== undefined ? { add: names(opts.add, '--add') } : {}),
          ...(opts.remove !== undefined ? { remove: names(opts.remove, '--remove') } : {}),
          ...description,
        });
        print(result, `changed profile ${clean(name)}`);
      }),
    );
}
