// One service: what it is, what will run if trusted, its actions, stderr tail and tools.
import { html, useEffect, useState } from './html.js';
import { clean, failureTail, followLogHint } from '../../core/index.js';
import { carryOverText, describeConnection, describeOrigin, errorText, hintsOf, pretty } from './format.js';
import { Login } from './login.js';
import { Secrets } from './secrets.js';
import { EditForm } from './service-forms.js';
import { HeldReview } from './review.js';
import { call, useStore } from './store.js';
import { SandboxPlan, mediaText, runsAs, sandboxText } from './sandbox.js';
import { TryTool } from './try-tool.js';

function Fields({ rows }) {
  return html`<dl class="fields">${rows.map(([k, v]) => html`<div key=${k}><dt>${k}</dt><dd>${v}</dd></div>`)}</dl>`;
}

function ArgList({ args }) {
  return args.length === 0 ? '(none)' : html`<ol class="arglist">${args.map((a, i) => html`<li key=${i}><code>${a}</code></li>`)}</ol>`;
}

/** Its own variables: names and storage for values kept secret, NAME=template for those written with ${VAR}. */
function ownVariables(service) {
  return [...service.env.map((v) => `${v.name} (${v.storage})`), ...(service.envTemplates ?? []).map((t) => `${t.name}=${t.template}`)];
}

function ownHeaders(service) {
  return [...service.headers.map((h) => `${h.name} (${h.storage})`), ...(service.headerTemplates ?? []).map((t) => `${t.name}: ${t.template}`)].join(', ') || '(none)';
}

function environmentText(service) {
  const own = ownVariables(service);
  return own.length === 0 ? '(no variables of its own; the minimal inherited set only)' : `the minimal inherited set, plus ${own.join(', ')}`;
}

/** Every ${VAR} a launch reads from the daemon's environment: field, variable, secret or public, and the file it is written in. */
function EnvironmentReads({ reads }) {
  const files = [...new Set(reads.map((r) => r.file).filter((f) => f !== null))];
  return html`<div class="env-reads"><p>${reads.length} ${reads.length === 1 ? 'variable' : 'variables'} of the daemon's environment at launch${files.length > 0 ? `, as written in ${files.join(', ')}` : ''}:</p>
    <ul>${reads.map((r, i) => html`<li key=${i}><code>${r.field}</code> ← <code>\${${r.variable}}</code> (${r.secret ? 'a secret: redacted wherever it appears' : 'public: shown as it is'})</li>`)}</ul></div>`;
}

function readRows(service) {
  const reads = service.environmentReads ?? [];
  return reads.length === 0 ? [] : [['reads', html`<${EnvironmentReads} reads=${reads} />`]];
}

/**
 * Trust and activate: exactly what will run, from the daemon's record, and the version shown;
 * services.activate is bound to that version, so an edit in between is refused (APPROVAL_STALE).
 */
function TrustView({ service: live, onClose }) {
  // What is shown is pinned when the view opens; the answer is bound to its version.
  const [service] = useState(live);
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  /** After an edit, saved variables wait for a yes before they go to the new program. */
  const [rebind, setRebind] = useState(false);
  const remote = service.transport !== 'stdio';
  const run = async (steps) => {
    setBusy(true);
    setError(null);
    try {
      await steps();
    } catch (err) {
      setError(errorText(err));
      if (err.code === 'SECRET_BINDING_CHANGED') setRebind(true);
    } finally {
      setBusy(false);
    }
  };
  const started = (after) => {
    if (after.connection.status === 'failed') setError(describeConnection(after.connection));
    else onClose();
  };
  const activate = () => run(async () => started((await call('services.activate', { id: service.id, configVersion: service.configVersion })).service));
  // carryOverEnv is bound to the version shown; what it returns is that version, re-bound.
  const carryOver = () => run(async () => {
    const { service: rebound } = await call('services.carryOverEnv', { id: service.id, configVersion: service.configVersion });
    setRebind(false);
    started((await call('services.activate', { id: service.id, configVersion: rebound.configVersion })).service);
  });
  const rows = remote
    ? [['url', service.url ?? ''], ['headers', ownHeaders(service)], ...readRows(service), ['origin', describeOrigin(service.origin)]]
    : [['command', html`<code>${service.command}</code>`], ['args', html`<${ArgList} args=${service.args} />`], ['cwd', service.cwd ?? '(daemon default)'], ['environment', environmentText(service)], ...readRows(service), ['origin', describeOrigin(service.origin)]];
  rows.push(['media', mediaText(service)]);
  return html`<section class="trust" role="region" aria-labelledby="trust-title">
    <h4 id="trust-title">Trust and activate ${service.name}</h4>
    <p class="warning">${remote ? `${service.name} is a remote server: the daemon will send it requests, and what it answers is untrusted.` : runsAs(service)}</p>
    <${Fields} rows=${rows} />
    ${remote ? null : html`<${SandboxPlan} service=${service} />`}
    <p>You are trusting configuration version ${service.configVersion}; if it is edited before you answer, nothing starts.</p>
    ${live.configVersion !== service.configVersion ? html`<p class="error" role="alert">${service.name} was edited since this was shown (now version ${live.configVersion}): cancel and look again.</p>` : null}
    ${error !== null ? html`<p class="error" role="alert">${error}</p>` : null}
    ${rebind
      ? html`<div class="rebind" role="group" aria-label="carry the saved values over">
          <p>${carryOverText(service)}</p>
          <button type="button" disabled=${busy} onClick=${carryOver}>${remote ? 'Send the saved header values to this URL, and connect' : 'Let the saved values go to this program, and start it'}</button>
        </div>`
      : null}
    <div class="actions">
      <button type="button" class="approve" disabled=${busy} onClick=${activate}>${remote ? `Trust and connect to ${service.name}` : `Trust and start ${service.command}`}</button>
      <button type="button" onClick=${onClose}>Cancel</button>
    </div>
  </section>`;
}

