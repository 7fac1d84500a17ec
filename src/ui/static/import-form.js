// A one-off import of a Claude Desktop (mcpServers) or VS Code (servers) config file: pasted
// here, sent to the daemon (services.import), which registers each entry by hand, disabled.
// Values of env and headers in the file go to the keychain or this run only, never back.
import { html, useState } from './html.js';
import { errorText, keychainAdvice } from './format.js';
import { StorageChoice } from './service-forms.js';
import { call } from './store.js';

function Outcome({ result }) {
  return html`<div role="status" aria-label="the import">
    <p>${result.imported.length === 0 ? 'Nothing was imported.' : `Imported, disabled until you trust each: ${result.imported.map((s) => s.name).join(', ')}`}</p>
    ${result.skipped.length > 0 ? html`<p>Skipped:</p><ul class="skipped">${result.skipped.map((x, i) => html`<li key=${i}><code>${x.name}</code>: ${x.reason}</li>`)}</ul>` : null}
    ${result.warnings.length > 0 ? html`<p>Warnings:</p><ul class="warnings">${result.warnings.map((w, i) => html`<li key=${i}>${w}</li>`)}</ul>` : null}
    ${
      // What the client it came from let it do, and Wisp does not: said before anyone trusts it (as wispctl mcp import says).
      result.imported.some((s) => s.sandbox.status === 'on')
        ? html`<p class="sandbox-note">The local ones run sandboxed: no network, their working directory only, nothing else of yours (not your home, not other projects); a path their arguments name is not granted by itself. Each one's trust view shows what it may reach, and how to grant more (wispctl mcp sandbox NAME).</p>`
        : null
    }
  </div>`;
}

export function ImportForm() {
  const [content, setContent] = useState('');
  const [file, setFile] = useState('');
  const [storage, setStorage] = useState('keychain');
  const [result, setResult] = useState(null);
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    setResult(null);
    try {
      setResult(await call('services.import', { content, storage, ...(file !== '' ? { file } : {}) }));
      // The file may hold secrets: it does not stay in the page.
      setContent('');
    } catch (err) {
      setError(err.code === 'KEYCHAIN_UNAVAILABLE' ? keychainAdvice(err) : errorText(err));
    } finally {
      setBusy(false);
    }
  };
  return html`<form class="add" onSubmit=${submit} aria-labelledby="import-title">
    <h3 id="import-title">Import a config file once</h3>
    <p class="note">Paste a Claude Desktop (mcpServers) or VS Code (servers) file. Each entry is registered by hand, disabled; its env and header values go where you choose below, never into the registry file, and are never shown again. Unlike a source, the file is not followed afterwards.</p>
    <label>The file's text <textarea name="import-content" rows="6" required autocomplete="off" spellcheck="false" value=${content} onInput=${(e) => setContent(e.currentTarget.value)}></textarea></label>
    <label>Where it came from (optional, for messages) <input name="import-file" value=${file} onInput=${(e) => setFile(e.currentTarget.value)} /></label>
    <${StorageChoice} storage=${storage} setStorage=${setStorage} label="Keep its env and header values in" />
    ${error !== null ? html`<p class="error" role="alert">${error}</p>` : null}
    <div class="actions"><button type="submit" disabled=${busy}>Import</button></div>
    ${result !== null ? html`<${Outcome} result=${result} />` : null}
  </form>`;
}
