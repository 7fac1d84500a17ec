import { randomUUID } from 'node:crypto';
import { LIMITS, WispError, type Elicitation, type Requester } from '../core/index.js';
import { isoTime } from '../util/index.js';
import type { ArgumentValidator } from './tool-catalog.js';

/** What goes back to the server (MCP ElicitResult). */
export interface ElicitAnswer {
  readonly action: 'accept' | 'decline' | 'cancel';
  readonly content?: Record<string, string | number | boolean | string[]>;
}

/** A server's elicitation/create, as the SDK parsed it (form or URL mode). */
export type ElicitRequest =
  | { readonly mode?: 'form' | undefined; readonly message: string; readonly requestedSchema: Record<string, unknown> }
  | { readonly mode: 'url'; readonly message: string; readonly url: string; readonly elicitationId: string };

/** What the elicitations announce (the daemon's bridge makes wire events of them). */
export type ElicitationAnnouncement =
  | { readonly kind: 'elicitation.requested'; readonly elicitation: Elicitation }
  | { readonly kind: 'elicitation.resolved'; readonly elicitation: Elicitation };

/** A server's text is kept to this many characters. */
export const MAX_ELICITATION_MESSAGE_CHARS = 4096;
/** Open elicitations, in all (a server that keeps asking is answered cancel past it). */
export const MAX_PENDING_ELICITATIONS = 64;
/** Open elicitations of one service: one server cannot take every place and silence the others. */
export const MAX_PENDING_PER_SERVICE = 8;
/** Answered ones remembered, so a late answer hears ELICITATION_NOT_PENDING rather than NOT_FOUND. */
const REMEMBERED = 256;

/** A call running on a service on someone's behalf: what an elicitation arriving meanwhile belongs to. */
interface CallMark {
  readonly serviceId: string;
  readonly requester: Requester;
  /** Stops the call's time limit while a request waits for the human; returns the release. */
  readonly clock: CallHold | undefined;
}

/** What an open request does to the time limit of a call it belongs to (CallClock). */
export interface CallHold {
  hold(): () => void;
}

interface Pending {
  record: Elicitation;
  readonly validate: ArgumentValidator | null;
  readonly schema: Record<string, unknown> | null;
  readonly marks: Set<CallMark>;
  readonly settle: (answer: ElicitAnswer) => void;
  /** Gives back the time limits of the calls it held. */
  readonly release: () => void;
}

type Content = NonNullable<ElicitAnswer['content']>;

/**
 * Servers asking the user for input (MCP elicitation, form and URL mode). A request belongs
 * to the calls running on its service when it arrives (their clients, sessions and tasks);
 * any human-facing client may answer it (a model never sees one: nothing here reaches a
 * task). It ends cancelled when those calls have all ended, when the server withdraws it,
 * or at once when no call is running or no client could answer.
 */
export class Elicitations {
  private readonly pending = new Map<string, Pending>();
  /** Requests still being opened (their schema compiling), by service: they hold their place across the await. */
  private readonly opening = new Map<string, number>();
  private readonly answered: Elicitation[] = [];
  private readonly running = new Map<string, Set<CallMark>>();
  private canAnswer: (owners: readonly Requester[]) => boolean = () => false;

  constructor(
    private readonly publish: (event: ElicitationAnnouncement) => void,
    private readonly now: () => Date,
  ) {}

  /** Set by the daemon once its socket server exists: whether some attached client can answer a request of these owners' calls (it is put before no one otherwise). */
  answerableWhen(check: (owners: readonly Requester[]) => boolean): void {
    this.canAnswer = check;
  }

  /** A call to `serviceId` runs on behalf of `requester` until the returned function is called; `clock`: its time limit. */
  callRunning(serviceId: string, requester: Requester, clock?: CallHold): () => void {
    const mark: CallMark = { serviceId, requester, clock };
    const marks = this.running.get(serviceId) ?? new Set<CallMark>();
    this.running.set(serviceId, marks.add(mark));
    return () => {
      marks.delete(mark);
      if (marks.size === 0) this.running.delete(serviceId);
      for (const entry of [...this.pending.values()]) {
        if (!entry.marks.delete(mark) || entry.marks.size > 0) continue;
        this.finish(entry, { action: 'cancel' }, null, 'the call that caused it ended (answered, failed, timed out or cancelled) before anyone answered');
      }
    };
  }

