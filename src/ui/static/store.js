// The page's state and its two ways to the panel server: POST /api/call (forwarded to the
// daemon, allow-listed there) and GET /api/events (the daemon's events, live). Both carry the
// HttpOnly session cookie by themselves (same origin).
import { clean } from '../../core/index.js';
import { registeredTool } from './format.js';
import { useEffect, useState } from './html.js';

/** A daemon or panel error: `code` from the daemon's catalog. */
export class PanelError extends Error {
  constructor(error) {
    super(error.message);
    this.code = error.code;
    this.errors = error.errors;
    this.problems = error.problems;
    /** TOOL_ERROR: the error result, as the model gets it. */
    this.result = error.result;
  }
}

export async function call(method, params = {}) {
  let response;
  try {
    response = await fetch('/api/call', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ method, params }),
      credentials: 'same-origin',
    });
  } catch {
    throw new PanelError({ code: 'DAEMON_NOT_RUNNING', message: 'the panel does not answer (wispctl ui stopped?)' });
  }
  const body = await response.json().catch(() => ({ ok: false, error: { code: 'INTERNAL_ERROR', message: `the panel answered ${response.status}` } }));
  if (!body.ok) throw new PanelError(body.error);
  return body.result;
}

/** How many resolved approvals a page keeps showing. */
const KEEP_RESOLVED = 50;
/** How many events the Events page keeps. */
const KEEP_EVENTS = 500;

export const state = {
  /** connecting | open | lost | ended */
  link: 'connecting',
  /** GET /api/panel: { demo, eventTypes, methods } (the event types and methods this panel lets through). */
  panel: null,
  /** The last event seq this page has, so a replay after a reconnect adds nothing twice. */
  lastSeq: 0,
  /** Set when the stream said some events were no longer held for this page. */
  missed: false,
  daemon: null,
  services: [],
  servicesLoaded: false,
  /** id -> { approval, resolved: state | null, here: boolean, answering: boolean, error: string | null } */
  approvals: new Map(),
  notify: false,
  /** plan digest -> the last install.progress of it ({ index, total, step, status }) */
  installProgress: new Map(),
  /** The events since this page opened, oldest first, at most KEEP_EVENTS. */
  events: [],
  /** The events the panel held when the Events page asked (GET /api/events/held), oldest first: shown before the live ones, never applied. */
  heldEvents: [],
  /** Whether some of the daemon's history is no longer held (the panel keeps the newest 1000). */
  heldFromStart: true,
  /** serviceId -> the last service.login ({ authorizationUrl, redirectUri }) while its login waits. */
  logins: new Map(),
  /** Bumped on every install.finished, so the attempts list reloads. */
  installsFinished: 0,
  /** id -> { elicitation, here: boolean, answering: boolean, error: string | null } (servers asking the user for input) */
  elicitations: new Map(),
  /** serviceId -> bumped on tools.held and tools.accepted, so its tools and their review reload. */
  pins: new Map(),
};

/**
 * Plan digests whose install this page's human approved, after being shown the plan: the
 * install approval the daemon then asks of this panel's client, bound to that digest, is
 * answered yes (as `wispctl install` answers the one bound to the plan it printed).
 */
const approvedPlans = new Set();
export function approvePlan(digest) {
  approvedPlans.add(digest);
}
export function forgetPlan(digest) {
  approvedPlans.delete(digest);
}

function answerOwnInstall(approval) {
  const digest = approval.binding.planDigest;
  if (approval.kind !== 'install' || !approvedPlans.has(digest) || approval.requester.clientId !== state.daemon?.you.clientId) return;
  approvedPlans.delete(digest);
  void respond(approval.id, 'approve');
}

const listeners = new Set();
export function changed() {
  for (const listener of listeners) listener();
}

/** Re-renders the calling component whenever the state changes. */
export function useStore() {
  const [, setTick] = useState(0);
  useEffect(() => {
    const listener = () => setTick((n) => n + 1);
    listeners.add(listener);
    return () => listeners.delete(listener);
  }, []);
  return state;
}

function upsertService(service) {
  const i = state.services.findIndex((s) => s.id === service.id);
  if (i === -1) state.services = [...state.services, service];
  else state.services = state.services.map((s) => (s.id === service.id ? service : s));
}

