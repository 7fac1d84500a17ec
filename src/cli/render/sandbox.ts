import type { NetPolicy, Result, SandboxMount, Service } from '../../core/index.js';
import { clean, showArg } from '../render.js';

/** A stdio service's sandbox, as wispctl shows it: every path is the daemon's record, cleaned. */

export type SandboxPlanResult = Result<'services.sandboxPlan'>;

/** How host grants and `ask` reach the network. */
const PROXIED = 'through Wisp\'s egress proxy, which checks every connection before any name is resolved and records it in the audit log (Linux; on macOS such a service does not start)';

export function netText(net: NetPolicy): string {
  switch (net.mode) {
    case 'none':
      return 'none (its own loopback only)';
    case 'all':
      return 'all (the host\'s network, unchecked: any host, your local services too)';
    case 'hosts':
      return `only ${net.hosts.map(showArg).join(', ')}; ${PROXIED}`;
    case 'ask':
      return `ask for each new host (a network.connect approval: once, or always)${net.hosts !== undefined && net.hosts.length > 0 ? ` (granted: ${net.hosts.map(showArg).join(', ')})` : ''}; ${PROXIED}`;
  }
}

/** What --no-sandbox gives away, in words (add, show, the trust prompt). */
export const UNSANDBOXED = 'it runs as you, unsandboxed: it can read and write every file you can (~/.ssh, ~/.aws, your browser\'s profile, Wisp\'s own data), reach any host, and signal your processes';

/** The SANDBOX cell of `mcp list`. */
export function sandboxCell(service: Service): string {
  const s = service.sandbox;
  switch (s.status) {
    case 'on':
      return `on, net ${s.net.mode}`;
    case 'off':
      return 'OFF';
    case 'legacy':
      return 'not sandboxed';
    case 'remote':
      return '-';
  }
}

/** The sandbox lines of `mcp show` (and of add and edit), from the stored profile. */
export function sandboxLines(service: Service, label: string): string[] {
  const s = service.sandbox;
  const pad = ' '.repeat(label.length);
  const name = showArg(service.name);
  switch (s.status) {
    case 'remote':
      return [];
    case 'legacy':
      return [`${label}not sandboxed (registered before sandboxes existed) — turn it on with: wispctl mcp sandbox ${name} --on`];
    case 'off':
      return [`${label}OFF (--no-sandbox): ${UNSANDBOXED}; turn it on with: wispctl mcp sandbox ${name} --on`];
    case 'on':
      return [
        `${label}on: it sees what it needs to run (read-only), its cwd (read-write), a private empty $HOME and /tmp, and these grants:`,
        `${pad}read:    ${s.read.length === 0 ? '(none)' : s.read.map(showArg).join(', ')}`,
        `${pad}write:   ${s.write.length === 0 ? '(none)' : s.write.map(showArg).join(', ')}`,
        `${pad}network: ${netText(s.net)}`,
        ...(s.allowed !== undefined && s.allowed.length > 0 ? [`${pad}allowed: ${s.allowed.map(showArg).join(', ')} (live grants: revoke with wispctl mcp allow ${name} HOST --revoke)`] : []),
      ];
  }
}

const WHY: Record<SandboxMount['why'], string> = {
  system: 'the system',
  runtime: 'the program',
  interpreter: 'its interpreter',
  script: 'the script or package its command or args name',
  venv: 'its virtualenv',
  cwd: 'its cwd',
  granted: 'granted',
  home: 'its private $HOME',
  tmp: 'its private /tmp',
};

const ACCESS = { write: 'read-write', read: 'read-only ', tmpfs: 'empty     ' } as const;

/**
 * Every path a sandboxed launch will see, grouped by access and reason, the network, the
 * task limit, the paths its args name that are not granted (with the command that grants
 * them), and whether the sandbox can be had here. What the trust prompt shows.
 */
export function planLines(service: Service, plan: SandboxPlanResult['plan'], indent: string): string[] {
  if (plan === null) return [];
  const groups = new Map<string, { access: SandboxMount['access']; why: SandboxMount['why']; paths: string[] }>();
  for (const mount of plan.mounts) {
    const key = `${mount.access} ${mount.why}`;
    const group = groups.get(key) ?? { access: mount.access, why: mount.why, paths: [] };
    group.paths.push(showArg(mount.path));
    groups.set(key, group);
  }
  const rank = { write: 0, tmpfs: 1, read: 2 } as const;
  const listed = [...groups.values()].sort((a, b) => rank[a.access] - rank[b.access]);
  const name = showArg(service.name);
  return [
    `${indent}it will see only these paths (everything else, your home and Wisp's data and socket included, is absent):`,
    ...listed.map((g) => `${indent}  ${ACCESS[g.access]} ${g.paths.join(', ')}  (${WHY[g.why]})`),
    `${indent}network:      ${plan.network === 'proxy' ? `only the hosts granted (${PROXIED})` : plan.network === 'host' ? 'the host\'s, unchecked' : 'none (its own loopback only)'}`,
    `${indent}processes:    ${plan.taskLimit !== null ? `at most ${plan.taskLimit} tasks at once` : 'no limit set (no prlimit found)'}`,
    ...plan.offered.map((o) => `${indent}not granted:  ${clean(o.field)} names ${showArg(o.path)}; it will not see it unless you grant it: wispctl mcp sandbox ${name} --allow-read ${showArg(o.path)} (or --allow-write)`),
    ...plan.warnings.map((w) => `${indent}warning:      ${clean(w)}`),
    ...(plan.available ? [] : [`${indent}UNAVAILABLE:  ${clean(plan.reason ?? '')}: activation will fail (SANDBOX_UNAVAILABLE); install bubblewrap, or turn the sandbox off (wispctl mcp sandbox ${name} --off)`]),
  ];
}
