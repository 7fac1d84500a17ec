// Installs: the plan form, the daemon's plan as `wispctl install` prints it, the question,
// a progress bar fed by install.progress, and the attempts (installs.list / installs.get).
import { clean } from '../../core/index.js';
import { html, useEffect, useState } from './html.js';
import { attemptLines, errorText, installQuestion, installedLines, planLines, progressLine } from './format.js';
import { ArgsEditor } from './service-forms.js';
import { approvePlan, call, forgetPlan, useStore } from './store.js';

function PlanForm({ onPlan }) {
  const [fields, setFields] = useState({ package: '', version: '', bin: '' });
  const [args, setArgs] = useState([]);
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const field = (key) => (e) => setFields({ ...fields, [key]: e.currentTarget.value });
  const submit = async (e) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      onPlan((await call('installs.plan', { ...fields, args })).plan);
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };
  return html`<form class="add" onSubmit=${submit} aria-labelledby="plan-title">
    <h3 id="plan-title">Plan an install from the npm registry</h3>
    <p class="note">Nothing is written until you approve the plan. Exact versions only; install scripts never run; the server is registered disabled.</p>
    <label>Package (name or @scope/name) <input name="package" required value=${fields.package} onInput=${field('package')} /></label>
    <label>Exact version (no ranges or tags) <input name="version" required value=${fields.version} onInput=${field('version')} /></label>
    <label>Bin (the package's JavaScript bin to run) <input name="bin" required value=${fields.bin} onInput=${field('bin')} /></label>
    <${ArgsEditor} args=${args} setArgs=${setArgs} />
    ${error !== null ? html`<p class="error" role="alert">${error}</p>` : null}
    <div class="actions"><button type="submit" disabled=${busy}>Show the plan</button></div>
  </form>`;
}

function Progress({ digest, succeeded }) {
  const store = useStore();
  const p = store.installProgress.get(digest);
  const total = p?.total ?? 1;
  // Steps done: a started step is not done yet; a success fills the bar.
  const done = succeeded ? total : p === undefined ? 0 : p.status === 'done' ? p.index : p.index - 1;
  return html`<div class="progress">
    <label for=${`bar-${digest}`}>Installing</label>
    <progress id=${`bar-${digest}`} max=${total} value=${done} data-done=${done} data-total=${total}></progress>
    <span role="status">${succeeded ? `${total}/${total} done` : p === undefined ? 'waiting for the daemon…' : progressLine(p)}</span>
  </div>`;
}

/** After approval: installs.start runs until the attempt ends; its approval is answered by the store. */
function PlanView({ plan, onClose }) {
  const [phase, setPhase] = useState('asking');
  const [outcome, setOutcome] = useState(null);
  const approve = async () => {
    setPhase('installing');
    approvePlan(plan.digest);
    try {
      const { service, attempt, reused } = await call('installs.start', { planDigest: plan.digest });
      setOutcome({ ok: true, lines: installedLines(service, attempt, reused) });
    } catch (err) {
      const problems = (err.problems ?? []).map((p) => `  ${clean(String(p.path))}: ${clean(String(p.problem))}`);
      setOutcome({ ok: false, lines: err.code === 'APPROVAL_DENIED' ? ['not installed'] : [errorText(err), ...problems] });
    } finally {
      forgetPlan(plan.digest);
      setPhase('ended');
    }
  };
  const deny = () => {
    setOutcome({ ok: false, lines: ['not installed'] });
    setPhase('ended');
  };
  const question = installQuestion(plan);
  return html`<section class="trust" aria-labelledby="planview-title">
    <h3 id="planview-title">The plan (${plan.digest})</h3>
    <pre class="plan" aria-label="the plan">${planLines(plan).join('\n')}</pre>
    <p class="question">${question}</p>
    ${phase === 'asking'
      ? html`<div class="actions">
          <button type="button" class="approve" aria-label=${`Approve: ${question}`} onClick=${approve}>Approve</button>
          <button type="button" class="deny" aria-label=${`Deny: ${question}`} onClick=${deny}>Deny</button>
        </div>`
      : null}
    ${phase === 'installing' || outcome?.ok === true ? html`<${Progress} digest=${plan.digest} succeeded=${outcome?.ok === true} />` : null}
    ${outcome !== null ? html`<pre class=${outcome.ok ? 'outcome' : 'error'} role=${outcome.ok ? 'status' : 'alert'} aria-label="the outcome">${outcome.lines.join('\n')}</pre>` : null}
    ${phase === 'ended' ? html`<div class="actions"><button type="button" onClick=${onClose}>Plan another</button>${outcome?.ok === true ? html` <a href="#/services">Go to Services to trust and start it</a>` : null}</div>` : null}
  </section>`;
}

function Attempts() {
  const store = useStore();
  const [attempts, setAttempts] = useState(null);
  const [shown, setShown] = useState(null);
  useEffect(() => {
    call('installs.list').then((r) => setAttempts(r.attempts), (err) => setAttempts({ error: errorText(err) }));
  }, [store.installsFinished]);
  const show = (digest) => call('installs.get', { digest }).then((r) => setShown(r.attempt), (err) => setShown({ error: errorText(err) }));
  if (attempts === null) return html`<p>Loading the attempts…</p>`;
  if (!Array.isArray(attempts)) return html`<p class="error">${attempts.error}</p>`;
  return html`<section aria-labelledby="attempts-title">
    <h3 id="attempts-title">Attempts, newest first</h3>
    ${attempts.length === 0
      ? html`<p class="empty">no installs</p>`
      : html`<table class="status"><thead><tr>${['DIGEST', 'PACKAGE', 'STATUS', 'SERVICE', 'STARTED'].map((h) => html`<th scope="col" key=${h}>${h}</th>`)}</tr></thead>
        <tbody>${attempts.map((a) => html`<tr key=${a.digest} data-attempt=${a.digest}>
          <th scope="row"><button type="button" class="link" onClick=${() => show(a.digest)}>${a.digest}</button></th>
          <td>${a.package}@${a.version}</td>
          <td data-cell="status">${a.status}${a.error !== null ? ` (${a.error.code})` : ''}</td>
          <td>${a.serviceName ?? '-'}</td>
          <td>${a.startedAt}</td>
        </tr>`)}</tbody></table>`}
    ${shown !== null ? html`<pre class="attempt" aria-label="the attempt">${shown.error ?? attemptLines(shown).join('\n')}</pre>` : null}
  </section>`;
}

export function InstallsPage() {
  const [plan, setPlan] = useState(null);
  return html`<section aria-labelledby="installs-title">
    <h2 id="installs-title">Installs</h2>
    ${plan === null ? html`<${PlanForm} onPlan=${setPlan} />` : html`<${PlanView} key=${plan.digest} plan=${plan} onClose=${() => setPlan(null)} />`}
    <${Attempts} />
  </section>`;
}
