import { spawnSync } from 'node:child_process';
import { chownSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import type { Service, WispEvent } from '../../src/core/index.js';
import type { EventLog } from './services.js';
import { needs } from './skips.js';

export const hostileServer = path.join(path.dirname(new URL(import.meta.url).pathname), '..', '..', 'fixtures', 'servers', 'hostile-server.mjs');

/** Where the daemon looks for bwrap (src/mcp/sandbox/host.ts). */
const BWRAP = ['/usr/bin/bwrap', '/bin/bwrap', '/usr/local/bin/bwrap'].find((file) => existsSync(file));

/** Whether bubblewrap can make a sandbox here (installed, user namespaces allowed). */
export const sandboxUsable =
  BWRAP !== undefined &&
  spawnSync(BWRAP, ['--unshare-user', '--unshare-pid', '--unshare-net', '--die-with-parent', '--ro-bind', '/usr', '/usr', '--symlink', 'usr/bin', '/bin', '--symlink', 'usr/lib', '/lib', '--symlink', 'usr/lib64', '/lib64', '/usr/bin/true'], { stdio: 'ignore' }).status === 0;
needs(sandboxUsable, 'bubblewrap cannot make a sandbox here (apt-get install bubblewrap; user namespaces): the sandbox tests');

/**
 * `describe` for sandbox tests: skipped where bubblewrap cannot run, unless
 * WISP_REQUIRE_SANDBOX=1 (CI sets it), where that is a failure, as the keyring tests do.
 */
export function describeSandbox(name: string, body: () => void): void {
  if (!sandboxUsable && process.env.WISP_REQUIRE_SANDBOX === '1') {
    describe(name, () => {
      throw new Error('WISP_REQUIRE_SANDBOX=1, but bubblewrap cannot make a sandbox here: apt-get install bubblewrap (and allow unprivileged user namespaces)');
    });
    return;
  }
  describe.skipIf(!sandboxUsable)(name, body);
}

/** The uid the kernel limits: root is exempt from RLIMIT_NPROC, so as root the daemon runs as nobody. */
export const NOBODY = 65534;
export const runningAsRoot = process.getuid?.() === 0;

/**
 * How to start a daemon as an ordinary user: as root, `setpriv` to nobody (its files chowned
 * to it); otherwise as ourselves. A daemon run as root is not what users run, and root is
 * exempt from the task limit.
 */
export function asOrdinaryUser(...owned: string[]): string[] {
  if (!runningAsRoot) return [];
  for (const dir of owned) chownSync(dir, NOBODY, NOBODY);
  const wrap = ['setpriv', `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups'];
  // The daemon and the fixture come from this checkout: nobody must be able to read it.
  const probe = spawnSync(wrap[0] ?? 'setpriv', [...wrap.slice(1), process.execPath, '-e', `require('fs').accessSync(${JSON.stringify(hostileServer)})`], { stdio: 'ignore' });
  if (probe.status !== 0) throw new Error(`as root, this test runs the daemon as nobody (root is exempt from the task limit), and nobody cannot read ${hostileServer}: make the checkout readable by others, or run the tests as an ordinary user`);
  return wrap;
}


/** A profile without the sandbox (what --no-sandbox registers). */
export const NO_SANDBOX: { enabled: false; read: string[]; write: string[]; net: { mode: 'none' } } = { enabled: false, read: [], write: [], net: { mode: 'none' } };

/** Calls a tool and approves it from `human`; resolves with the text the tool answered. */
export async function callApproved(asker: WispClient, human: WispClient, humanLog: EventLog, service: Service, toolName: string, args: Record<string, unknown>): Promise<string> {
  const asked = humanLog.next((e) => e.type === 'approval.requested') as Promise<Extract<WispEvent, { type: 'approval.requested' }>>;
  const pending = asker.call('tools.call', { serviceId: service.id, toolName, arguments: args });
  pending.catch(() => undefined);
  const { approval } = await asked;
  await human.call('approvals.respond', { id: approval.id, decision: 'approve' });
  return (await pending).text;
}

/** Every live process below `pid` (children, theirs, ...), from /proc. */
export function descendants(pid: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (fields[0] !== 'Z') parents.set(Number(entry), Number(fields[1]));
    } catch {
      // gone meanwhile
    }
  }
  const found: number[] = [];
  const walk = (parent: number): void => {
    for (const [child, ppid] of parents) {
      if (ppid === parent && !found.includes(child)) {
        found.push(child);
        walk(child);
      }
    }
  };
  walk(pid);
  return found;
}