  /** A server's elicitation/create; resolves with what goes back to it. Throws (the server hears an error) for a request we refuse to show. */
  async ask(service: { readonly id: string; readonly name: string }, request: ElicitRequest, signal: AbortSignal): Promise<ElicitAnswer> {
    const marks = new Set(this.running.get(service.id) ?? []);
    // Nobody waits on this server (no call of anyone's runs), or nobody could answer: it is not put before anyone.
    if (marks.size === 0 || !this.canAnswer([...marks].map((m) => m.requester)) || this.isFull(service.id)) return { action: 'cancel' };
    this.opening.set(service.id, (this.opening.get(service.id) ?? 0) + 1);
    let form: Awaited<ReturnType<typeof compileForm>> | null;
    try {
      form = request.mode !== 'url' ? await compileForm(service.name, request.requestedSchema) : null;
    } finally {
      const left = (this.opening.get(service.id) ?? 1) - 1;
      if (left > 0) this.opening.set(service.id, left);
      else this.opening.delete(service.id);
    }
    // Its call may have ended while the schema compiled.
    for (const mark of marks) if (this.running.get(service.id)?.has(mark) !== true) marks.delete(mark);
    if (marks.size === 0 || signal.aborted) return { action: 'cancel' };
    const target = request.mode === 'url' ? checkUrl(request.url) : null;
    const record: Elicitation = {
      id: randomUUID(),
      service: { id: service.id, name: service.name },
      mode: request.mode === 'url' ? 'url' : 'form',
      message: request.message.slice(0, MAX_ELICITATION_MESSAGE_CHARS),
      requestedSchema: form?.schema ?? null,
      url: target?.href ?? null,
      host: target?.host ?? null,
      owners: [...marks].map((m) => m.requester),
      status: 'pending',
      by: null,
      reason: null,
      createdAt: isoTime(this.now()),
    };
    return new Promise<ElicitAnswer>((resolve) => {
      // While it waits for the human, the calls it belongs to do not time out (the server waits on the user, not the reverse).
      const releases = [...marks].map((m) => m.clock?.hold());
      const release = (): void => releases.forEach((r) => r?.());
      const entry: Pending = { record, validate: form?.validate ?? null, schema: form?.schema ?? null, marks, settle: resolve, release };
      this.pending.set(record.id, entry);
      signal.addEventListener('abort', () => this.finish(entry, { action: 'cancel' }, null, 'the server withdrew it, or its connection closed'), { once: true });
      this.publish({ kind: 'elicitation.requested', elicitation: record });
    });
  }

  /** No place for another request of `serviceId`: open and opening ones count, in all and per service. */
  private isFull(serviceId: string): boolean {
    let total = this.pending.size;
    for (const n of this.opening.values()) total += n;
    let mine = this.opening.get(serviceId) ?? 0;
    for (const entry of this.pending.values()) if (entry.record.service.id === serviceId) mine += 1;
    return total >= MAX_PENDING_ELICITATIONS || mine >= MAX_PENDING_PER_SERVICE;
  }

  /** A human's answer (`by`: the client): checked, then sent to the server. The first answer wins. */
  respond(id: string, action: ElicitAnswer['action'], content: Readonly<Record<string, unknown>> | undefined, by: string): Elicitation {
    const entry = this.pending.get(id);
    if (entry === undefined) {
      const done = this.answered.find((e) => e.id === id);
      if (done === undefined) throw new WispError('ELICITATION_NOT_FOUND', `no elicitation ${id}`);
      throw new WispError('ELICITATION_NOT_PENDING', `elicitation ${id} is already ${done.status}${done.by !== null ? ` by ${done.by}` : ''}`, { status: done.status });
    }
    if (action !== 'accept' || entry.schema === null) {
      if (content !== undefined) {
        throw new WispError('ELICITATION_INVALID', action !== 'accept' ? `content goes with accept only, not with ${action}` : 'a URL-mode elicitation is accepted without content');
      }
      return this.finish(entry, { action }, by, null);
    }
    const filled = withDefaults(entry.schema, flat(content ?? {}));
    const validate = entry.validate;
    if (validate !== null && !validate(filled)) {
      const errors = (validate.errors ?? []).map((e) => ({ path: e.instancePath === '' ? '/' : e.instancePath, message: e.message ?? 'invalid' }));
      throw new WispError('ELICITATION_INVALID', `the content does not match the schema ${entry.record.service.name} asked with: ${errors.map((e) => `${e.path} ${e.message}`).join('; ')}`, { errors });
    }
    return this.finish(entry, { action, content: filled }, by, null);
  }

