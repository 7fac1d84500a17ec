import { LIMITS, WispError } from '../core/index.js';
import type { McpEvent } from './events.js';

type ServiceRef = { readonly id: string; readonly name: string };

/** Sends resources/subscribe or resources/unsubscribe for `uri` to the service's active connection. */
export type SubscriptionSender = (service: ServiceRef, method: 'resources/subscribe' | 'resources/unsubscribe', uri: string) => Promise<unknown>;

interface Subscription {
  readonly service: ServiceRef;
  readonly uri: string;
  /** The clients (socket connection ids) subscribed. */
  readonly clients: Set<number>;
}

/**
 * Resource subscriptions across clients, counted: the server is sent resources/subscribe
 * when the first client subscribes to a resource and resources/unsubscribe when the last one
 * leaves (resources.unsubscribe, or its connection closed). What is sent for one resource is
 * sent in order (a subscribe never overtakes the unsubscribe before it). A service that
 * stops keeps its subscriptions: when it is active again its server is subscribed again.
 * At most LIMITS.maxSubscriptionsPerClient a client and maxSubscriptionsPerService a service.
 */
export class ResourceSubscriptions {
  /** By service id, then URI. */
  private readonly byService = new Map<string, Map<string, Subscription>>();
  private readonly byClient = new Map<number, Set<Subscription>>();
  /** The last message sent (or being sent) for each resource: the next one waits for it. */
  private readonly tails = new Map<string, Promise<unknown>>();

  constructor(private readonly send: SubscriptionSender) {}

  /** Whether some client is subscribed to `uri` of the service (a server's update of anything else is not relayed). */
  has(serviceId: string, uri: string): boolean {
    return this.byService.get(serviceId)?.has(uri) === true;
  }

  /** Subscribes `client`; resolves with the subscriber count once the server took it (or already had). Rejects with the server's refusal: nobody is subscribed then. */
  async subscribe(client: number, service: ServiceRef, uri: string): Promise<number> {
    const mine = this.byClient.get(client) ?? new Set<Subscription>();
    const uris = this.byService.get(service.id) ?? new Map<string, Subscription>();
    const known = uris.get(uri);
    if (known?.clients.has(client) === true) return known.clients.size;
    if (mine.size >= LIMITS.maxSubscriptionsPerClient) {
      throw new WispError('LIMIT_EXCEEDED', `this client holds ${LIMITS.maxSubscriptionsPerClient} resource subscriptions already (at most ${LIMITS.maxSubscriptionsPerClient})`, { limit: 'maxSubscriptionsPerClient', max: LIMITS.maxSubscriptionsPerClient });
    }
    if (known === undefined && uris.size >= LIMITS.maxSubscriptionsPerService) {
      throw new WispError('LIMIT_EXCEEDED', `${service.name} has ${LIMITS.maxSubscriptionsPerService} subscribed resources already (at most ${LIMITS.maxSubscriptionsPerService})`, { limit: 'maxSubscriptionsPerService', max: LIMITS.maxSubscriptionsPerService });
    }
    const subscription = known ?? { service, uri, clients: new Set<number>() };
    subscription.clients.add(client);
    this.byClient.set(client, mine.add(subscription));
    this.byService.set(service.id, uris.set(uri, subscription));
    const key = `${service.id}\n${uri}`;
    try {
      // The first subscriber sends it; a later one waits for it, and hears its refusal too.
      await (known === undefined ? this.chain(key, () => this.send(service, 'resources/subscribe', uri)) : (this.tails.get(key) ?? Promise.resolve()));
    } catch (error) {
      this.forget(subscription);
      throw error;
    }
    return subscription.clients.size;
  }

  /** Ends `client`'s subscription; the server is sent resources/unsubscribe when it was the last. Resolves with the subscribers left. */
  async unsubscribe(client: number, serviceId: string, uri: string): Promise<number> {
    const subscription = this.byService.get(serviceId)?.get(uri);
    if (subscription === undefined || !subscription.clients.has(client)) return subscription?.clients.size ?? 0;
    await this.leave(client, subscription);
    return subscription.clients.size;
  }

  /** A client went away: each of its subscriptions ends. */
  releaseClient(client: number): void {
    for (const subscription of [...(this.byClient.get(client) ?? [])]) void this.leave(client, subscription).catch(() => undefined);
    this.byClient.delete(client);
  }

  /** A service active again is subscribed again (its new server knows nothing of the old one's subscriptions); a deleted one's are forgotten. */
  observe(event: McpEvent): void {
    if (event.kind === 'connection.changed' && event.state.status === 'active') {
      for (const subscription of this.byService.get(event.service.id)?.values() ?? []) {
        const key = `${event.service.id}\n${subscription.uri}`;
        void this.chain(key, () => this.send(event.service, 'resources/subscribe', subscription.uri)).catch(() => undefined);
      }
    } else if (event.kind === 'service.deleted') {
      for (const subscription of [...(this.byService.get(event.service.id)?.values() ?? [])]) this.forget(subscription);
    }
  }

  /** How many resources are subscribed, for status and tests. */
  get size(): number {
    let n = 0;
    for (const uris of this.byService.values()) n += uris.size;
    return n;
  }

  private async leave(client: number, subscription: Subscription): Promise<void> {
    subscription.clients.delete(client);
    this.byClient.get(client)?.delete(subscription);
    if (this.byClient.get(client)?.size === 0) this.byClient.delete(client);
    if (subscription.clients.size > 0) return;
    this.forget(subscription);
    // The server may be gone (stopped, failed): then there is nothing to unsubscribe from.
    await this.chain(`${subscription.service.id}\n${subscription.uri}`, () => this.send(subscription.service, 'resources/unsubscribe', subscription.uri)).catch(() => undefined);
  }

  private forget(subscription: Subscription): void {
    const uris = this.byService.get(subscription.service.id);
    if (uris?.get(subscription.uri) === subscription) uris.delete(subscription.uri);
    if (uris?.size === 0) this.byService.delete(subscription.service.id);
    for (const client of subscription.clients) this.byClient.get(client)?.delete(subscription);
  }

  /** Runs `send` after whatever was sent last for `key`. */
  private chain(key: string, send: () => Promise<unknown>): Promise<unknown> {
    const next = (this.tails.get(key) ?? Promise.resolve()).catch(() => undefined).then(send);
    this.tails.set(key, next);
    void next.finally(() => {
      if (this.tails.get(key) === next) this.tails.delete(key);
    }).catch(() => undefined);
    return next;
  }
}
