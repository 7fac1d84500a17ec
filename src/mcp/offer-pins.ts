import { WispError, type FieldChange, type PinnedDefinition, type PromptInfo, type ResourceTemplateInfo, type TextDiffPart } from '../core/index.js';
import { pinDiff } from './tool-diff.js';
import { pinDigestOf, type Pinnable, type ToolPins } from './tool-pins.js';

/**
 * Pins for what defines a service's prompts and resource templates, as tools are pinned
 * (tool-pins.ts, the same files and rules): at the first list after a service is trusted,
 * each definition is pinned; a later list that brings a changed or new one holds it (it is
 * not offered: not listed, not got) until a human accepts it, seeing the same field-by-field
 * diff a tool's review shows, and which kind it is. One pin set a kind a service (a list of
 * prompts says nothing of the templates), bound to the service's launch.
 */

export type OfferKind = 'prompt' | 'template';
const KINDS: readonly OfferKind[] = ['prompt', 'template'];

/** A prompt or template in a tool definition's shape: what the server can change about it, and its key in the name. */
export interface PinnableOffer extends Pinnable {
  readonly kind: OfferKind;
  /** The prompt's name, or the template's URI template: as the server gave it. */
  readonly key: string;
}

function pinnable(kind: OfferKind, key: string, rest: Omit<PinnedDefinition, 'name' | 'outputSchema' | 'annotations'>): PinnableOffer {
  const definition: PinnedDefinition = { name: `${kind}:${key}`, ...rest, outputSchema: null, annotations: null };
  return { kind, key, name: definition.name, definition, pinDigest: pinDigestOf(definition) };
}

export function promptOffer(prompt: PromptInfo): PinnableOffer {
  return pinnable('prompt', prompt.name, { title: prompt.title, description: prompt.description, inputSchema: { arguments: prompt.arguments } });
}

export function templateOffer(template: ResourceTemplateInfo): PinnableOffer {
  return pinnable('template', template.uriTemplate, { title: template.title, description: template.description, inputSchema: { name: template.name, mimeType: template.mimeType } });
}

/** One held prompt or template, as a review shows it. */
export interface HeldOffer {
  readonly kind: OfferKind;
  readonly name: string;
  readonly pin: 'changed' | 'added';
  readonly digest: string;
  readonly pinnedDigest: string | null;
  readonly changes: FieldChange[];
  readonly descriptionDiff: TextDiffPart[] | null;
  readonly definition: PinnedDefinition;
}

export class OfferPins {
  /** serviceId -> `kind:key` -> the held offer, as of the service's last list of that kind. */
  private readonly held = new Map<string, Map<string, PinnableOffer>>();

  constructor(private readonly pins: ToolPins) {}

  private static key(serviceId: string, kind: OfferKind): string {
    return `${serviceId}#${kind}`;
  }

  /** A list just read, against the pins (pinning all of it when there are none yet): what may be offered, and how many are held. */
  async sort<T>(serviceId: string, launch: string, kind: OfferKind, items: readonly T[], offer: (item: T) => PinnableOffer): Promise<{ offered: T[]; held: number }> {
    const pinsKey = OfferPins.key(serviceId, kind);
    await this.pins.prepare(pinsKey, launch);
    const offers = items.map(offer);
    const { tools: classified, saved } = this.pins.classify(pinsKey, offers);
    const failed = await saved;
    if (failed !== undefined) throw failed;
    const held = this.heldOf(serviceId);
    for (const name of [...held.keys()]) if (name.startsWith(`${kind}:`)) held.delete(name);
    const offered: T[] = [];
    classified.forEach((c, i) => {
      if (c.pin === 'trusted') offered.push(items[i] as T);
      else held.set(c.name, c);
    });
    return { offered, held: classified.length - offered.length };
  }

  /** Whether a prompt (or template) was held at the service's last list of its kind. */
  isHeld(serviceId: string, kind: OfferKind, key: string): boolean {
    return this.held.get(serviceId)?.has(`${kind}:${key}`) === true;
  }

  /** The held prompts and templates of the last lists, each with what changed against its pin. */
  review(serviceId: string): HeldOffer[] {
    return [...this.heldOf(serviceId).values()].map((offer) => ({
      kind: offer.kind,
      name: offer.key,
      ...pinDiff(this.pins.pinned(OfferPins.key(serviceId, offer.kind), offer.name), offer.definition),
      digest: offer.pinDigest,
      definition: offer.definition,
    }));
  }

  /** A human accepted these, each as reviewed (its digest): pinned as they are now. A digest that is not the held one's accepts nothing. */
  async accept(serviceId: string, items: readonly { kind: OfferKind; name: string; digest: string }[]): Promise<{ kind: OfferKind; name: string }[]> {
    const held = this.heldOf(serviceId);
    const chosen = items.map((item) => {
      const offer = held.get(`${item.kind}:${item.name}`);
      if (offer === undefined || offer.pinDigest !== item.digest) {
        throw new WispError('APPROVAL_STALE', `the ${item.kind} ${JSON.stringify(item.name.slice(0, 128))} is not held as reviewed (it changed since, or is not held): review again; nothing was accepted`);
      }
      return offer;
    });
    for (const kind of KINDS) {
      const ofKind = chosen.filter((offer) => offer.kind === kind);
      if (ofKind.length > 0) await this.pins.accept(OfferPins.key(serviceId, kind), ofKind);
    }
    for (const offer of chosen) held.delete(offer.name);
    return chosen.map((offer) => ({ kind: offer.kind, name: offer.key }));
  }

  /** The service is gone: its pins and holds too. */
  async remove(serviceId: string): Promise<void> {
    this.held.delete(serviceId);
    for (const kind of KINDS) await this.pins.remove(OfferPins.key(serviceId, kind));
  }

  private heldOf(serviceId: string): Map<string, PinnableOffer> {
    let held = this.held.get(serviceId);
    if (held === undefined) {
      held = new Map();
      this.held.set(serviceId, held);
    }
    return held;
  }
}
