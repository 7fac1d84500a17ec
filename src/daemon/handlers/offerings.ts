import { WispError, type Result } from '../../core/index.js';
import { Failure, completionValues, launchDigest, promptMessages, promptOffer, readContents, readList, templateOffer, type ListKind } from '../../mcp/index.js';
import { canonicalJson, isoTime, sha256Hex } from '../../util/index.js';
import { clientId } from '../views.js';
import type { DaemonParts, Handlers } from './types.js';

type Names = 'resources.list' | 'resources.templates' | 'resources.read' | 'resources.subscribe' | 'resources.unsubscribe' | 'prompts.list' | 'prompts.get' | 'completion.complete';

/** A URI in the audit log is cut here (the record says what was read, not what it held). */
const AUDIT_URI_CHARS = 512;

/**
 * What active services offer besides tools, asked of their servers (offerings.ts): no approval
 * (a read names what it reads, and changes nothing Wisp knows of), but every read and every
 * prompt got is on record in the audit log, with its outcome.
 */
type Parts = Pick<DaemonParts, 'supervisor' | 'registry' | 'redactor' | 'audit' | 'now' | 'offerPins' | 'subscriptions'>;

/** What both groups of handlers read with: an active service, its whole lists, its prompts and templates against their pins. */
function readers({ supervisor, registry, redactor, audit, now, offerPins }: Parts) {
  const redact = <T>(value: T): T => redactor.redactValue(value);
  const active = (serviceId: string) => {
    const config = registry.get({ id: serviceId });
    return { service: { id: config.id, name: config.name }, connection: supervisor.activeConnection(config.id, config.name), media: config.media === true, launch: launchDigest(config) };
  };
  /** One whole list of an active service; none asked of a server that did not declare resources (or prompts). */
  const list = async <K extends ListKind>(serviceId: string, kind: K, signal: AbortSignal) => {
    const { service, connection } = active(serviceId);
    const declared = kind === 'prompts/list' ? connection.offers.prompts : connection.offers.resources;
    const { items, omitted } = declared ? await wire(readList(kind, (p) => connection.offer(kind, p, signal), redact)) : { items: [], omitted: 0 };
    return { service, items, omitted };
  };
  // What is held (changed or new since pinned) is not offered until a human accepts it.
  const prompts = async (serviceId: string, signal: AbortSignal) => {
    const { service, items, omitted } = await list(serviceId, 'prompts/list', signal);
    const sorted = await offerPins.sort(service.id, active(service.id).launch, 'prompt', items, promptOffer);
    return { service, prompts: sorted.offered, omitted, held: sorted.held };
  };
  const templates = async (serviceId: string, signal: AbortSignal) => {
    const { service, items, omitted } = await list(serviceId, 'resources/templates/list', signal);
    const sorted = await offerPins.sort(service.id, active(service.id).launch, 'template', items, templateOffer);
    return { service, templates: sorted.offered, omitted, held: sorted.held };
  };
  const record = (entry: Record<string, unknown>): Promise<boolean> => audit.append({ at: isoTime(now()), ...entry });
  return { redact, active, list, prompts, templates, record, offerPins };
}

/** The review of held prompts and templates (offer-pins.ts): both lists read again, so it is of what the server defines now. */
export function offerPinHandlers(parts: Parts): Pick<Handlers, 'offers.review' | 'offers.accept'> {
  const { active, prompts, templates, offerPins } = readers(parts);
  return {
    'offers.review': async (params, ctx) => {
      const { service } = active(params.serviceId);
      await templates(service.id, ctx.signal);
      await prompts(service.id, ctx.signal);
      return { service, held: offerPins.review(service.id) };
    },
    'offers.accept': async (params) => {
      const { service } = active(params.serviceId);
      return { service, accepted: await offerPins.accept(service.id, params.items) };
    },
  };
}

/**
 * What active services offer besides tools, asked of their servers (offerings.ts): no approval
 * (a read names what it reads, and changes nothing Wisp knows of), but every read and every
 * prompt got is on record in the audit log, with its outcome.
 */
