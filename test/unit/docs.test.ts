import { readdirSync, readFileSync } from 'node:fs';
import { Kind } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { ERROR_CODES } from '../../src/core/index.js';
import * as wire from '../../src/core/wire/index.js';
import { methods, openRpcDocument, renderErrorsMarkdown, renderProtocolMarkdown } from '../../src/core/wire/index.js';
import { renderCliReference } from '../../scripts/cli-reference.mjs';

const read = (file: string) => readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');

/** The guides besides the wispctl one whose `wispctl ...` lines must name real commands. */
const GUIDES = ['docs/gateway.md', 'docs/panel.md', 'docs/approvals.md', 'docs/model.md', 'docs/servers.md', 'docs/installs.md', 'docs/running.md', 'docs/development.md', 'docs/testing.md', 'docs/security.md', 'docs/operations.md'];

/** One wispctl command as its own --help describes it. */
interface CliCommand {
  readonly path: readonly string[];
  /** It takes arguments (its usage line names some). */
  readonly takesArguments: boolean;
  /** Its subcommands, by name and alias. */
  readonly children: ReadonlyMap<string, CliCommand>;
}

/** What `wispctl <path> --help` prints, from the CLI's own entry point (the one bin/wispctl.js runs). */
async function helpOf(path: readonly string[]): Promise<string> {
  let text = '';
  const exitCode = process.exitCode;
  await main(['node', 'wispctl', ...path, '--help'], { out: (line) => (text += `${line}\n`), err: (line) => (text += `${line}\n`) });
  expect(process.exitCode, `wispctl ${path.join(' ')} --help`).toBe(0);
  process.exitCode = exitCode;
  return text;
}