function Logs({ service }) {
  const [logs, setLogs] = useState(null);
  const load = () => call('services.logs', { id: service.id }).then(setLogs, (err) => setLogs({ error: errorText(err) }));
  if (logs === null) return html`<button type="button" onClick=${load}>Show the stderr tail</button>`;
  if (logs.error !== undefined) return html`<p class="error">${logs.error}</p>`;
  return html`<section aria-labelledby="logs-title"><h4 id="logs-title">stderr tail (held in memory only) <button type="button" onClick=${load}>Reload</button></h4>
    ${logs.droppedChars > 0 ? html`<p>[${logs.droppedChars} older characters dropped]</p>` : null}
    <pre class="logs">${logs.stderr === '' ? '(nothing written)' : logs.stderr}</pre></section>`;
}

/** Why a local service failed, where it failed: its last stderr lines (redacted by the daemon) and how to follow its log. */
function FailureTail({ service }) {
  const [lines, setLines] = useState(null);
  const c = service.connection;
  useEffect(() => {
    setLines(null);
    call('services.logs', { id: service.id }).then((logs) => setLines(failureTail(logs.stderr)), (err) => setLines({ error: errorText(err) }));
  }, [service.id, c.generation, c.at]);
  if (lines === null) return null;
  if (!Array.isArray(lines)) return html`<p class="error">${lines.error}</p>`;
  // Nothing written (a command not found never ran): the state's own message says it all.
  if (lines.length === 0) return null;
  return html`<section class="failure" aria-labelledby="failure-title"><h4 id="failure-title">Why ${clean(service.name)} failed</h4>
    <p>The last ${lines.length} lines it wrote to stderr (secrets redacted):</p><pre class="logs" aria-label="last stderr lines">${lines.map(clean).join('\n')}</pre>
    <p class="note">Follow its log: <code>${clean(followLogHint(service.name))}</code></p></section>`;
}

function Tools({ service }) {
  const [tools, setTools] = useState(null);
  /** The modelName of the tool being tried, or null. */
  const [trying, setTrying] = useState(null);
  const version = service.connection.status === 'active' ? service.connection.toolListVersion : 0;
  // tools.held and tools.accepted change the pins, not the list version: they reload it too.
  const pins = useStore().pins.get(service.id) ?? 0;
  useEffect(() => {
    if (version === 0) return;
    (async () => {
      const all = [];
      let cursor = null;
      do {
        const page = await call('tools.list', { serviceId: service.id, ...(cursor !== null ? { cursor } : {}) });
        all.push(...page.tools);
        cursor = page.nextCursor;
      } while (cursor !== null);
      setTools(all);
    })().catch((err) => setTools({ error: errorText(err) }));
  }, [service.id, version, pins]);
  if (version === 0) return html`<p class="note">Tools are listed while the service is active.</p>`;
  if (tools === null) return html`<p>Loading the tools…</p>`;
  if (!Array.isArray(tools)) return html`<p class="error">${tools.error}</p>`;
  const held = tools.filter((t) => t.pin !== undefined && t.pin !== 'trusted').length;
  return html`<${HeldReview} key=${service.id} service=${service} held=${held} />
  <section aria-labelledby="tools-title"><h4 id="tools-title">Tools (${tools.length})</h4>
    ${tools.map((t) => html`<details class="tool" key=${t.modelName} data-tool=${t.name}>
      <summary><code>${t.name}</code> <span class="model-name">${t.modelName}</span>${t.pin !== undefined && t.pin !== 'trusted'
        ? html` <strong class="held">held (${t.pin} since it was trusted): not callable until reviewed (Review the held tools, above; or wispctl mcp review ${service.name})</strong>` : ''}${typeof t.unavailable === 'string'
        ? html` <strong class="held">unavailable: ${t.unavailable}</strong>` : ''}</summary>
      <div class="claims" role="group" aria-label="from the server, not verified">
        <p class="claims-label">from the server, not verified:</p>
        <${Fields} rows=${[['title', t.title ?? '(none)'], ['description', t.description], ['hints', hintsOf(t.annotations)]]} />
      </div>
      <p>input schema:</p><pre class="json">${pretty(t.inputSchema)}</pre>
      ${(t.pin === undefined || t.pin === 'trusted') && typeof t.unavailable !== 'string'
        ? trying === t.modelName
          ? html`<${TryTool} service=${service} tool=${t} onClose=${() => setTrying(null)} />`
          : html`<button type="button" onClick=${() => setTrying(t.modelName)}>Try ${t.name}…</button>`
        : null}
    </details>`)}
  </section>`;
}

