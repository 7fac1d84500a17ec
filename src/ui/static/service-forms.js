// The forms that register or edit a service: a local (stdio) server, a remote one, an edit.
// Secret values (headers here, variables in secrets.js) go to the daemon only, never back.
import { html, useState } from './html.js';
import { errorText, keychainAdvice } from './format.js';
import { call } from './store.js';

export function ArgsEditor({ args, setArgs }) {
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

/** Storage for a secret value: the keychain, or memory until the daemon stops. */
export function StorageChoice({ storage, setStorage, label }) {
  return html`<fieldset class="storage">
    <legend>${label}</legend>
    <label><input type="radio" name=${label} checked=${storage === 'keychain'} onChange=${() => setStorage('keychain')} /> the keychain</label>
    <label><input type="radio" name=${label} checked=${storage === 'session'} onChange=${() => setStorage('session')} /> this run only (memory, gone when the daemon stops)</label>
  </fieldset>`;
}

/** Runs a form's submit: busy while it runs, its error shown as text. */
function useSubmit(run) {
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await run();
    } catch (err) {
      setError(err.code === 'KEYCHAIN_UNAVAILABLE' ? keychainAdvice(err) : errorText(err));
    } finally {
      setBusy(false);
    }
  };
  return { error, setError, busy, submit };
}

function cwdProblem(cwd) {
  return cwd !== '' && !cwd.startsWith('/') ? 'the working directory must be an absolute path (INVALID_CONFIG)' : null;
}

export function AddForm({ onDone }) {
  const [name, setName] = useState('');
  const [command, setCommand] = useState('');
  const [args, setArgs] = useState([]);
  const [cwd, setCwd] = useState('');
  const form = useSubmit(async () => {
    const problem = cwdProblem(cwd);
    if (problem !== null) return form.setError(problem);
    const { service } = await call('services.register', { name, command, args, ...(cwd !== '' ? { cwd } : {}) });
    onDone(service.id);
  });
  return html`<form class="add" onSubmit=${form.submit} aria-labelledby="add-title">
    <h3 id="add-title">Add a local (stdio) server</h3>
    <p class="note">It is registered disabled: nothing runs until you trust and activate it.</p>
    <label>Name <input name="name" required value=${name} onInput=${(e) => setName(e.currentTarget.value)} /></label>
    <label>Command (absolute path, or a program name found on the daemon's PATH) <input name="command" required value=${command} onInput=${(e) => setCommand(e.currentTarget.value)} /></label>
    <${ArgsEditor} args=${args} setArgs=${setArgs} />
    <label>Working directory (absolute; optional; not a sandbox) <input name="cwd" value=${cwd} onInput=${(e) => setCwd(e.currentTarget.value)} /></label>
    ${form.error !== null ? html`<p class="error" role="alert">${form.error}</p>` : null}
    <div class="actions"><button type="submit" disabled=${form.busy}>Register</button> <button type="button" onClick=${() => onDone(null)}>Cancel</button></div>
  </form>`;
}

function HeaderRows({ headers, setHeaders }) {
  const set = (i, field, value) => setHeaders(headers.map((h, j) => (j === i ? { ...h, [field]: value } : h)));
  return html`<fieldset class="args">
    <legend>Headers (values are write-only: never shown again)</legend>
    ${headers.map((h, i) => html`<div class="arg" key=${i}>
      <input aria-label=${`header ${i + 1} name`} placeholder="Authorization" value=${h.name} onInput=${(e) => set(i, 'name', e.currentTarget.value)} />
      <input aria-label=${`header ${i + 1} value`} type="password" autocomplete="off" value=${h.value} onInput=${(e) => set(i, 'value', e.currentTarget.value)} />
      <button type="button" aria-label=${`remove header ${i + 1}`} onClick=${() => setHeaders(headers.filter((_, j) => j !== i))}>Remove</button>
    </div>`)}
    <button type="button" onClick=${() => setHeaders([...headers, { name: '', value: '' }])}>Add a header</button>
  </fieldset>`;
}

/** A remote server: registered (disabled), then its headers set; a refused header leaves it registered without them. */
export function RemoteForm({ onDone }) {
  const [name, setName] = useState('');
  const [url, setUrl] = useState('');
  const [headers, setHeaders] = useState([]);
  const [storage, setStorage] = useState('keychain');
  const [oauth, setOauth] = useState(false);
  const [registered, setRegistered] = useState(null);
  const form = useSubmit(async () => {
    let service = registered;
    if (service === null) {
      service = (await call('services.registerRemote', { name, url, ...(oauth ? { oauth: {} } : {}) })).service;
      setRegistered(service);
    }
    const given = headers.filter((h) => h.name !== '');
    if (given.length > 0) await call('services.setHeaders', { id: service.id, mode: 'replace', headers: given.map((h) => ({ name: h.name, value: h.value, storage })) });
    setHeaders([]);
    onDone(service.id);
  });
  return html`<form class="add" onSubmit=${form.submit} aria-labelledby="remote-title">
    <h3 id="remote-title">Add a remote server</h3>
    <p class="note">It is registered disabled: nothing connects until you trust it. What a remote server answers is untrusted.</p>
    ${registered !== null ? html`<p class="note" role="status">${registered.name} is registered; its headers are not saved yet.</p>` : null}
    <label>Name <input name="name" required disabled=${registered !== null} value=${name} onInput=${(e) => setName(e.currentTarget.value)} /></label>
    <label>URL (http or https) <input name="url" type="url" required disabled=${registered !== null} value=${url} onInput=${(e) => setUrl(e.currentTarget.value)} /></label>
    <label class="check"><input type="checkbox" name="oauth" disabled=${registered !== null} checked=${oauth} onChange=${(e) => setOauth(e.currentTarget.checked)} /> It needs an OAuth login (tokens go to the keychain; you log in from its page here)</label>
    <${HeaderRows} headers=${headers} setHeaders=${setHeaders} />
    ${headers.length > 0 ? html`<${StorageChoice} storage=${storage} setStorage=${setStorage} label="Keep the header values in" />` : null}
    ${form.error !== null ? html`<p class="error" role="alert">${form.error}</p>` : null}
    <div class="actions"><button type="submit" disabled=${form.busy}>${registered !== null ? 'Save the headers' : 'Register'}</button> <button type="button" onClick=${() => onDone(registered?.id ?? null)}>Cancel</button></div>
  </form>`;
}

