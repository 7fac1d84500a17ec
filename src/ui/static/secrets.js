// A service's variables (stdio) or headers (remote): names and storage shown, values
// write-only. A value goes to the daemon once (services.setEnv / setHeaders, upsert, as
// `wispctl mcp env set` does) and the field is cleared; nothing ever sends it back.
import { html, useState } from './html.js';
import { errorText, keychainAdvice } from './format.js';
import { StorageChoice } from './service-forms.js';
import { call, state } from './store.js';

const KINDS = {
  stdio: { method: 'services.setEnv', key: 'variables', list: 'env', title: 'Variables', one: 'variable', none: 'no variables' },
  http: { method: 'services.setHeaders', key: 'headers', list: 'headers', title: 'Headers', one: 'header', none: 'no headers' },
};

/**
 * `files: TOKEN saved (keychain); ...`: wispctl's words (variableSavedText, headerSavedText).
 * The demo keeps the name and drops the value on arrival, and never touches the keychain
 * (its banner says so): it says that instead of "saved".
 */
function savedText(service, name, storage) {
  if (state.panel?.demo === true) return `${service.name}: ${name} taken (demo: the value was dropped at once; nothing is saved and the keychain is never touched); the service is disabled until activated again`;
  return `${service.name}: ${name} saved (${storage === 'session' ? 'session only' : 'keychain'}); the service is disabled until activated again`;
}

/** Where a value is kept, as the list shows it; in the demo nothing is kept anywhere. */
function keptText(storage) {
  if (state.panel?.demo === true) return `${storage === 'session' ? 'this run only' : 'keychain'} chosen; demo: not kept`;
  return storage;
}

export function Secrets({ service }) {
  const kind = KINDS[service.transport === 'sse' ? 'http' : service.transport] ?? KINDS.stdio;
  const [name, setName] = useState('');
  const [value, setValue] = useState('');
  const [storage, setStorage] = useState('keychain');
  const [message, setMessage] = useState(null);
  const [busy, setBusy] = useState(false);
  const [confirmClear, setConfirmClear] = useState(false);
  const send = async (entries, mode, done) => {
    setBusy(true);
    setMessage(null);
    try {
      await call(kind.method, { id: service.id, mode, [kind.key]: entries });
      setName('');
      setValue('');
      setMessage({ ok: true, text: done });
    } catch (err) {
      // The value stays in its field, so "this run only" can be chosen and saved again.
      setMessage({ ok: false, text: err.code === 'KEYCHAIN_UNAVAILABLE' ? keychainAdvice(err) : errorText(err) });
    } finally {
      setBusy(false);
      setConfirmClear(false);
    }
  };
  const save = (e) => {
    e.preventDefault();
    void send([{ name, value, storage }], 'upsert', savedText(service, name, storage));
  };
  const current = service[kind.list];
  const id = `secrets-${service.id}`;
  return html`<section class="secrets" aria-labelledby=${id}>
    <h4 id=${id}>${kind.title} (values are write-only: never shown, never sent back)</h4>
    ${current.length === 0
      ? html`<p class="empty">${kind.none}</p>`
      : html`<ul class="secret-names">${current.map((v) => html`<li key=${v.name}><code>${v.name}</code> (${keptText(v.storage)}${v.plain === true ? ', plain: not redacted' : ''})</li>`)}</ul>`}
    <form class="secret" onSubmit=${save} aria-label=${`Set a ${kind.one}`}>
      <label>${kind.one === 'header' ? 'Header name' : 'Variable name'} <input name="secret-name" required autocomplete="off" value=${name} onInput=${(e) => setName(e.currentTarget.value)} /></label>
      <label>Value (not shown) <input name="secret-value" type="password" autocomplete="off" value=${value} onInput=${(e) => setValue(e.currentTarget.value)} /></label>
      <${StorageChoice} storage=${storage} setStorage=${setStorage} label=${`Keep the ${kind.one} in`} />
      <div class="actions">
        <button type="submit" disabled=${busy}>Save the ${kind.one}</button>
        ${current.length > 0
          ? confirmClear
            ? html`<span role="group" aria-label=${`confirm clearing the ${kind.key}`}>Remove every ${kind.one} of ${service.name}? <button type="button" class="deny" onClick=${() => send([], 'replace', `${service.name}: ${kind.key} cleared`)}>Yes, clear them</button> <button type="button" onClick=${() => setConfirmClear(false)}>Keep them</button></span>`
            : html`<button type="button" onClick=${() => setConfirmClear(true)}>Clear all…</button>`
          : null}
      </div>
    </form>
    ${message !== null ? html`<p class=${message.ok ? 'note' : 'error'} role=${message.ok ? 'status' : 'alert'}>${message.text}</p>` : null}
  </section>`;
}