  /** The pending ones, oldest first. */
  list(): Elicitation[] {
    return [...this.pending.values()].map((e) => e.record);
  }

  private finish(entry: Pending, answer: ElicitAnswer, by: string | null, reason: string | null): Elicitation {
    if (!this.pending.delete(entry.record.id)) return entry.record;
    const status = answer.action === 'accept' ? 'accepted' : answer.action === 'decline' ? 'declined' : 'cancelled';
    entry.record = { ...entry.record, status, by, reason };
    this.answered.push(entry.record);
    if (this.answered.length > REMEMBERED) this.answered.shift();
    entry.settle(answer);
    entry.release();
    this.publish({ kind: 'elicitation.resolved', elicitation: entry.record });
    return entry.record;
  }
}

/** A form's schema: flat (MCP allows only primitive properties), size-capped, cost-checked and compiled like a tool's input schema. */
async function compileForm(serviceName: string, schema: Record<string, unknown>): Promise<{ schema: Record<string, unknown>; validate: ArgumentValidator }> {
  const properties = schema.properties;
  if (schema.type !== 'object' || typeof properties !== 'object' || properties === null || Array.isArray(properties)) {
    throw new WispError('SCHEMA_INVALID', `${serviceName} asked for input with a schema that is not a flat object schema`);
  }
  if (Object.keys(properties).length > LIMITS.maxElicitationFields) {
    throw new WispError('LIMIT_EXCEEDED', `${serviceName} asked for more than ${LIMITS.maxElicitationFields} fields`, { limit: 'maxElicitationFields', max: LIMITS.maxElicitationFields });
  }
  // Loaded here, not at start: ajv's compiler comes with the first schema (as for tools).
  const { SchemaCompiler } = await import('./tool-catalog.js');
  return { schema, validate: new SchemaCompiler().compile(`elicitation from ${serviceName}`, schema) };
}

/** A URL-mode target: an http(s) URL only (never javascript:, file: or a custom scheme), in its parsed form. */
function checkUrl(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new WispError('PROTOCOL_ERROR', 'the elicitation URL does not parse');
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw new WispError('PROTOCOL_ERROR', `the elicitation URL has the scheme ${parsed.protocol} (http and https only)`);
  return parsed;
}

/** The content's values, each a string, number, boolean or array of strings (what MCP allows back), or ELICITATION_INVALID. */
function flat(content: Readonly<Record<string, unknown>>): Content {
  const values: Content = {};
  for (const [name, value] of Object.entries(content)) {
    if (name === '__proto__') throw new WispError('ELICITATION_INVALID', 'a field may not be named __proto__');
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') values[name] = value;
    else if (Array.isArray(value) && value.every((v) => typeof v === 'string')) values[name] = value.map(String);
    else throw new WispError('ELICITATION_INVALID', `the field ${JSON.stringify(name.slice(0, 64))} must be a string, number, boolean or array of strings`, { errors: [{ path: `/${name}`, message: 'must be a flat value' }] });
  }
  return values;
}

/** The content with each omitted field's schema default filled in (SEP-1034), before it is checked. */
function withDefaults(schema: Record<string, unknown>, content: Content): Content {
  const filled: Content = { ...content };
  const properties = schema.properties as Record<string, unknown>;
  for (const [name, property] of Object.entries(properties)) {
    if (name === '__proto__' || name in filled || typeof property !== 'object' || property === null || !('default' in property)) continue;
    const value = (property).default;
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') filled[name] = value;
    else if (Array.isArray(value) && value.every((v) => typeof v === 'string')) filled[name] = value;
  }
  return filled;
}