/**
 * Where a service synced from a config file comes from, and how to change or remove it: the
 * daemon refuses to edit or remove it (it would come back at the next reload), so the page
 * offers neither and says this instead.
 */
function sourceNote(service) {
  const { source, file, plugin } = service.origin;
  const reload = 'then reload the sources (the Sources page, or wispctl mcp reload)';
  if (source === 'plugin') return `It comes from the plugin ${plugin ?? ''}'s manifest, ${file}: to change or remove it, edit that entry or disable the plugin (enabledPlugins in settings.json), ${reload}.`;
  if (source === 'project') return `It comes from the project's .mcp.json, ${file}: to change or remove it, edit that entry (or stop reading the project on the Sources page), ${reload}.`;
  return `It comes from the global settings, ${file}: to change or remove it, edit that entry, ${reload}.`;
}

export function ServiceDetail({ service, onRemoved }) {
  const [trusting, setTrusting] = useState(false);
  const [editing, setEditing] = useState(false);
  const [confirmRemove, setConfirmRemove] = useState(false);
  const [error, setError] = useState(null);
  const c = service.connection;
  const act = (method) => call(method, { id: service.id }).then(() => setError(null), (err) => setError(errorText(err)));
  const remove = () => call('services.delete', { id: service.id }).then(onRemoved, (err) => setError(errorText(err)));
  const where = service.transport !== 'stdio'
    ? [['url', service.url ?? ''], ['headers', ownHeaders(service)], ...readRows(service)]
    : [['command', html`<code>${service.command}</code>`], ['args', html`<${ArgList} args=${service.args} />`], ['cwd', service.cwd ?? '(daemon default)'], ['env', ownVariables(service).join(', ') || '(none)'], ['sandbox', sandboxText(service) ?? '-'], ...readRows(service)];
  where.push(['media', mediaText(service)]);
  return html`<section class="detail" aria-labelledby="detail-title">
    <h3 id="detail-title">${service.name}</h3>
    <${Fields} rows=${[
      ['state', describeConnection(c, service)],
      ...(c.status === 'active' ? [['server', `${c.server.name} ${c.server.version} (what the server says)`]] : []),
      ['origin', describeOrigin(service.origin)],
      ...where,
      ['version', String(service.configVersion)],
      ['id', service.id],
    ]} />
    <div class="actions">
      ${c.status === 'disabled' || c.status === 'failed' ? html`<button type="button" onClick=${() => setTrusting(true)}>Trust and activate…</button>` : null}
      ${c.status !== 'disabled' ? html`<button type="button" onClick=${() => act('services.disable')}>Disable</button>` : null}
      ${c.status === 'active' ? html`<button type="button" onClick=${() => act('services.refreshTools')}>Refresh tools</button>` : null}
      ${service.origin.kind !== 'source' ? html`<button type="button" aria-expanded=${editing} onClick=${() => setEditing(!editing)}>Edit…</button>` : null}
      ${service.origin.kind === 'source'
        ? null
        : confirmRemove
          ? html`<span role="group" aria-label="confirm removal">Remove ${service.name}? <button type="button" class="deny" onClick=${remove}>Yes, remove</button> <button type="button" onClick=${() => setConfirmRemove(false)}>Keep it</button></span>`
          : html`<button type="button" onClick=${() => setConfirmRemove(true)}>Remove…</button>`}
    </div>
    ${error !== null ? html`<p class="error" role="alert">${error}</p>` : null}
    ${c.status === 'failed' && service.transport === 'stdio' ? html`<${FailureTail} service=${service} />` : null}
    ${service.origin.kind === 'source' ? html`<p class="note" data-note="source">${sourceNote(service)}</p>` : null}
    ${editing ? html`<${EditForm} service=${service} onDone=${() => setEditing(false)} />` : null}
    ${trusting ? html`<${TrustView} service=${service} onClose=${() => setTrusting(false)} />` : null}
    ${service.transport === 'http' && (service.oauth?.enabled === true || c.status === 'needs_auth') ? html`<${Login} key=${service.id} service=${service} />` : null}
    ${service.origin.kind !== 'source' ? html`<${Secrets} service=${service} />` : null}
    <${Logs} service=${service} />
    <${Tools} service=${service} />
  </section>`;
}
