import { WispError } from '../core/index.js';

/**
 * Wisp's own gateway (`wispctl mcp serve`) as a service of the daemon: it lists every tool
 * the daemon offers, and announces each change (tools/list_changed), so as a service of that
 * same daemon each refresh of its tools changes the daemon's tools, which it announces again:
 * a loop (about 1,000 events in 18 s at 87% CPU before the refresh throttle). Whatever daemon
 * it points at (its --socket, --data-dir or environment may name this one, and we cannot
 * tell from the entry alone), it is a client of Wisp, never a server for it: an import or a
 * config source skips such an entry, registering one (or editing a service into one) is
 * refused, and activation refuses one stored before that (SELF_GATEWAY).
 *
 * What `wispctl mcp connect-client` and `mcp serve --print-config` write is
 * `<node> <.../bin/wispctl.js> --socket S [--data-dir D] mcp serve [...]`; people also write
 * `wispctl mcp serve`, `npx -p wisp-host wispctl mcp serve`, or the same through `sh -c` or
 * `env`. Any stdio entry whose command line holds a program named wispctl (wispctl.js,
 * wispctl.cmd...) followed later by the words `mcp serve` is one.
 */

/** bin/wispctl.js, the npm shims (wispctl, wispctl.cmd, wispctl.ps1), a Windows build. */
const WISPCTL = /^wispctl(?:\.(?:c|m)?js|\.cmd|\.ps1|\.exe)?$/i;

export interface LaunchLine {
  readonly transport?: string | undefined;
  readonly command: string;
  readonly args: readonly string[];
}

/** The words of a command line: each argument, split on white space too (a `sh -c "wispctl mcp serve"` holds the whole line in one). */
function words(line: LaunchLine): string[] {
  return [line.command, ...line.args].flatMap((arg) => arg.split(/\s+/)).filter((word) => word !== '');
}

/** The last path component, whichever separator the entry's OS uses. */
function baseName(word: string): string {
  return word.slice(Math.max(word.lastIndexOf('/'), word.lastIndexOf('\\')) + 1).replace(/^["']|["']$/g, '');
}

/** Whether the launch runs Wisp's gateway (`wispctl ... mcp serve`). */
export function isWispGateway(line: LaunchLine): boolean {
  if (line.transport !== undefined && line.transport !== 'stdio') return false;
  const list = words(line);
  const program = list.findIndex((word) => WISPCTL.test(baseName(word)));
  if (program === -1) return false;
  for (let i = program + 1; i < list.length - 1; i++) {
    if (list[i] === 'mcp' && list[i + 1] === 'serve') return true;
  }
  return false;
}

/** The refusal, naming the service (or entry). */
export function selfGatewayError(name: string, action: 'activated' | 'skipped' | 'registered'): WispError {
  const outcome = { activated: 'not activated', skipped: 'skipped', registered: 'not registered (nothing was stored)' }[action];
  return new WispError(
    'SELF_GATEWAY',
    `${name} runs Wisp's own gateway (wispctl mcp serve): it would serve the daemon's services back to it, so each tool-list change would echo in a loop. ` +
      `It is a client of Wisp (what wispctl mcp connect-client writes into an MCP client's config), not a server for it: ${outcome}` +
      (action === 'activated' ? `; remove it with wispctl mcp remove ${name}` : ''),
    { name },
  );
}
