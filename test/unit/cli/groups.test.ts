import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { cliContext } from '../../../src/cli/context.js';
import { GROUPS, groupsFor } from '../../../src/cli/main.js';

/** Issue 14: wispctl loads the command group its command line names, and only that one. */
describe('wispctl command groups', () => {
  it('each group registers exactly the top-level commands it is listed with', async () => {
    for (const group of GROUPS) {
      const program = new Command('wispctl');
      (await group.load()).register(program, cliContext(program, { out: () => undefined, err: () => undefined }));
      expect(program.commands.map((command) => command.name())).toEqual(group.commands);
    }
  });

  it('a command line loads the group owning its command word, past the global options', () => {
    const owner = (name: string) => GROUPS.filter((group) => group.commands.includes(name));
    expect(groupsFor(['node', 'wispctl', 'status'])).toEqual(owner('status'));
    expect(groupsFor(['node', 'wispctl', '--socket', '/s', '--json', 'mcp', 'list'])).toEqual(owner('mcp'));
    expect(groupsFor(['node', 'wispctl', '--data-dir=/d', 'send', 'x'])).toEqual(owner('chat'));
    expect(groupsFor(['node', 'wispctl', 'status', '--help'])).toEqual(owner('status'));
    expect(groupsFor(['node', 'wispctl', '-o', 'wide', 'sessions'])).toEqual(owner('sessions'));
    expect(groupsFor(['node', 'wispctl', '-ojson', '--output=wide', 'install', 'list'])).toEqual(owner('install'));
    // completion walks the whole command tree: every group.
    expect(groupsFor(['node', 'wispctl', 'completion', 'bash'])).toBe(GROUPS);
  });

  it('every group, when the command word is missing, unknown or follows an option it does not know', () => {
    for (const args of [[], ['--help'], ['help', 'status'], ['stauts'], ['-V'], ['--socket'], ['--', 'status'], ['--verbose', 'status']]) {
      expect(groupsFor(['node', 'wispctl', ...args]), args.join(' ')).toBe(GROUPS);
    }
  });
});
