// The panel's shell: the nav, the link and daemon status, and the page for the address's hash.
import { html, render, useEffect, useState } from './html.js';
import { ApprovalsPage } from './approvals.js';
import { ChatPage } from './chat.js';
import { EventsPage } from './events.js';
import { InstallsPage } from './installs.js';
import { ServicesPage } from './services.js';
import { SourcesPage } from './sources.js';
import { connect, useStore } from './store.js';

/** The pages, in nav order. */
const PAGES = [
  { path: 'services', title: 'Services', view: ServicesPage },
  { path: 'approvals', title: 'Approvals', view: ApprovalsPage },
  { path: 'installs', title: 'Installs', view: InstallsPage },
  { path: 'sources', title: 'Sources', view: SourcesPage },
  { path: 'chat', title: 'Chat', view: ChatPage },
  { path: 'events', title: 'Events', view: EventsPage },
];

function currentPath() {
  const path = location.hash.replace(/^#\/?/, '');
  return PAGES.some((p) => p.path === path) ? path : 'services';
}

function LinkBanner({ link }) {
  if (link === 'open' || link === 'connecting') return null;
  const text = link === 'ended' ? 'The daemon is stopping: this panel has ended. Start the daemon and wispctl ui again.' : 'Lost the connection to the panel (did wispctl ui stop?). Retrying…';
  return html`<p class="banner" role="alert">${text}</p>`;
}

/** On every page of wispctl ui --demo: what the demo is and is not. */
function DemoBanner({ panel }) {
  if (panel === null || !panel.demo) return null;
  return html`<p class="demo-banner" role="note" aria-label="demo mode"><strong>Demo</strong>: an in-memory scenario (wispctl ui --demo). Nothing runs, nothing is installed, nothing is saved and the keychain is never touched: services, approvals and the chat's model are samples, gone when the panel stops.</p>`;
}

function daemonLine(store) {
  if (store.panel?.demo === true) return 'demo daemon (in memory, no processes)';
  return store.daemon !== null ? `wispd ${store.daemon.version}, pid ${store.daemon.pid}` : 'connecting to the daemon…';
}

function Nav({ path, pending }) {
  return html`<nav aria-label="Pages"><ul>
    ${PAGES.map((p) => html`<li key=${p.path}><a href=${`#/${p.path}`} aria-current=${p.path === path ? 'page' : undefined}>
      ${p.title}${p.path === 'approvals' && pending > 0 ? html` <span class="badge" aria-label=${`${pending} pending`}>${pending}</span>` : ''}
    </a></li>`)}
  </ul></nav>`;
}

function App() {
  const store = useStore();
  const [path, setPath] = useState(currentPath());
  useEffect(() => {
    const onHash = () => setPath(currentPath());
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, []);
  const page = PAGES.find((p) => p.path === path) ?? PAGES[0];
  const pending = [...store.approvals.values()].filter((e) => e.resolved === null).length + [...store.elicitations.values()].filter((e) => e.elicitation.status === 'pending').length;
  useEffect(() => {
    document.title = `${pending > 0 ? `(${pending}) ` : ''}${page.title} · Wisp panel${store.panel?.demo === true ? ' (demo)' : ''}`;
  }, [pending, page, store.panel]);
  const Page = page.view;
  return html`
    <header>
      <h1>Wisp panel</h1>
      <${Nav} path=${path} pending=${pending} />
      <p class="daemon" aria-live="polite">${daemonLine(store)}</p>
    </header>
    <${DemoBanner} panel=${store.panel} />
    <${LinkBanner} link=${store.link} />
    <main><${Page} /></main>`;
}

connect();
const root = document.getElementById('app');
// Preact adds to what is there: the loading line goes first.
root.textContent = '';
render(html`<${App} />`, root);
