// Services: the status panel (live from service.* events: the connection count and the
// startup phase over the table, as `wispctl mcp list` says them), adding a local or remote server
// (service-forms.js), and the selected service's details and actions (service-detail.js).
import { ageText, servicesSummary, summaryText } from '../../core/index.js';
import { html, useEffect, useState } from './html.js';
import { describeOrigin, errorText, shortOrigin, statusCells } from './format.js';
import { ServiceDetail } from './service-detail.js';
import { AddForm, RemoteForm } from './service-forms.js';
import { loadServices, useStore } from './store.js';

/** The clock the SINCE column reads, moved on every 15 s so an age stays true while the page is open. */
function useNow() {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = window.setInterval(() => setNow(Date.now()), 15_000);
    return () => window.clearInterval(timer);
  }, []);
  return now;
}

function StatusTable({ services, selected, onSelect }) {
  const now = useNow();
  if (services.length === 0) return html`<p class="empty">no services registered (add one with the form above, or: wispctl mcp add NAME -- COMMAND [ARGS...])</p>`;
  return html`<table class="status services">
    <caption>Services and their state, live</caption>
    <thead><tr>${['NAME', 'STATE', 'PID', 'TOOLS', 'SINCE', 'TRANSPORT', 'REASON', 'ORIGIN'].map((h) => html`<th scope="col" key=${h}>${h}</th>`)}</tr></thead>
    <tbody>${services.map((s) => {
      const cells = statusCells(s);
      return html`<tr key=${s.id} class=${s.id === selected ? 'selected' : ''} data-service=${s.name}>
        <th scope="row"><button type="button" class="link" aria-pressed=${s.id === selected} onClick=${() => onSelect(s.id === selected ? null : s.id)}>${s.name}</button></th>
        <td class=${`state state-${s.connection.status}`} data-cell="state">${cells.state}</td>
        <td data-cell="pid">${cells.pid}</td>
        <td data-cell="tools">${cells.tools}</td>
        <td data-cell="since"><time datetime=${cells.since} title=${cells.since}>${ageText(cells.since, now)}</time></td>
        <td data-cell="transport">${s.transport}</td>
        <td class="reason" data-cell="reason">${cells.reason}</td>
        <td data-cell="origin" title=${describeOrigin(s.origin)}>${shortOrigin(s.origin)}</td>
      </tr>`;
    })}</tbody>
  </table>`;
}

export function ServicesPage() {
  const store = useStore();
  const [selected, setSelected] = useState(null);
  /** null | 'stdio' | 'remote' */
  const [adding, setAdding] = useState(null);
  const [error, setError] = useState(null);
  const refresh = () => loadServices().then(() => setError(null), (err) => setError(errorText(err)));
  const service = store.services.find((s) => s.id === selected);
  const added = (id) => {
    setAdding(null);
    if (id !== null) setSelected(id);
  };
  return html`<section aria-labelledby="services-title">
    <h2 id="services-title">Services</h2>
    <div class="toolbar">
      <button type="button" onClick=${refresh}>Reload the list</button>
      <button type="button" aria-expanded=${adding === 'stdio'} onClick=${() => setAdding(adding === 'stdio' ? null : 'stdio')}>Add a server</button>
      <button type="button" aria-expanded=${adding === 'remote'} onClick=${() => setAdding(adding === 'remote' ? null : 'remote')}>Add a remote server</button>
    </div>
    ${error !== null ? html`<p class="error" role="alert">${error}</p>` : null}
    ${adding !== null ? html`<${adding === 'stdio' ? AddForm : RemoteForm} onDone=${added} />` : null}
    ${store.servicesLoaded && store.services.length > 0 ? html`<p class="summary" data-cell="summary">${summaryText(servicesSummary(store.services))}</p>` : null}
    ${store.servicesLoaded ? html`<${StatusTable} services=${store.services} selected=${selected} onSelect=${setSelected} />` : html`<p>Loading…</p>`}
    ${service !== undefined ? html`<${ServiceDetail} key=${service.id} service=${service} onRemoved=${() => setSelected(null)} />` : null}
  </section>`;
}
