// Sources: the config files merged into services (global settings, enabled plugins,
// projects' .mcp.json), what the last sync did with each entry, in `wispctl mcp sources`'
// words; reload, add and remove a project. Every name, path and message comes from a file:
// text only.
import { html, useEffect, useState } from './html.js';
import { errorText } from './format.js';
import { call } from './store.js';
import { ImportForm } from './import-form.js';

/** `project /dir/.mcp.json`, `plugin (kit) /dir/plugin.json`: where() in src/cli/render/sources.ts. */
function where(origin) {
  return `${origin.source}${origin.plugin !== null ? ` (${origin.plugin})` : ''} ${origin.file}`;
}

function Entries({ report }) {
  if (report.entries.length === 0) return html`<p class="empty">no entries</p>`;
  return html`<table class="status sources">
    <caption>Merged entries: each became a service (disabled until trusted) or was skipped</caption>
    <thead><tr>${['NAME', 'TRANSPORT', 'ACTION', 'FROM', 'OVERRIDES', 'WARNINGS'].map((h) => html`<th scope="col" key=${h}>${h}</th>`)}</tr></thead>
    <tbody>${report.entries.map((e) => html`<tr key=${`${e.name}/${e.origin.file}`} data-entry=${e.name}>
      <th scope="row">${e.name}</th>
      <td>${e.transport}</td>
      <td data-cell="action">${e.action}${e.reason !== null ? `: ${e.reason}` : ''}</td>
      <td data-cell="from">${where(e.origin)}</td>
      <td data-cell="overrides">${e.overrides !== null ? where(e.overrides) : '-'}</td>
      <td data-cell="warnings">${e.warnings.length === 0 ? '-' : html`<ul class="warnings">${e.warnings.map((w, i) => html`<li key=${i}>${w}</li>`)}</ul>`}</td>
    </tr>`)}</tbody>
  </table>`;
}

/** skipped, unusable files, removed services: one line each, as wispctl prints them. */
function Notes({ report }) {
  const lines = [
    ...report.skipped.map((s) => `skipped ${s.name} (${where(s.origin)}): ${s.reason}`),
    ...report.problems.map((p) => `unusable: ${p.file}: ${p.message}${p.code !== undefined ? ` (${p.code}): skipped${(p.kept ?? []).length > 0 ? `; kept as they were: ${p.kept.join(', ')}` : ''}` : ''}`),
    ...report.removed.map((r) => `removed ${r}: its entry is gone`),
  ];
  if (lines.length === 0) return null;
  return html`<ul class="notes" aria-label="skipped, unusable and removed">${lines.map((line, i) => html`<li key=${i}>${line}</li>`)}</ul>`;
}

function Projects({ projects, act }) {
  const [directory, setDirectory] = useState('');
  const [confirm, setConfirm] = useState(null);
  const add = (e) => {
    e.preventDefault();
    if (!directory.startsWith('/')) return act(Promise.reject(Object.assign(new Error('the directory must be an absolute path'), { code: 'INVALID_PARAMS' })));
    return act(call('sources.addProject', { directory }), () => setDirectory(''));
  };
  return html`<section aria-labelledby="projects-title">
    <h3 id="projects-title">Projects (their .mcp.json is read, in this order)</h3>
    ${projects.length === 0
      ? html`<p class="empty">(none: add one below)</p>`
      : html`<ul class="projects">${projects.map((dir) => html`<li key=${dir}><code>${dir}</code> ${confirm === dir
          ? html`<span role="group" aria-label=${`confirm removing ${dir}`}>Remove this project and its services? <button type="button" class="deny" onClick=${() => act(call('sources.removeProject', { directory: dir }), () => setConfirm(null))}>Yes, remove</button> <button type="button" onClick=${() => setConfirm(null)}>Keep it</button></span>`
          : html`<button type="button" aria-label=${`Remove the project ${dir}…`} onClick=${() => setConfirm(dir)}>Remove…</button>`}</li>`)}</ul>`}
    <form class="add" onSubmit=${add} aria-label="Add a project">
      <label>Project directory (absolute; its .mcp.json becomes a source) <input name="directory" required value=${directory} onInput=${(e) => setDirectory(e.currentTarget.value)} /></label>
      <div class="actions"><button type="submit">Add the project</button></div>
    </form>
  </section>`;
}

export function SourcesPage() {
  const [view, setView] = useState(null);
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  /** Runs one sources.* call; its answer is the new view. */
  const act = async (pending, then = () => undefined) => {
    setBusy(true);
    setError(null);
    try {
      setView(await pending);
      then();
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };
  useEffect(() => void act(call('sources.list')), []);
  const report = view?.report ?? null;
  return html`<section aria-labelledby="sources-title" aria-busy=${busy}>
    <h2 id="sources-title">Sources</h2>
    <p class="note">Entries from config files become services, disabled until you trust them; services you registered by hand are never touched. Edit the file and reload, not the service.</p>
    <div class="toolbar"><button type="button" disabled=${busy} onClick=${() => act(call('sources.reload'))}>Reload the sources</button></div>
    ${error !== null ? html`<p class="error" role="alert">${error}</p>` : null}
    ${view === null
      ? html`<p>Loading…</p>`
      : html`<dl class="fields">
            <div><dt>config dir</dt><dd><code>${view.configDir}</code> (settings.json, plugins/)</dd></div>
            <div><dt>synced</dt><dd data-cell="synced">${report !== null ? report.at : 'not synced yet'}</dd></div>
          </dl>
          ${report !== null ? html`<${Entries} report=${report} /><${Notes} report=${report} />` : null}
          <${Projects} projects=${view.projects} act=${act} />`}
    <${ImportForm} />
  </section>`;
}
