import type { WispClient } from '../control/client.js';
import { WispError, type Approval, type ErrorCode } from '../core/index.js';
import { clean, oneLine, registeredTool } from './render.js';

/**
 * Unique id prefixes, as the README promises (`wispctl approve 4f0c`): an approval, session
 * or install is named by its full id or by the first 4+ characters of it, if no other one
 * starts the same way. Resolved here, from the list methods (every page), not by the daemon:
 * the command then acts on the one full id the prefix stood for when it was typed, with the
 * daemon's own checks (an id that went away since is the daemon's *_NOT_FOUND), and the
 * protocol keeps exact ids only (no method grows a second, fuzzy way of naming things).
 */

/** The shortest prefix taken: shorter ones match too much to be typed safely. */
export const MIN_PREFIX = 4;

/** Candidates listed when a prefix is ambiguous; the rest are counted. */
const MAX_LISTED = 10;

interface Candidate {
  readonly id: string;
  /** What it is, one line (untrusted parts are cut and cleaned here). */
  readonly label: string;
}

interface Kind {
  /** `approval`, `session`, `install`. */
  readonly noun: string;
  /** The command that lists them all. */
  readonly lister: string;
  readonly notFound: ErrorCode;
  /** A full id: used as it is, without listing. */
  readonly full: RegExp;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const APPROVAL: Kind = { noun: 'approval', lister: 'wispctl approvals --all', notFound: 'APPROVAL_NOT_FOUND', full: UUID };
export const SESSION: Kind = { noun: 'session', lister: 'wispctl sessions', notFound: 'SESSION_NOT_FOUND', full: UUID };
export const ELICITATION: Kind = { noun: 'open elicitation', lister: 'wispctl elicitations', notFound: 'ELICITATION_NOT_FOUND', full: UUID };
export const INSTALL: Kind = { noun: 'install', lister: 'wispctl install list', notFound: 'PLAN_NOT_FOUND', full: /^[0-9a-f]{32}$/ };

/**
 * The one id among `candidates` that `given` names: itself, or the only one it starts (case
 * does not matter: ids are lower-case hex). Too short: INVALID_PARAMS. Several: INVALID_PARAMS
 * listing them (details.candidates has the ids). None: the kind's not-found code.
 */
export function resolvePrefix(kind: Kind, given: string, candidates: readonly Candidate[]): string {
  const exact = candidates.find((c) => c.id === given);
  if (exact !== undefined) return exact.id;
  if (Array.from(given).length < MIN_PREFIX) {
    throw new WispError('INVALID_PARAMS', `give at least ${MIN_PREFIX} characters of the ${kind.noun} id (${kind.lister} lists them)`);
  }
  const lower = given.toLowerCase();
  const matches = candidates.filter((c) => c.id.toLowerCase().startsWith(lower));
  const [only] = matches;
  if (only !== undefined && matches.length === 1) return only.id;
  if (matches.length === 0) throw new WispError(kind.notFound, `no ${kind.noun} id starts with ${clean(given)} (${kind.lister} lists them)`);
  const listed = matches.slice(0, MAX_LISTED).map((c) => `  ${clean(c.id)}  ${c.label}`);
  const more = matches.length > MAX_LISTED ? [`  ... and ${matches.length - MAX_LISTED} more`] : [];
  throw new WispError(
    'INVALID_PARAMS',
    [`${clean(given)} is the start of ${matches.length} ${kind.noun} ids; give more characters:`, ...listed, ...more].join('\n'),
    { candidates: matches.map((c) => c.id) },
  );
}

/** Every approval, pending and recently resolved, through every page of approvals.list. */
export async function allApprovals(client: WispClient, all: boolean): Promise<Approval[]> {
  const approvals: Approval[] = [];
  let cursor: string | null = null;
  do {
    const page: { approvals: Approval[]; nextCursor: string | null } = await client.call('approvals.list', { all, ...(cursor !== null ? { cursor } : {}) });
    approvals.push(...page.approvals);
    cursor = page.nextCursor;
  } while (cursor !== null);
  return approvals;
}

/** The full approval id `given` stands for (resolved ones count too: answering one is the daemon's APPROVAL_NOT_PENDING). */
export async function approvalId(client: WispClient, given: string): Promise<string> {
  if (APPROVAL.full.test(given)) return given;
  const approvals = await allApprovals(client, true);
  return resolvePrefix(
    APPROVAL,
    given,
    approvals.map((a) => ({ id: a.id, label: `${clean(a.state.status)}  ${oneLine(a.summary.serviceName, 40)}/${oneLine(registeredTool(a), 60)}` })),
  );
}

export async function sessionId(client: WispClient, given: string): Promise<string> {
  if (SESSION.full.test(given)) return given;
  const { sessions } = await client.call('sessions.list');
  return resolvePrefix(SESSION, given, sessions.map((s) => ({ id: s.id, label: `${oneLine(s.title, 40)}  (updated ${clean(s.updatedAt)})` })));
}

export async function installDigest(client: WispClient, given: string): Promise<string> {
  if (INSTALL.full.test(given)) return given;
  const { attempts } = await client.call('installs.list');
  return resolvePrefix(INSTALL, given, attempts.map((a) => ({ id: a.digest, label: `${oneLine(`${a.package}@${a.version}`, 80)}  ${clean(a.status)}` })));
}

/** The full elicitation id `given` stands for, among the open ones (a full id goes to the daemon as it is, which says if it was answered). */
export async function elicitationId(client: WispClient, given: string): Promise<string> {
  if (ELICITATION.full.test(given)) return given;
  const { elicitations } = await client.call('elicitations.list');
  return resolvePrefix(ELICITATION, given, elicitations.map((e) => ({ id: e.id, label: `${oneLine(e.service.name, 40)}  ${clean(e.mode)}  ${oneLine(e.message, 60)}` })));
}