/** The whole command tree of wispctl, read from --help at every level. */
async function cliTree(path: readonly string[] = []): Promise<CliCommand> {
  const help = await helpOf(path);
  const usage = /^Usage: wispctl(.*)$/m.exec(help)?.[1] ?? '';
  expect(usage.trim().startsWith(path.join(' ')), `the usage line of wispctl ${path.join(' ')}: ${usage}`).toBe(true);
  const listing = help.split(/^Commands:$/m)[1]?.split(/\n\s*\n/)[0] ?? '';
  const children = new Map<string, CliCommand>();
  for (const [, names] of listing.matchAll(/^ {2}(\S+)/gm)) {
    const [name, ...aliases] = (names ?? '').split('|');
    if (name === undefined || name === 'help') continue;
    const child = await cliTree([...path, name]);
    for (const key of [name, ...aliases]) children.set(key, child);
  }
  const takesArguments = /[<[]/.test(usage.replace(/\[options\]|\[command\]/g, ''));
  return { path, takesArguments, children };
}

/** Every `wispctl ...` the README shows: in code blocks, inline code and the command table (whose `sessions show ID` means `wispctl sessions show ID`). */
function readmeInvocations(readme: string): string[] {
  const found: string[] = [];
  const take = (text: string): void => {
    for (const match of text.matchAll(/(?:^|[\s(/])(?:bin\/)?wispctl(?:\.js)? +([^`|#\n]*)/g)) found.push((match[1] ?? '').trim());
  };
  readme.split(/^```.*$/m).forEach((part, i) => {
    if (i % 2 === 1) return take(part);
    for (const line of part.split('\n')) {
      const spans = [...line.matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? '');
      if (line.startsWith('| `wispctl ')) {
        const firstCell = line.split(/(?<!\\)\|/)[1] ?? '';
        for (const [, span] of firstCell.matchAll(/`([^`]+)`/g)) take(span?.startsWith('wispctl ') === true ? span : `wispctl ${span ?? ''}`);
      } else spans.forEach(take);
    }
  });
  return found;
}

/** The command an invocation names, or why it names none. */
function resolve(tree: CliCommand, invocation: string): CliCommand | string {
  let node = tree;
  for (const token of invocation.split(/\s+/)) {
    if (!/^[a-z][a-z0-9-]*$/.test(token)) break;
    const child = node.children.get(token);
    if (child !== undefined) {
      node = child;
      continue;
    }
    if (!node.takesArguments) return `"wispctl ${[...node.path, token].join(' ')}" is not a command (wispctl ${node.path.join(' ')} has ${node.children.size > 0 ? `only ${[...node.children.keys()].join(', ')}` : 'no subcommands and takes no arguments'})`;
    break;
  }
  return node === tree ? `"wispctl ${invocation}" names no command` : node;
}

/** Every JSON node of every code block of a markdown text, counted by its text. */
function jsonNodeCounts(markdown: string): Map<string, number> {
  const count = new Map<string, number>();
  const visit = (node: unknown): void => {
    if (typeof node !== 'object' || node === null) return;
    count.set(JSON.stringify(node), (count.get(JSON.stringify(node)) ?? 0) + 1);
    Object.values(node).forEach(visit);
  };
  const blocks = [...markdown.matchAll(/^```json\n([\s\S]*?)\n```$/gm)].map((m) => JSON.parse(m[1] ?? '') as unknown);
  expect(blocks.length).toBeGreaterThan(Object.keys(methods).length);
  blocks.forEach(visit);
  return count;
}

describe('documentation stays true to the code', () => {
  it('docs/protocol.md and docs/errors.md match the protocol definition (run `npm run docs`)', () => {
    expect(read('docs/protocol.md')).toBe(renderProtocolMarkdown());
    expect(read('docs/errors.md')).toBe(renderErrorsMarkdown());
  });

  it('docs/cli.md is every command\'s --help as wispctl prints it (run `npm run docs`)', async () => {
    const reference = await renderCliReference(main);
    expect(read('docs/cli.md')).toBe(reference);
    expect(reference).toContain('## wispctl mcp add\n');
  });

  it('the README is a front door: at most 250 lines, and it links every guide in docs/', () => {
    const readme = read('README.md');
    expect(readme.split('\n').length).toBeLessThanOrEqual(250);
    const guides = readdirSync(new URL('../../docs/', import.meta.url)).filter((file) => file.endsWith('.md'));
    expect(guides.length).toBeGreaterThan(10);
    for (const guide of guides) expect(readme, guide).toContain(`](docs/${guide})`);
  });

  // The bound grows with the protocol, a section per method: 4,000 until the gateway's resources and prompts (issue 35) added five, 4,400 until offers.review and offers.accept.
  it('docs/protocol.md is readable: under 4,800 lines, every shared shape written out once and referenced elsewhere', () => {
    const doc = renderProtocolMarkdown();
    expect(doc.split('\n').length).toBeLessThan(4800);
    // The exported schemas specific enough that an equal copy means the same shape.
    const shared = Object.entries(wire).filter(
      ([, value]) => typeof value === 'object' && Kind in value && ['description', 'properties', 'anyOf'].some((key) => Object.hasOwn(value, key)),
    );
    expect(shared.map(([name]) => name)).toEqual(expect.arrayContaining(['ConnectionState', 'Service', 'Approval', 'Task', 'ToolInfo']));
    const count = jsonNodeCounts(doc);
    const documented = shared.filter(([name]) => doc.includes(`\n### ${name}\n`));
    expect(documented.map(([name]) => name)).toEqual(expect.arrayContaining(['ConnectionState', 'Service', 'Approval', 'Task', 'ToolInfo']));
    for (const [name, schema] of shared) {
      const whole = JSON.stringify(schema);
      const section = new RegExp(`\n### ${name}\n[^\`]*\`\`\`json\n([\\s\\S]*?)\n\`\`\`\n`).exec(doc)?.[1];
      if (section === undefined) {
        expect(count.get(whole) ?? 0, `${name} is not documented, so it must not be written out anywhere either`).toBe(0);
        continue;
      }
      // Its section, with the shapes it contains referenced, occurs once; the schema written out whole never occurs elsewhere.
      const referenced = JSON.stringify(JSON.parse(section));
      expect(count.get(referenced), `${name} written out`).toBe(1);
      if (referenced !== whole) expect(count.get(whole) ?? 0, `${name} written out whole`).toBe(0);
      expect(doc, `${name} is linked to`).toContain(`[${name}](#${name.toLowerCase()})`);
    }
  });

  it('the guides name every error code where it comes up (beside docs/errors.md, which lists them all)', () => {
    const guides = ['docs/wispctl.md', ...GUIDES].map(read).join('\n');
    for (const code of ERROR_CODES) expect(guides, code).toContain(`\`${code}\``);
  });

  it('every wispctl command the README and the guides show exists, and the wispctl guide shows every command wispctl has', async () => {
    const tree = await cliTree();
    // main ran once per command: it tells stdout and stderr to stop quietly on a closed pipe once, not at each run.
    const listeners = () => [process.stdout.listenerCount('error'), process.stderr.listenerCount('error')];
    const before = listeners();
    await helpOf(['mcp']);
    expect(listeners()).toEqual(before);
    const guideInvocations = readmeInvocations(read('docs/wispctl.md'));
    expect(guideInvocations.length).toBeGreaterThan(50);
    const elsewhere = ['README.md', ...GUIDES].flatMap((file) => readmeInvocations(read(file)));
    const invocations = [...guideInvocations, ...elsewhere];
    const named = new Set<CliCommand>();
    const wrong: string[] = [];
    for (const invocation of invocations) {
      const command = resolve(tree, invocation);
      if (typeof command === 'string') wrong.push(command);
      else if (guideInvocations.includes(invocation)) named.add(command);
    }
    expect(wrong).toEqual([]);
    const all = new Set<CliCommand>();
    const walk = (node: CliCommand): void => {
      if (node !== tree) all.add(node);
      node.children.forEach(walk);
    };
    walk(tree);
    expect(all.size).toBeGreaterThan(40);
    const missing = [...all].filter((command) => !named.has(command) && command.children.size === 0).map((command) => `wispctl ${command.path.join(' ')}`);
    expect(missing).toEqual([]);
  });

  it('rpc.discover describes every method with its params', () => {
    const doc = openRpcDocument('1.2.3') as unknown as { methods: { name: string; params: { name: string; required: boolean }[] }[] };
    expect(doc.methods.map((m) => m.name)).toEqual(Object.keys(methods));
    const register = doc.methods.find((m) => m.name === 'services.register');
    expect(register?.params.map((p) => [p.name, p.required])).toEqual([
      ['name', true],
      ['command', true],
      ['args', false],
      ['cwd', false],
      ['timeoutMs', false],
      ['sandbox', false],
      ['media', false],
    ]);
  });
});