export function offeringHandlers(parts: Parts): Pick<Handlers, Names> {
  const { redact, active, list, prompts, templates, record, offerPins } = readers(parts);
  return {
    ...subscriptionHandlers(parts),
    'resources.list': async (params, ctx) => {
      const { service, items, omitted } = await list(params.serviceId, 'resources/list', ctx.signal);
      return { service, resources: items, omitted };
    },
    'resources.templates': (params, ctx) => templates(params.serviceId, ctx.signal),
    'prompts.list': (params, ctx) => prompts(params.serviceId, ctx.signal),
    'completion.complete': async (params, ctx): Promise<Result<'completion.complete'>> => {
      const { service, connection } = active(params.serviceId);
      if (!connection.offers.completions) return { service, values: [], total: null, hasMore: false };
      const asked = { ref: params.ref, argument: params.argument, ...(params.context !== undefined ? { context: params.context } : {}) };
      return { service, ...completionValues(await wire(connection.offer('completion/complete', asked, ctx.signal)), redact) };
    },
    'resources.read': async (params, ctx): Promise<Result<'resources.read'>> => {
      const { service, connection, media } = active(params.serviceId);
      if (!connection.offers.resources) throw new WispError('NOT_OFFERED', `${service.name} offers no resources (it declared none when it was activated); nothing was sent`);
      const entry = { record: 'resource.read', serviceId: service.id, service: service.name, uri: redact(params.uri).slice(0, AUDIT_URI_CHARS), client: clientId(ctx.connection) };
      try {
        // Media whole only to a caller that asked (the gateway), of a service whose media setting is on.
        const read = readContents(await wire(connection.offer('resources/read', { uri: params.uri }, ctx.signal)), redact, media && params.media === true);
        await record({ ...entry, outcome: 'ok', truncated: read.truncated });
        return { service, ...read };
      } catch (error) {
        const failure = asWisp(error);
        await record({ ...entry, outcome: failure.code });
        throw failure;
      }
    },
    'prompts.get': async (params, ctx): Promise<Result<'prompts.get'>> => {
      const { service, connection, media } = active(params.serviceId);
      if (!connection.offers.prompts) throw new WispError('NOT_OFFERED', `${service.name} offers no prompts (it declared none when it was activated); nothing was sent`);
      if (offerPins.isHeld(service.id, 'prompt', params.name)) {
        throw new WispError('OFFER_HELD', `${service.name}'s prompt ${JSON.stringify(params.name.slice(0, 128))} changed since it was pinned and is held until you accept it (wispctl mcp review ${service.name}); nothing was sent`);
      }
      const args = params.arguments ?? {};
      const entry = { record: 'prompt.get', serviceId: service.id, service: service.name, prompt: redact(params.name), argumentsDigest: sha256Hex(canonicalJson(args)), client: clientId(ctx.connection) };
      try {
        const got = promptMessages(await wire(connection.offer('prompts/get', { name: params.name, arguments: args }, ctx.signal)), redact, media && params.media === true);
        await record({ ...entry, outcome: 'ok', truncated: got.truncated });
        return { service, ...got };
      } catch (error) {
        const failure = asWisp(error);
        await record({ ...entry, outcome: failure.code });
        throw failure;
      }
    },
  };
}

/**
 * Resource subscriptions (resource-subscriptions.ts): only of a service that declared
 * resources.subscribe; a client's end when it disconnects.
 */
function subscriptionHandlers({ supervisor, registry, subscriptions }: Pick<DaemonParts, 'supervisor' | 'registry' | 'subscriptions'>): Pick<Handlers, 'resources.subscribe' | 'resources.unsubscribe'> {
  /** The connections whose close ends their subscriptions (hooked once each). */
  const hooked = new WeakSet<object>();
  return {
    'resources.subscribe': async (params, ctx): Promise<Result<'resources.subscribe'>> => {
      const config = registry.get({ id: params.serviceId });
      const service = { id: config.id, name: config.name };
      const connection = supervisor.activeConnection(config.id, config.name);
      if (!connection.offers.subscribe) {
        throw new WispError('NOT_OFFERED', `${service.name} offers no resource subscriptions (it declared no resources.subscribe when it was activated); nothing was sent`);
      }
      if (!hooked.has(ctx.connection)) {
        hooked.add(ctx.connection);
        const id = ctx.connection.id;
        ctx.connection.whenClosed(() => subscriptions.releaseClient(id));
      }
      return { subscribers: await wire(subscriptions.subscribe(ctx.connection.id, service, params.uri)) };
    },
    'resources.unsubscribe': async (params, ctx): Promise<Result<'resources.unsubscribe'>> => {
      const config = registry.get({ id: params.serviceId });
      return { subscribers: await subscriptions.unsubscribe(ctx.connection.id, config.id, params.uri) };
    },
  };
}

/** A connection's Failure as the WispError a client is answered with (the server's own code and message in data.server). */
function asWisp(error: unknown): WispError {
  if (error instanceof WispError) return error;
  if (error instanceof Failure) return new WispError(error.code, error.message, error.remote !== null ? { server: { ...error.remote } } : {});
  return new WispError('INTERNAL_ERROR', String(error));
}

/** The promise, its Failure turned into the WispError clients are answered with. */
async function wire<T>(promise: Promise<T>): Promise<T> {
  try {
    return await promise;
  } catch (error) {
    throw asWisp(error);
  }
}