/** The history the Events page starts with: what the panel holds of the daemon's events (only shown, never applied to the other pages' state). */
export async function loadHeldEvents() {
  const response = await fetch('/api/events/held', { credentials: 'same-origin' });
  if (!response.ok) throw new PanelError({ code: 'INTERNAL_ERROR', message: `the panel answered ${response.status}` });
  const body = await response.json();
  state.heldEvents = Array.isArray(body.events) ? body.events.slice(-KEEP_EVENTS) : [];
  state.heldFromStart = body.complete === true;
  changed();
}

export async function loadServices() {
  state.services = (await call('services.list')).services;
  state.servicesLoaded = true;
  changed();
}

/**
 * Reads the held-tool counts again after an event that may change them: one read at a time,
 * and one more if events came meanwhile (a burst costs two reads, not one per event). Only
 * heldTools is taken from the answer: a connection state may be newer here already (the
 * events and the answers come on separate channels), and its own events keep it current.
 */
let reloading = null;
let reloadAgain = false;
async function readHeldCounts() {
  const held = new Map((await call('services.list')).services.map((s) => [s.id, s.heldTools ?? 0]));
  state.services = state.services.map((s) => (held.has(s.id) && held.get(s.id) !== s.heldTools ? { ...s, heldTools: held.get(s.id) } : s));
  changed();
}
function reloadServices() {
  if (reloading !== null) {
    reloadAgain = true;
    return;
  }
  reloading = readHeldCounts()
    .catch(() => undefined)
    .finally(() => {
      reloading = null;
      if (reloadAgain) {
        reloadAgain = false;
        reloadServices();
      }
    });
}

function addApproval(approval) {
  if (state.approvals.has(approval.id)) return false;
  state.approvals.set(approval.id, { approval, resolved: approval.state.status === 'pending' ? null : approval.state, here: false, answering: false, error: null });
  return true;
}

async function loadApprovals() {
  let cursor = null;
  do {
    const page = await call('approvals.list', cursor !== null ? { cursor } : {});
    for (const approval of page.approvals) addApproval(approval);
    cursor = page.nextCursor;
  } while (cursor !== null);
  changed();
}

/** A new elicitation, or a newer record of one (its resolution); the oldest answered ones go. */
function putElicitation(elicitation) {
  const entry = state.elicitations.get(elicitation.id);
  if (entry === undefined) state.elicitations.set(elicitation.id, { elicitation, here: false, answering: false, error: null });
  else if (entry.elicitation.status === 'pending' || entry.elicitation.status === 'answered') entry.elicitation = elicitation;
  const done = [...state.elicitations.values()].filter((e) => e.elicitation.status !== 'pending');
  for (const e of done.slice(0, Math.max(0, done.length - KEEP_RESOLVED))) state.elicitations.delete(e.elicitation.id);
}

async function loadElicitations() {
  // The demo daemon has none to list.
  const { elicitations } = await call('elicitations.list').catch(() => ({ elicitations: [] }));
  for (const elicitation of elicitations) putElicitation(elicitation);
  changed();
}

/** Answers an elicitation from this page; the first answer from any client wins. */
export async function answerElicitation(id, action, content) {
  const entry = state.elicitations.get(id);
  if (entry === undefined || entry.answering || entry.elicitation.status !== 'pending') return;
  entry.answering = true;
  entry.error = null;
  changed();
  try {
    const { elicitation } = await call('elicitations.respond', { id, action, ...(content !== undefined ? { content } : {}) });
    entry.here = true;
    entry.elicitation = elicitation;
  } catch (error) {
    // ELICITATION_NOT_PENDING: someone else answered (or it was withdrawn); its resolved event says how.
    entry.error = error.code === 'ELICITATION_NOT_PENDING' ? null : { code: error.code, message: error.message, errors: error.errors };
    if (error.code === 'ELICITATION_NOT_PENDING') entry.elicitation = { ...entry.elicitation, status: entry.elicitation.status === 'pending' ? 'answered' : entry.elicitation.status };
  } finally {
    entry.answering = false;
    changed();
  }
}

function forgetOldResolved() {
  const resolved = [...state.approvals.values()].filter((entry) => entry.resolved !== null);
  for (const entry of resolved.slice(0, Math.max(0, resolved.length - KEEP_RESOLVED))) state.approvals.delete(entry.approval.id);
}

function notifyApproval(approval) {
  if (!state.notify || typeof Notification === 'undefined' || Notification.permission !== 'granted') return;
  const note = new Notification('Wisp: an approval waits', { body: `${clean(approval.summary.serviceName)}: ${clean(registeredTool(approval))}`, tag: approval.id });
  note.onclick = () => {
    window.focus();
    location.hash = '#/approvals';
  };
}

