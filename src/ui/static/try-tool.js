// Try a tool (as the MCP Inspector lets you): a form from its input schema, the call sent as
// tools.call through the panel like any client's, its approval shown inline (it can be answered
// here or anywhere else), then the result as the model gets it: text, markers where content was
// left out, the truncation, and an error result as an error.
import { html, useState } from './html.js';
import { clean, cleanLines } from '../../core/index.js';
import { ApprovalCard } from './approvals.js';
import { errorText, pretty } from './format.js';
import { call, state, useStore } from './store.js';

/** How a property is entered: a select for enums and booleans, a number, a line of text, or JSON for anything else. */
function kindOf(schema) {
  if (typeof schema !== 'object' || schema === null) return 'json';
  if (Array.isArray(schema.enum) && schema.enum.length > 0 && schema.enum.every((v) => ['string', 'number', 'boolean'].includes(typeof v))) return 'enum';
  if (schema.type === 'string') return 'string';
  if (schema.type === 'integer' || schema.type === 'number') return schema.type;
  if (schema.type === 'boolean') return 'boolean';
  return 'json';
}

/** The form's fields: one per property, or one JSON field for the whole arguments when the schema names none. */
export function fieldsOf(inputSchema) {
  const properties = inputSchema?.properties;
  if (typeof properties !== 'object' || properties === null || Object.keys(properties).length === 0) return null;
  const required = new Set(Array.isArray(inputSchema.required) ? inputSchema.required : []);
  return Object.entries(properties).map(([name, schema]) => ({ name, schema, kind: kindOf(schema), required: required.has(name) }));
}

/** The arguments from what was typed: empty optional fields are left out. Throws a message for a field that does not parse. */
export function argumentsOf(fields, values, raw) {
  if (fields === null) {
    const parsed = raw.trim() === '' ? {} : JSON.parse(raw);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('the arguments must be a JSON object');
    return parsed;
  }
  const args = {};
  for (const f of fields) {
    const v = values[f.name] ?? '';
    if (v === '') continue;
    if (f.kind === 'string') args[f.name] = v;
    else if (f.kind === 'integer' || f.kind === 'number') {
      const n = Number(v);
      if (!Number.isFinite(n)) throw new Error(`${clean(f.name)}: not a number`);
      args[f.name] = n;
    } else if (f.kind === 'boolean') args[f.name] = v === 'true';
    else if (f.kind === 'enum') args[f.name] = f.schema.enum[Number(v)];
    else {
      try {
        args[f.name] = JSON.parse(v);
      } catch {
        throw new Error(`${clean(f.name)}: not JSON`);
      }
    }
  }
  return args;
}

function Input({ field, value, onInput }) {
  const id = `try-${field.name}`;
  const set = (e) => onInput(field.name, e.currentTarget.value);
  const label = html`<label for=${id}><code>${clean(field.name)}</code>${field.required ? ' (required)' : ''} <span class="model-name">${clean(String(field.kind === 'json' ? 'JSON' : field.kind))}</span></label>`;
  const description = typeof field.schema?.description === 'string' ? html`<p class="note">from the server: ${clean(field.schema.description)}</p>` : null;
  let input;
  if (field.kind === 'enum' || field.kind === 'boolean') {
    const options = field.kind === 'enum' ? field.schema.enum.map((v, i) => [String(i), clean(JSON.stringify(v))]) : [['true', 'true'], ['false', 'false']];
    input = html`<select id=${id} value=${value} onChange=${set}><option value="">(not given)</option>${options.map(([v, t]) => html`<option key=${v} value=${v}>${t}</option>`)}</select>`;
  } else if (field.kind === 'json') {
    input = html`<textarea id=${id} rows="3" value=${value} onInput=${set} placeholder="JSON"></textarea>`;
  } else {
    input = html`<input id=${id} type=${field.kind === 'string' ? 'text' : 'number'} step=${field.kind === 'integer' ? '1' : 'any'} value=${value} onInput=${set} />`;
  }
  return html`<div class="field">${label}${input}${description}</div>`;
}

