import type { WispClient } from '../control/client.js';
import { WispError, type Elicitation } from '../core/index.js';
import { PromptCancelled, Prompter } from './prompt.js';
import { clean, errorLines, oneLine, showJson } from './render.js';
import { elicitationDone, elicitationText } from './render/elicitations.js';

/**
 * Answering a server's request for input (elicitation) from wispctl: the form's fields typed
 * by the schema the server sent (given as key=value, as JSON, or asked one by one on a
 * terminal), or a URL the user opens themself. The daemon checks the content against the
 * schema again; a value that cannot even be typed is refused here (ELICITATION_INVALID),
 * before anything is sent.
 */

type Value = string | number | boolean | string[];
type Field = Readonly<Record<string, unknown>>;

export interface FormSchema {
  readonly properties: Readonly<Record<string, Field>>;
  readonly required: ReadonlySet<string>;
}

export function formSchema(e: Elicitation): FormSchema {
  const schema = (e.requestedSchema ?? {}) as { properties?: unknown; required?: unknown };
  const properties = typeof schema.properties === 'object' && schema.properties !== null ? (schema.properties as Record<string, Field>) : {};
  return { properties, required: new Set(Array.isArray(schema.required) ? schema.required.map(String) : []) };
}

function invalid(name: string, message: string): WispError {
  return new WispError('ELICITATION_INVALID', `${clean(oneLine(name, 64))}: ${message}`, { errors: [{ path: `/${name}`, message }] });
}

/** The values a field allows, when it names them (enum, or oneOf/anyOf of consts; for arrays, their items'). */
function choices(field: Field): unknown[] | null {
  if (Array.isArray(field.enum)) return field.enum as unknown[];
  const options = Array.isArray(field.oneOf) ? field.oneOf : Array.isArray(field.anyOf) ? field.anyOf : null;
  if (options === null) return null;
  return options.map((o: unknown) => (typeof o === 'object' && o !== null ? (o as { const?: unknown }).const : undefined)).filter((v) => v !== undefined);
}

/** One field's value from what was typed, by its type in the schema. */
export function fieldValue(name: string, field: Field, text: string): Value {
  const type = field.type;
  if (type === 'number' || type === 'integer') {
    const n = text.trim() === '' ? NaN : Number(text);
    if (!Number.isFinite(n)) throw invalid(name, `must be a number, not ${showJson(oneLine(text, 40))}`);
    if (type === 'integer' && !Number.isInteger(n)) throw invalid(name, 'must be an integer');
    return n;
  }
  if (type === 'boolean') {
    if (/^(y|yes|true)$/i.test(text.trim())) return true;
    if (/^(n|no|false)$/i.test(text.trim())) return false;
    throw invalid(name, 'must be yes or no (true or false)');
  }
  if (type === 'array') {
    const items = text.trim().startsWith('[') ? parseArray(name, text) : text.split(',').map((s) => s.trim()).filter((s) => s !== '');
    const allowed = choices((field.items ?? {}) as Field);
    const wrong = allowed === null ? undefined : items.find((i) => !allowed.includes(i));
    if (wrong !== undefined) throw invalid(name, `${showJson(oneLine(wrong, 40))} is not one of ${allowedText(allowed ?? [])}`);
    return items;
  }
  const allowed = choices(field);
  if (allowed !== null && !allowed.includes(text)) throw invalid(name, `must be one of ${allowedText(allowed)}`);
  return text;
}

function allowedText(allowed: readonly unknown[]): string {
  return allowed.slice(0, 20).map((v) => showJson(v)).join(', ');
}

function parseArray(name: string, text: string): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw invalid(name, 'is not a JSON array');
  }
  if (!Array.isArray(parsed) || !parsed.every((v) => typeof v === 'string')) throw invalid(name, 'must be an array of strings');
  return parsed;
}

/** key=value words, each typed by the form's schema; a key the form does not name is refused. */
export function keyValueContent(schema: FormSchema, words: readonly string[]): Record<string, Value> {
  const content: Record<string, Value> = {};
  for (const word of words) {
    const at = word.indexOf('=');
    if (at <= 0) throw new WispError('INVALID_PARAMS', `expected key=value, got ${showJson(oneLine(word, 40))}`);
    const name = word.slice(0, at);
    const field = Object.hasOwn(schema.properties, name) ? schema.properties[name] : undefined;
    if (field === undefined) throw invalid(name, `the form has no such field (it has: ${Object.keys(schema.properties).map((k) => clean(k)).join(', ')})`);
    content[name] = fieldValue(name, field, word.slice(at + 1));
  }
  return content;
}

/**
 * Each field asked in turn on the terminal: an empty line skips an optional field (its
 * default, if any, is filled in by the daemon); a value that does not fit is said and asked again.
 */
