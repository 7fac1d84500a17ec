// Events: the daemon's status (daemon.status, in `wispctl status`'s words) and its events,
// the history the panel holds first (GET /api/events/held), then live, filterable by type.
import { html, useEffect, useState } from './html.js';
import { eventDetail, statusLines } from './event-text.js';
import { errorText } from './format.js';
import { call, changed, loadHeldEvents, state, useStore } from './store.js';

function DaemonStatus() {
  const store = useStore();
  const [error, setError] = useState(null);
  const reload = () =>
    call('daemon.status').then((status) => {
      state.daemon = status;
      setError(null);
      changed();
    }, (err) => setError(errorText(err)));
  return html`<section aria-labelledby="status-title">
    <h3 id="status-title">The daemon</h3>
    <div class="toolbar"><button type="button" onClick=${reload}>Reload the status</button></div>
    ${store.daemon === null ? html`<p>Loading…</p>` : html`<pre class="status-lines" aria-label="daemon status">${statusLines(store.daemon).join('\n')}</pre>`}
    ${error !== null ? html`<p class="error" role="alert">${error}</p>` : null}
  </section>`;
}

/** The types the panel follows, as it says (GET /api/panel): one list, kept by the server. */
function eventTypes(store) {
  return store.panel?.eventTypes ?? [];
}

function TypeFilter({ types, shown, setShown }) {
  const toggle = (type) => setShown(shown.includes(type) ? shown.filter((t) => t !== type) : [...shown, type]);
  return html`<fieldset class="filter">
    <legend>Show these event types</legend>
    <div class="actions"><button type="button" onClick=${() => setShown(types)}>All</button> <button type="button" onClick=${() => setShown([])}>None</button></div>
    <div class="types">${types.map((type) => html`<label key=${type}><input type="checkbox" checked=${shown.includes(type)} onChange=${() => toggle(type)} /> ${type}</label>`)}</div>
  </fieldset>`;
}

export function EventsPage() {
  const store = useStore();
  const types = eventTypes(store);
  // null: every type (the list comes from the panel after the page opens).
  const [chosen, setShown] = useState(null);
  const shown = chosen ?? types;
  const [historyError, setHistoryError] = useState(null);
  useEffect(() => {
    loadHeldEvents().then(() => setHistoryError(null), (err) => setHistoryError(errorText(err)));
  }, []);
  // The history up to the first live event (the stream brings the rest), so none is listed twice.
  const firstLive = store.events.length > 0 ? store.events[0].seq : store.lastSeq + 1;
  const all = [...store.heldEvents.filter((e) => e.seq < firstLive), ...store.events].slice(-500);
  const events = all.filter((e) => shown.includes(e.type)).reverse();
  return html`<section aria-labelledby="events-title">
    <h2 id="events-title">Events</h2>
    <${DaemonStatus} />
    <${TypeFilter} types=${types} shown=${shown} setShown=${setShown} />
    ${store.missed ? html`<p class="error" role="alert">Some events came while this page was not connected and are no longer held: the list below has a gap (the other pages reloaded their lists).</p>` : null}
    ${historyError !== null ? html`<p class="error" role="alert">The earlier events could not be read: ${historyError}</p>` : null}
    <p class="note">The daemon's events ${store.heldFromStart ? 'since it started' : 'the panel still holds (older ones are gone)'}, then live (the last 500 are shown); newest first. ${all.length - events.length > 0 ? `${all.length - events.length} hidden by the filter.` : ''}</p>
    ${events.length === 0
      ? html`<p class="empty">no events to show</p>`
      : html`<table class="status events">
          <caption>The daemon's events, newest first</caption>
          <thead><tr>${['SEQ', 'AT', 'TYPE', 'WHAT'].map((h) => html`<th scope="col" key=${h}>${h}</th>`)}</tr></thead>
          <tbody>${events.map((e) => html`<tr key=${e.seq} data-type=${e.type}>
            <td>${e.seq}</td><td><time datetime=${e.at}>${e.at}</time></td><td>${e.type}</td><td class="what">${eventDetail(e)}</td>
          </tr>`)}</tbody>
        </table>`}
  </section>`;
}