/** What an edit changes: only the fields that differ (services.update wants at least one). */
function changes(service, fields) {
  const set = {};
  if (fields.name !== service.name) set.name = fields.name;
  if (service.transport === 'stdio') {
    if (fields.command !== service.command) set.command = fields.command;
    if (JSON.stringify(fields.args) !== JSON.stringify(service.args)) set.args = fields.args;
    if (fields.cwd !== (service.cwd ?? '')) set.cwd = fields.cwd === '' ? null : fields.cwd;
  } else if (fields.url !== (service.url ?? '')) set.url = fields.url;
  const timeout = fields.timeout === '' ? null : Number(fields.timeout);
  if (timeout !== service.timeoutMs) set.timeoutMs = timeout;
  return set;
}

/** A header to replace needs its value again: the old one is never shown, so it cannot be kept. */
function headersProblem(headers) {
  const empty = headers?.find((h) => h.name !== '' && h.value === '');
  return empty === undefined ? null : `enter the value of ${empty.name}: values are write-only, so the saved one cannot be kept under a replaced list`;
}

/** What a new URL costs: a new trust, the login forgotten, the header values held back. */
function RemoteEditNote({ service }) {
  const headers = service.headers.map((h) => h.name).join(', ');
  return html`<p class="note">A new URL is a new server: its tools are reviewed afresh${service.oauth?.enabled === true ? ', and the saved OAuth login is forgotten (log in again)' : ''}.${headers !== ''
    ? ` The saved values of its headers (${headers}) are not sent to the new URL until you let them when you trust it, or replace them here.` : ''}</p>`;
}

/** An edit, bound to the version shown: an edit elsewhere in between is refused (VERSION_CONFLICT). */
export function EditForm({ service, onDone }) {
  const [fields, setFields] = useState({ name: service.name, command: service.command, args: service.args, cwd: service.cwd ?? '', url: service.url ?? '', timeout: service.timeoutMs === null ? '' : String(service.timeoutMs) });
  const field = (key) => (e) => setFields({ ...fields, [key]: e.currentTarget.value });
  // A remote service's headers: null keeps them; a list replaces them all (names and values: values are write-only).
  const [headers, setHeaders] = useState(null);
  const [storage, setStorage] = useState('keychain');
  const form = useSubmit(async () => {
    const problem = cwdProblem(fields.cwd) ?? headersProblem(headers);
    if (problem !== null) return form.setError(problem);
    // Against the service as it is now: after a refused header save, a second Save does not edit it again.
    const set = changes(service, fields);
    if (Object.keys(set).length > 0) await call('services.update', { id: service.id, configVersion: service.configVersion, set });
    // After the URL: the values are bound to the URL they will be sent to.
    if (headers !== null) await call('services.setHeaders', { id: service.id, mode: 'replace', headers: headers.filter((h) => h.name !== '').map((h) => ({ name: h.name, value: h.value, storage })) });
    onDone();
  });
  const local = service.transport === 'stdio';
  return html`<form class="add" onSubmit=${form.submit} aria-labelledby="edit-title">
    <h4 id="edit-title">Edit ${service.name}</h4>
    <p class="note">Saving stops and disables it; it runs again only once you trust the new version.${local && service.env.length > 0 ? ' Its saved variables go to the edited program only once you let them.' : ''}</p>
    <label>Name <input name="name" required value=${fields.name} onInput=${field('name')} /></label>
    ${local
      ? html`<label>Command <input name="command" required value=${fields.command} onInput=${field('command')} /></label>
          <${ArgsEditor} args=${fields.args} setArgs=${(args) => setFields({ ...fields, args })} />
          <label>Working directory (absolute; empty: the daemon's default) <input name="cwd" value=${fields.cwd} onInput=${field('cwd')} /></label>`
      : html`<label>URL (http or https) <input name="url" type="url" required value=${fields.url} onInput=${field('url')} /></label>
          <${RemoteEditNote} service=${service} />
          ${headers === null
            ? html`<button type="button" onClick=${() => setHeaders(service.headers.map((h) => ({ name: h.name, value: '' })))}>Replace its headers (names and values)…</button>`
            : html`<${HeaderRows} headers=${headers} setHeaders=${setHeaders} />
                <${StorageChoice} storage=${storage} setStorage=${setStorage} label="Keep the new header values in" />
                <button type="button" onClick=${() => setHeaders(null)}>Keep the headers as they are</button>`}`}
    <label>Timeout in ms (empty: the default, 10000) <input name="timeout" inputmode="numeric" pattern="[0-9]*" value=${fields.timeout} onInput=${field('timeout')} /></label>
    ${form.error !== null ? html`<p class="error" role="alert">${form.error}</p>` : null}
    <div class="actions"><button type="submit" disabled=${form.busy}>Save</button> <button type="button" onClick=${() => onDone()}>Cancel</button></div>
  </form>`;
}