export async function askFields(prompter: Prompter, schema: FormSchema, err: (line: string) => void, withdraw?: AbortSignal): Promise<Record<string, Value>> {
  const content: Record<string, Value> = {};
  for (const [name, field] of Object.entries(schema.properties)) {
    const required = schema.required.has(name);
    const hint = [typeof field.type === 'string' ? field.type : 'value', required ? 'required' : 'optional, Enter skips'].join(', ');
    for (;;) {
      const text = await prompter.ask(`  ${clean(oneLine(name, 64))} (${clean(hint)}): `, withdraw);
      if (text === '' && !required) break;
      try {
        if (text === '') throw invalid(name, 'is required');
        content[name] = fieldValue(name, field, text);
        break;
      } catch (error) {
        if (!(error instanceof WispError)) throw error;
        err(`  ${error.message}: try again`);
      }
    }
  }
  return content;
}

export type ElicitAction = 'accept' | 'decline' | 'cancel';

/**
 * Shows one elicitation and asks for the answer on the terminal: a form field by field (after
 * "Fill it in?"), or whether the user completed the URL (yes: accept; no: decline). It never
 * opens the URL. `withdraw` aborts the questions when it was answered elsewhere.
 */
export async function askElicitation(
  prompter: Prompter,
  e: Elicitation,
  err: (line: string) => void,
  withdraw?: AbortSignal,
): Promise<{ action: ElicitAction; content?: Record<string, Value> }> {
  err(elicitationText(e));
  if (e.mode === 'url') {
    const done = await prompter.confirm(`Did you complete it at ${clean(e.host ?? '')}? (no declines) [y/N] `, withdraw);
    return { action: done ? 'accept' : 'decline' };
  }
  if (!(await prompter.confirm('Fill in the form? (no declines) [y/N] ', withdraw))) return { action: 'decline' };
  return { action: 'accept', content: await askFields(prompter, formSchema(e), err, withdraw) };
}

/**
 * Asks on the terminal and sends the answer; a value the daemon refuses is said and the form
 * asked again. Ctrl-C: PromptCancelled, the elicitation left as it is (the caller decides).
 */
export async function answerOnTerminal(client: WispClient, prompter: Prompter, e: Elicitation, err: (line: string) => void, withdraw?: AbortSignal): Promise<Elicitation> {
  for (;;) {
    const answer = await askElicitation(prompter, e, err, withdraw);
    try {
      return (await client.call('elicitations.respond', { id: e.id, ...answer })).elicitation;
    } catch (error) {
      if (!(error instanceof WispError) || error.code !== 'ELICITATION_INVALID') throw error;
      // Nothing was sent: said, and asked again.
      for (const line of errorLines(error)) err(line);
    }
  }
}

/**
 * An elicitation a command's own call caused (wispctl mcp call, a chat's task): asked here on a terminal,
 * else shown with how to answer it elsewhere. Answered elsewhere first: the questions are
 * withdrawn. Ctrl-C cancels it at the daemon and ends the command (`interrupt`).
 */
export function answerOwnElicitation(
  client: WispClient,
  e: Elicitation,
  options: {
    readonly ask: boolean;
    readonly err: (line: string) => void;
    readonly interrupt: (cleanup: Promise<unknown>) => void;
    /** The chat's prompter (one readline on the terminal); otherwise one of its own, closed after. */
    readonly prompter?: Prompter;
  },
): void {
  if (!options.ask) {
    options.err(`${elicitationText(e)}\nWaiting for an answer: wispctl elicitation answer ${clean(e.id)} (from any terminal).`);
    return;
  }
  const withdrawn = new AbortController();
  const off = client.onEvent((event) => {
    if (event.type !== 'elicitation.resolved' || event.elicitation.id !== e.id || withdrawn.signal.aborted) return;
    withdrawn.abort(new WispError('ELICITATION_NOT_PENDING', `${elicitationDone(event.elicitation)} (elsewhere, while asked here)`));
  });
  // Several at once are asked one after the other, never two readlines on one terminal.
  const mine = ownTurn.then(() => {
    const shared = options.prompter;
    const prompter = shared ?? new Prompter();
    return answerOnTerminal(client, prompter, e, options.err, withdrawn.signal).finally(() => (shared === undefined ? prompter.close() : undefined));
  });
  ownTurn = mine.catch(() => undefined);
  mine
    .then(
      (done) => options.err(elicitationDone(done)),
      (error: unknown) => {
        if (error instanceof PromptCancelled) options.interrupt(client.call('elicitations.respond', { id: e.id, action: 'cancel' }));
        else for (const line of errorLines(error)) options.err(line);
      },
    )
    .finally(off);
}

let ownTurn: Promise<unknown> = Promise.resolve();