/** The result's parts as the model reads them (the gateway's toMcpResult, in words): text, markers, the cut. */
export function resultLines(result) {
  const lines = result.content.map((c) =>
    c.type === 'omitted'
      ? `[omitted by Wisp: ${clean(c.originalType)}${c.mimeType !== null ? ` ${clean(c.mimeType)}` : ''}${c.bytes !== null ? `, ${c.bytes} bytes` : ''}]`
      : cleanLines(c.text).join('\n'),
  );
  if (result.structuredContent !== null) lines.push(`structured content: ${pretty(result.structuredContent)}`);
  if (result.structuredOmitted !== null) lines.push(`[structured content omitted by Wisp: ${clean(result.structuredOmitted.reason)}]`);
  if (result.originalLength > result.text.length) lines.push(`[truncated by Wisp: ${result.originalLength} characters, the first ${result.text.length} shown]`);
  return lines;
}

function Result({ outcome }) {
  if (outcome.error !== undefined) {
    const { error } = outcome;
    const result = error.result;
    return html`<div class="try-result" role="group" aria-label="the result">
      <p class="error" role="alert">${errorText(error)}</p>
      ${result !== undefined ? html`<p>what the model gets (an error result):</p><pre class="logs" aria-label="result text">${resultLines(result).join('\n')}</pre>` : null}
    </div>`;
  }
  const { result } = outcome;
  return html`<div class="try-result" role="group" aria-label="the result">
    <p role="status">Done in ${result.durationMs} ms (waited ${result.waitedMs} ms for the approval). ${result.truncated ? 'Truncated: the model gets only what is shown.' : 'Not truncated.'}</p>
    <pre class="logs" aria-label="result text">${resultLines(result).join('\n') || '(no content)'}</pre>
  </div>`;
}

/** The pending approval of this page's own call: asked by this panel's client for this tool, and new since the call was sent. */
function ownApproval(store, service, tool, before) {
  const me = state.daemon?.you.clientId;
  for (const entry of store.approvals.values()) {
    const a = entry.approval;
    if (before.has(a.id) || a.kind !== 'tool_call' || a.requester.clientId !== me) continue;
    if (a.binding.serviceId === service.id && a.binding.toolName === tool.name) return entry;
  }
  return null;
}

export function TryTool({ service, tool, onClose }) {
  const store = useStore();
  const [fields] = useState(() => fieldsOf(tool.inputSchema));
  const [values, setValues] = useState({});
  const [raw, setRaw] = useState('{}');
  const [problem, setProblem] = useState(null);
  /** null | { before: Set of approval ids, outcome: null | { result } | { error } } */
  const [sent, setSent] = useState(null);
  const onInput = (name, value) => setValues({ ...values, [name]: value });
  const waiting = sent !== null && sent.outcome === null;
  const submit = (e) => {
    e.preventDefault();
    let args;
    try {
      args = argumentsOf(fields, values, raw);
    } catch (err) {
      setProblem(err.message);
      return;
    }
    setProblem(null);
    const before = new Set(store.approvals.keys());
    setSent({ before, outcome: null });
    call('tools.call', { serviceId: service.id, toolName: tool.name, arguments: args }).then(
      (result) => setSent({ before, outcome: { result } }),
      (error) => setSent({ before, outcome: { error } }),
    );
  };
  const approval = sent !== null ? ownApproval(store, service, tool, sent.before) : null;
  const title = `Try ${tool.name}`;
  return html`<section class="try" role="region" aria-label=${clean(title)}>
    <h4>${clean(title)}</h4>
    <p class="note">The call asks for an approval like any other: answer it below, or from wispctl or another page.</p>
    <form onSubmit=${submit}>
      ${fields === null
        ? html`<div class="field"><label for="try-raw">arguments (a JSON object)</label><textarea id="try-raw" rows="4" value=${raw} onInput=${(e) => setRaw(e.currentTarget.value)}></textarea></div>`
        : fields.map((f) => html`<${Input} key=${f.name} field=${f} value=${values[f.name] ?? ''} onInput=${onInput} />`)}
      ${problem !== null ? html`<p class="error" role="alert">${problem}</p>` : null}
      <div class="actions">
        <button type="submit" class="approve" disabled=${waiting}>Call ${clean(tool.name)}</button>
        <button type="button" onClick=${onClose}>Close</button>
      </div>
    </form>
    ${waiting ? html`<p role="status">${approval?.resolved?.status === 'approved' ? 'Approved: the call runs…' : 'Waiting for approval…'}</p>` : null}
    ${approval !== null ? html`<${ApprovalCard} key=${approval.approval.id} entry=${approval} />` : null}
    ${sent?.outcome ? html`<${Result} outcome=${sent.outcome} />` : null}
  </section>`;
}
