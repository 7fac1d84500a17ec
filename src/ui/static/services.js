// Services: the status panel (live from service.* events), adding a stdio server, and the
// selected service's details and actions (service-detail.js).
import { html, useState } from './vendor/preact-htm.js';
import { describeOrigin, errorText, statusCells } from './format.js';
import { ServiceDetail } from './service-detail.js';
import { call, loadServices, useStore } from './store.js';

function StatusTable({ services, selected, onSelect }) {
  if (services.length === 0) return html`<p class="empty">no services registered (add one with the form above, or: wispctl mcp add NAME -- COMMAND [ARGS...])</p>`;
  return html`<table class="status">
    <caption>Services and their state, live</caption>
    <thead><tr>${['NAME', 'STATE', 'PID', 'TOOLS', 'SINCE', 'TRANSPORT', 'REASON', 'ORIGIN'].map((h) => html`<th scope="col" key=${h}>${h}</th>`)}</tr></thead>
    <tbody>${services.map((s) => {
      const cells = statusCells(s);
      return html`<tr key=${s.id} class=${s.id === selected ? 'selected' : ''} data-service=${s.name}>
        <th scope="row"><button type="button" class="link" aria-pressed=${s.id === selected} onClick=${() => onSelect(s.id === selected ? null : s.id)}>${s.name}</button></th>
        <td class=${`state state-${s.connection.status}`} data-cell="state">${cells.state}</td>
        <td data-cell="pid">${cells.pid}</td>
        <td data-cell="tools">${cells.tools}</td>
        <td><time datetime=${cells.since}>${cells.since}</time></td>
        <td>${s.transport}</td>
        <td class="reason" data-cell="reason">${cells.reason}</td>
        <td>${describeOrigin(s.origin)}</td>
      </tr>`;
    })}</tbody>
  </table>`;
}

function ArgsEditor({ args, setArgs }) {
  const set = (i, value) => setArgs(args.map((a, j) => (j === i ? value : a)));
  return html`<fieldset class="args">
    <legend>Arguments (each passed as it is; no shell parses them)</legend>
    ${args.map((arg, i) => html`<div class="arg" key=${i}>
      <input aria-label=${`argument ${i + 1}`} value=${arg} onInput=${(e) => set(i, e.currentTarget.value)} />
      <button type="button" aria-label=${`remove argument ${i + 1}`} onClick=${() => setArgs(args.filter((_, j) => j !== i))}>Remove</button>
    </div>`)}
    <button type="button" onClick=${() => setArgs([...args, ''])}>Add an argument</button>
  </fieldset>`;
}

function AddForm({ onDone }) {
  const [name, setName] = useState('');
  const [command, setCommand] = useState('');
  const [args, setArgs] = useState([]);
  const [cwd, setCwd] = useState('');
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e) => {
    e.preventDefault();
    if (cwd !== '' && !cwd.startsWith('/')) {
      setError('the working directory must be an absolute path (INVALID_CONFIG)');
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const { service } = await call('services.register', { name, command, args, ...(cwd !== '' ? { cwd } : {}) });
      onDone(service.id);
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };
  return html`<form class="add" onSubmit=${submit} aria-labelledby="add-title">
    <h3 id="add-title">Add a local (stdio) server</h3>
    <p class="note">It is registered disabled: nothing runs until you trust and activate it.</p>
    <label>Name <input name="name" required value=${name} onInput=${(e) => setName(e.currentTarget.value)} /></label>
    <label>Command (absolute path, or a program name found on the daemon's PATH) <input name="command" required value=${command} onInput=${(e) => setCommand(e.currentTarget.value)} /></label>
    <${ArgsEditor} args=${args} setArgs=${setArgs} />
    <label>Working directory (absolute; optional; not a sandbox) <input name="cwd" value=${cwd} onInput=${(e) => setCwd(e.currentTarget.value)} /></label>
    ${error !== null ? html`<p class="error" role="alert">${error}</p>` : null}
    <div class="actions"><button type="submit" disabled=${busy}>Register</button> <button type="button" onClick=${() => onDone(null)}>Cancel</button></div>
  </form>`;
}

export function ServicesPage() {
  const store = useStore();
  const [selected, setSelected] = useState(null);
  const [adding, setAdding] = useState(false);
  const [error, setError] = useState(null);
  const refresh = () => loadServices().then(() => setError(null), (err) => setError(errorText(err)));
  const service = store.services.find((s) => s.id === selected);
  return html`<section aria-labelledby="services-title">
    <h2 id="services-title">Services</h2>
    <div class="toolbar">
      <button type="button" onClick=${refresh}>Reload the list</button>
      <button type="button" aria-expanded=${adding} onClick=${() => setAdding(!adding)}>Add a server</button>
    </div>
    ${error !== null ? html`<p class="error" role="alert">${error}</p>` : null}
    ${adding ? html`<${AddForm} onDone=${(id) => { setAdding(false); if (id !== null) setSelected(id); }} />` : null}
    ${store.servicesLoaded ? html`<${StatusTable} services=${store.services} selected=${selected} onSelect=${setSelected} />` : html`<p>Loading…</p>`}
    ${service !== undefined ? html`<${ServiceDetail} key=${service.id} service=${service} onRemoved=${() => setSelected(null)} />` : null}
  </section>`;
}