/** Pages that keep state of their own (chat-store.js) follow the events here. */
const eventHandlers = new Set();
export function onDaemonEvent(handler) {
  eventHandlers.add(handler);
}

function onEvent(event) {
  if (event.seq <= state.lastSeq) return;
  state.lastSeq = event.seq;
  state.events = [...state.events.slice(-(KEEP_EVENTS - 1)), event];
  for (const handler of eventHandlers) handler(event);
  switch (event.type) {
    case 'service.registered':
    case 'service.updated':
      upsertService(event.service);
      break;
    case 'service.deleted':
      state.services = state.services.filter((s) => s.id !== event.service.id);
      break;
    case 'service.state': {
      const service = state.services.find((s) => s.id === event.service.id);
      // Held tools are there to review only while it is active (the daemon says 0 otherwise); a new list brings its own count (service.tools).
      if (service !== undefined) upsertService({ ...service, connection: event.connection, enabled: event.connection.status !== 'disabled', ...(event.connection.status !== 'active' ? { heldTools: 0 } : {}) });
      break;
    }
    case 'approval.requested':
      if (addApproval(event.approval)) {
        notifyApproval(event.approval);
        answerOwnInstall(event.approval);
      }
      break;
    case 'approval.resolved': {
      const entry = state.approvals.get(event.approval.id);
      if (entry !== undefined) entry.resolved = event.approval.state;
      forgetOldResolved();
      break;
    }
    case 'elicitation.requested':
    case 'elicitation.resolved':
      putElicitation(event.elicitation);
      break;
    case 'tools.held':
    case 'tools.accepted':
      state.pins.set(event.serviceId, (state.pins.get(event.serviceId) ?? 0) + 1);
      // How many are held is in the service's view (heldTools), which no event carries: read the list again.
      reloadServices();
      break;
    case 'service.tools':
      // A new list may hold fewer (or none) of the tools held before: the count comes with the list.
      reloadServices();
      break;
    case 'service.login':
      state.logins.set(event.service.id, { authorizationUrl: event.authorizationUrl, redirectUri: event.redirectUri });
      break;
    case 'install.progress':
      state.installProgress.set(event.install.digest, { index: event.index, total: event.total, step: event.step, status: event.status });
      break;
    case 'install.finished':
      state.installsFinished += 1;
      break;
    case 'daemon.stopping':
      state.link = 'ended';
      break;
    default:
      break;
  }
  changed();
}

async function loadPanel() {
  const response = await fetch('/api/panel', { credentials: 'same-origin' });
  if (response.ok) state.panel = await response.json();
  changed();
}

/**
 * Follows the events, and (re)loads the lists each time the stream opens, so nothing falls
 * between. After a lost connection the browser asks again with the last seq it had
 * (Last-Event-ID): the panel replays what came since, and says so when it no longer holds it.
 */
export function connect() {
  void loadPanel().catch(() => undefined);
  const source = new EventSource('/api/events');
  source.addEventListener('missed', () => {
    state.missed = true;
    changed();
  });
  source.addEventListener('open', () => {
    state.link = 'open';
    changed();
    Promise.all([loadServices(), loadApprovals(), loadElicitations(), call('daemon.status').then((status) => (state.daemon = status))]).then(changed, () => undefined);
  });
  source.addEventListener('message', (message) => onEvent(JSON.parse(message.data)));
  source.addEventListener('error', () => {
    if (state.link !== 'ended') state.link = 'lost';
    changed();
  });
}

/** Answers an approval from this page; the first answer from any client wins. scope: network.connect's 'always' (a live grant too). */
export async function respond(id, decision, scope) {
  const entry = state.approvals.get(id);
  if (entry === undefined || entry.answering || entry.resolved !== null) return;
  entry.answering = true;
  entry.error = null;
  changed();
  try {
    const { approval } = await call('approvals.respond', { id, decision, ...(scope !== undefined ? { scope } : {}) });
    entry.here = true;
    entry.resolved = approval.state;
  } catch (error) {
    // Someone else answered first: the resolved event says how; until then, say that much.
    if (error.code === 'APPROVAL_NOT_PENDING') entry.resolved ??= { status: 'answered' };
    else entry.error = `${error.message} (${error.code})`;
  } finally {
    entry.answering = false;
    changed();
  }
}

export async function enableNotifications() {
  if (typeof Notification === 'undefined') return;
  state.notify = (await Notification.requestPermission()) === 'granted';
  changed();
}
