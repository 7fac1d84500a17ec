// OAuth login of a remote service from the page: services.login runs until the callback
// comes (or fails); its service.login event gives the authorization URL, shown with its
// host, and opened only when the human clicks it (a new tab, no referrer, no opener).
import { html, useState } from './html.js';
import { errorText } from './format.js';
import { call, useStore } from './store.js';

/** Only an http(s) URL becomes a link; anything else (javascript:, data:) stays text. */
export function safeUrl(text) {
  try {
    const url = new URL(text);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url : null;
  } catch {
    return null;
  }
}

function AuthorizationLink({ login }) {
  const url = safeUrl(login.authorizationUrl);
  if (url === null) return html`<p class="error" role="alert">The authorization URL is not an http(s) URL, so it is not offered as a link: <code>${login.authorizationUrl}</code></p>`;
  return html`<div class="login-url" role="group" aria-label="the authorization page">
    <p>Log in on <strong>${url.host}</strong>${url.protocol === 'http:' ? ' (not encrypted: http)' : ''}. Check that this is who you expect before you enter anything there.</p>
    <p><a href=${url.href} target="_blank" rel="noopener noreferrer">Open the authorization page on ${url.host}</a></p>
    <details><summary>The whole URL</summary><pre class="json">${url.href}</pre></details>
    <p class="note">It comes back to ${login.redirectUri} (the daemon's one-time listener).</p>
  </div>`;
}

export function Login({ service }) {
  const store = useStore();
  const [phase, setPhase] = useState('idle');
  const [message, setMessage] = useState(null);
  const login = store.logins.get(service.id);
  const start = async () => {
    setPhase('waiting');
    setMessage(null);
    try {
      const { service: after } = await call('services.login', { id: service.id, configVersion: service.configVersion });
      setMessage({ ok: true, text: `Logged in to ${after.name}: ${after.connection.status}` });
    } catch (err) {
      setMessage({ ok: false, text: errorText(err) });
    } finally {
      store.logins.delete(service.id);
      setPhase('idle');
    }
  };
  return html`<section class="login" aria-labelledby=${`login-${service.id}`}>
    <h4 id=${`login-${service.id}`}>OAuth login</h4>
    ${phase === 'idle' ? html`<button type="button" onClick=${start}>Log in to ${service.name}…</button>` : null}
    ${phase === 'waiting' && login === undefined ? html`<p role="status">Asking the daemon for the authorization page…</p>` : null}
    ${phase === 'waiting' && login !== undefined ? html`<${AuthorizationLink} login=${login} />` : null}
    ${message !== null ? html`<p class=${message.ok ? 'note' : 'error'} role=${message.ok ? 'status' : 'alert'}>${message.text}</p>` : null}
  </section>`;
}
