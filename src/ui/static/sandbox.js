// A stdio service's sandbox on the panel, as wispctl shows it: the stored profile in one
// line, and before trust every path it will see (services.sandboxPlan), its network and the
// paths its args name that it will not see.
import { html, useEffect, useState } from './html.js';
import { errorText } from './format.js';
import { call } from './store.js';

const PROXIED = 'through Wisp\'s egress proxy, which checks every connection before any name is resolved and records it in the audit log (Linux; on macOS such a service does not start)';
export const UNSANDBOXED = 'it runs as you, unsandboxed: it can read and write every file you can (~/.ssh, ~/.aws, your browser\'s profile, Wisp\'s own data), reach any host, and signal your processes';

function netText(net) {
  if (net.mode === 'none') return 'no network (its own loopback only)';
  if (net.mode === 'all') return 'the host\'s network, unchecked';
  const hosts = (net.hosts ?? []).join(', ');
  return `${net.mode === 'ask' ? `ask for each new host (a network.connect approval: once, or always)${hosts !== '' ? ` (granted: ${hosts})` : ''}` : `only ${hosts}`}; ${PROXIED}`;
}

/** The stored profile, in one line (the detail's "sandbox" field). */
export function sandboxText(service) {
  const s = service.sandbox;
  if (s === undefined || s.status === 'remote') return null;
  if (s.status === 'legacy') return `not sandboxed (registered before sandboxes existed): turn it on with wispctl mcp sandbox ${service.name} --on`;
  if (s.status === 'off') return `OFF (--no-sandbox): ${UNSANDBOXED}`;
  const allowed = s.allowed !== undefined && s.allowed.length > 0 ? `; allowed while running: ${s.allowed.join(', ')} (wispctl mcp allow ${service.name} HOST --revoke takes one back)` : '';
  return `on: read ${s.read.join(', ') || '(no grants)'}; write ${s.write.join(', ') || '(its cwd only)'}; ${netText(s.net)}${allowed}`;
}

/** A service's media setting, as wispctl mcp show says it. */
export function mediaText(service) {
  return service.media
    ? 'passed whole to MCP clients of wispctl mcp serve (images, audio, binary resources: what the server sends, checked for type and size only)'
    : 'markers (images, audio and binary resources become their type and size; wispctl mcp edit NAME --media passes them to MCP clients)';
}

/** The trust view's first line for a local server. */
export function runsAs(service) {
  const s = service.sandbox;
  if (s?.status === 'on') return `${service.name} will run in a sandbox: it sees only the paths listed below, and the network shown.`;
  if (s?.status === 'off') return `${service.name} will run with its sandbox OFF (--no-sandbox): ${UNSANDBOXED}.`;
  return `${service.name} will run as you, with your permissions: it is not sandboxed (registered before sandboxes existed). Its working directory is not a sandbox.`;
}

const ACCESS = { write: 'read-write', read: 'read-only', tmpfs: 'empty' };
const WHY = { system: 'the system', runtime: 'the program', interpreter: 'its interpreter', script: 'the script or package its command or args name', venv: 'its virtualenv', cwd: 'its cwd', granted: 'granted', home: 'its private $HOME', tmp: 'its private /tmp' };

/** Every path a sandboxed launch will see, asked of the daemon when the trust view opens. */
export function SandboxPlan({ service }) {
  const [plan, setPlan] = useState(null);
  useEffect(() => {
    if (service.sandbox?.status !== 'on') return;
    call('services.sandboxPlan', { id: service.id }).then((r) => setPlan(r.plan), (err) => setPlan({ error: errorText(err) }));
  }, [service.id, service.configVersion]);
  if (service.sandbox?.status !== 'on') return null;
  if (plan === null) return html`<p>Working out what it will see…</p>`;
  if (plan.error !== undefined) return html`<p class="error">What it needs to run could not be worked out: ${plan.error}</p>`;
  return html`<div class="sandbox-plan" role="group" aria-label="what the sandbox lets it see">
    <p>It will see only these paths (everything else, your home and Wisp's data and socket included, is absent):</p>
    <ul>${plan.mounts.map((m, i) => html`<li key=${i}>${ACCESS[m.access]} <code>${m.path}</code> (${WHY[m.why] ?? m.why})</li>`)}</ul>
    <p>Network: ${plan.network === 'proxy' ? `only the hosts granted (${PROXIED})` : plan.network === 'host' ? 'the host\'s, unchecked' : 'none (its own loopback only)'}. Processes: ${plan.taskLimit !== null ? `at most ${plan.taskLimit} at once` : 'no limit set'}.</p>
    ${plan.offered.map((o, i) => html`<p key=${`o${i}`} class="warning">Not granted: ${o.field} names <code>${o.path}</code>; it will not see it unless you grant it (wispctl mcp sandbox ${service.name} --allow-read ${o.path}).</p>`)}
    ${plan.warnings.map((w, i) => html`<p key=${`w${i}`} class="warning">${w}</p>`)}
    ${plan.available ? null : html`<p class="error" role="alert">The sandbox cannot be had here: ${plan.reason}. Activation will fail (SANDBOX_UNAVAILABLE).</p>`}
  </div>`;
}
