import type { MethodEntry, MethodTraits } from '../../control/index.js';
import type { MethodName } from '../../core/index.js';
import { checks } from '#generated/params-checks.js';
import { elicitationHandlers } from './elicitations.js';
import { approvalHandlers } from './approvals.js';
import { daemonHandlers } from './daemon.js';
import { eventHandlers } from './events.js';
import { installHandlers } from './installs.js';
import { modelHandlers } from './model.js';
import { remoteHandlers } from './remote.js';
import { secretHandlers } from './secrets.js';
import { serviceHandlers } from './services.js';
import { sessionHandlers } from './sessions.js';
import { sourceHandlers } from './sources.js';
import { toolHandlers } from './tools.js';
import { offerPinHandlers, offeringHandlers } from './offerings.js';
import { profileHandlers } from './profiles.js';
import type { DaemonControl, DaemonParts, Handlers } from './types.js';

export type { DaemonControl, DaemonParts, Handler, Handlers } from './types.js';

/** The methods named by more than one group (never, when each method has exactly one owner). */
type Shared<Groups extends readonly object[], Seen = never> = Groups extends readonly [infer First, ...infer Rest extends readonly object[]]
  ? (keyof First & Seen) | Shared<Rest, Seen | keyof First>
  : never;

type NoneOf<T extends never> = T;

/** The full handler table, one group per area. */
export function handlers(parts: DaemonParts, control: DaemonControl): Handlers {
  const daemon = daemonHandlers(parts, control);
  const events = eventHandlers(parts);
  const services = serviceHandlers(parts);
  const remote = remoteHandlers(parts);
  const secrets = secretHandlers(parts);
  const tools = toolHandlers(parts);
  const sessions = sessionHandlers(parts);
  const model = modelHandlers(parts);
  const installs = installHandlers(parts);
  const sources = sourceHandlers(parts);
  const approvals = approvalHandlers(parts);
  const elicitations = elicitationHandlers(parts);
  const offerings = offeringHandlers(parts);
  const offerPins = offerPinHandlers(parts);
  const profiles = profileHandlers(parts);
  // A method no group handles fails here (each group is a Pick of Handlers, so none can add one the protocol lacks)...
  const table: Handlers = { ...daemon, ...events, ...services, ...remote, ...secrets, ...tools, ...sessions, ...model, ...installs, ...sources, ...approvals, ...elicitations, ...offerings, ...offerPins, ...profiles };
  // ...and one handled by two groups fails here, naming it.
  type Groups = [typeof daemon, typeof events, typeof services, typeof remote, typeof secrets, typeof tools, typeof sessions, typeof model, typeof installs, typeof sources, typeof approvals, typeof elicitations, typeof offerings, typeof offerPins, typeof profiles];
  type _EachMethodOnce = NoneOf<Shared<Groups>>;
  return table;
}

/** How the socket server treats some methods (see MethodEntry). */
const METHOD_TRAITS: Partial<Record<MethodName, Omit<MethodTraits, 'handle'>>> = {
  'rpc.discover': { staticResult: true },
  // Bounded results: a call's by the server frame it came in, an approval's by the argument cap.
  'tools.call': { tooDeep: 'INVALID_ARGUMENTS', waits: true, boundedResult: true },
  // An approval's answer is serialised after the call it approved was sent (MethodTraits.deferredResult): the view is a fresh object.
  'approvals.respond': { boundedResult: true, deferredResult: true },
  'installs.start': { waits: true },
};

/** The socket server's method table: each method's params check (generated at build time), its handler, its traits. Answers pass the redactor as they are serialised (RpcServerOptions.redactor). */
export function methodTable(table: Handlers): Record<string, MethodEntry> {
  const entries: Record<string, MethodEntry> = {};
  // The generated checks name every method (test/unit/core/generated-validators.test.ts).
  for (const name of Object.keys(checks) as MethodName[]) {
    entries[name] = { paramsCheck: checks[name], handle: table[name] as MethodEntry['handle'], ...METHOD_TRAITS[name] };
  }
  return entries;
}
