/**
 * What a service offers besides tools (resources, resource templates, prompts), read from
 * its server when asked: the MCP gateway serves them to its clients. Only active services;
 * every string is redacted before it is cut; binaries become markers as in tool results.
 */
import { Type, type Static } from '@sinclair/typebox';
import { LIMITS } from '../limits.js';
import { method } from './define.js';
import { MediaWanted, ResultContent } from './shapes.js';
import { FieldChange, PinnedDefinition, TextDiffPart } from './pin-methods.js';

const ServiceId = Type.String({ minLength: 1, maxLength: 128, description: 'The service\'s id (services.list).' });
const Text = Type.Union([Type.String(), Type.Null()]);
const OfferService = Type.Object({ id: Type.String(), name: Type.String() });

export const ResourceInfo = Type.Object({
  uri: Type.String({ description: 'As the server gave it (untrusted; never opened by Wisp).' }),
  name: Type.String(),
  title: Text,
  description: Text,
  mimeType: Text,
  size: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
});
export type ResourceInfo = Static<typeof ResourceInfo>;

export const ResourceTemplateInfo = Type.Object({
  uriTemplate: Type.String({ description: 'An RFC 6570 URI template, as the server gave it.' }),
  name: Type.String(),
  title: Text,
  description: Text,
  mimeType: Text,
});
export type ResourceTemplateInfo = Static<typeof ResourceTemplateInfo>;

export const PromptArgumentInfo = Type.Object({ name: Type.String(), description: Text, required: Type.Boolean() });

export const PromptInfo = Type.Object({
  name: Type.String(),
  title: Text,
  description: Text,
  arguments: Type.Array(PromptArgumentInfo),
});
export type PromptInfo = Static<typeof PromptInfo>;

export const PromptMessage = Type.Object({ role: Type.Union([Type.Literal('user'), Type.Literal('assistant')]), content: ResultContent });
export type PromptMessage = Static<typeof PromptMessage>;

const Omitted = Type.Integer({ minimum: 0, description: 'Items the server gave past the cap, or that were unusable (an over-long URI or name): left out.' });

export const ResourceSubscription = Type.Object(
  { serviceId: ServiceId, uri: Type.String({ minLength: 1, maxLength: 2048 }) },
  { additionalProperties: false, description: "A resource of a service, by its server's URI." },
);
export const Subscribers = Type.Object({ subscribers: Type.Integer({ minimum: 0 }) }, { description: 'How many clients are subscribed to the resource now.' });

const ServiceParams = Type.Object({ serviceId: ServiceId }, { additionalProperties: false });
const Held = Type.Integer({ minimum: 0, description: 'Items held for review, not listed: their definition changed, or they appeared, since they were pinned (offers.review, offers.accept).' });
const OfferKind = Type.Union([Type.Literal('prompt'), Type.Literal('template')]);

export const HeldOffer = Type.Object({
  kind: OfferKind,
  name: Type.String({ description: 'The prompt\'s name, or the template\'s URI template: the server\'s own, untrusted text.' }),
  pin: Type.Union([Type.Literal('changed'), Type.Literal('added')]),
  digest: Type.String({ description: 'sha256 of its canonical definition now: give it back to offers.accept.' }),
  pinnedDigest: Type.Union([Type.String(), Type.Null()]),
  changes: Type.Array(FieldChange, { description: 'changed: every leaf that differs, as a tool review shows them.' }),
  descriptionDiff: Type.Union([Type.Array(TextDiffPart), Type.Null()]),
  definition: PinnedDefinition,
});
const LIST_ERRORS = ['SERVICE_NOT_FOUND', 'SERVICE_NOT_ACTIVE', 'SERVER_REFUSED', 'PROTOCOL_ERROR', 'TIMEOUT', 'SERVER_EXITED', 'CONNECTION_CLOSED', 'NEEDS_AUTH', 'CANCELLED'] as const;

export const offeringMethods = {
  'resources.list': method({
    summary: `The resources an active service lists (every page, at most ${LIMITS.maxResourcesPerService}); empty when it declared no resources.`,
    params: ServiceParams,
    result: Type.Object({ service: OfferService, resources: Type.Array(ResourceInfo), omitted: Omitted }),
    errors: [...LIST_ERRORS],
  }),
  'resources.templates': method({
    summary: `The resource templates an active service lists (every page, at most ${LIMITS.maxResourceTemplatesPerService}); empty when it declared no resources.`,
    params: ServiceParams,
    result: Type.Object({ service: OfferService, templates: Type.Array(ResourceTemplateInfo), omitted: Omitted, held: Held }),
    errors: [...LIST_ERRORS],
  }),
  'resources.read': method({
    summary:
      'Reads one resource of an active service (resources/read), on record in the audit log. Text is redacted and capped at ' +
      `${LIMITS.maxResultChars.toLocaleString('en')} characters as tool results are; binary contents become a marker with type and size.`,
    params: Type.Object({ serviceId: ServiceId, uri: Type.String({ minLength: 1, maxLength: 8192 }), media: Type.Optional(MediaWanted) }, { additionalProperties: false }),
    result: Type.Object({
      service: OfferService,
      contents: Type.Array(ResultContent, { description: 'Each content as a resource (text) or an omitted marker (blob), with its own URI.' }),
      truncated: Type.Boolean(),
      originalLength: Type.Integer({ description: 'Characters of text before the cap.' }),
    }),
    errors: ['NOT_OFFERED', ...LIST_ERRORS],
  }),
  'resources.subscribe': method({
    summary:
      'Subscribes this client to changes of one resource of an active service (resources/subscribe, sent to the server when this is the first subscriber): ' +
      'each change comes as a service.offerings event (changed: resource). Held until resources.unsubscribe, the client disconnects or the service stops; ' +
      `at most ${LIMITS.maxSubscriptionsPerClient} a client and ${LIMITS.maxSubscriptionsPerService} a service. Subscribing again to the same resource changes nothing.`,
    params: ResourceSubscription,
    result: Subscribers,
    errors: ['NOT_OFFERED', 'LIMIT_EXCEEDED', ...LIST_ERRORS],
  }),
  'resources.unsubscribe': method({
    summary: 'Ends this client\'s subscription to a resource (resources/unsubscribe is sent to the server when the last subscriber leaves). Ending one that is not held changes nothing.',
    params: ResourceSubscription,
    result: Subscribers,
    errors: [...LIST_ERRORS],
  }),
  'prompts.list': method({
    summary: `The prompts an active service lists (every page, at most ${LIMITS.maxPromptsPerService}); empty when it declared no prompts.`,
    params: ServiceParams,
    result: Type.Object({ service: OfferService, prompts: Type.Array(PromptInfo), omitted: Omitted, held: Held }),
    errors: [...LIST_ERRORS],
  }),
  'prompts.get': method({
    summary: 'One prompt of an active service with its arguments filled (prompts/get), on record in the audit log. Messages are redacted and capped as tool results are.',
    params: Type.Object(
      {
        serviceId: ServiceId,
        name: Type.String({ minLength: 1, maxLength: 256 }),
        arguments: Type.Optional(Type.Record(Type.String({ maxLength: 256 }), Type.String({ maxLength: 8192 }), { maxProperties: 64 })),
        media: Type.Optional(MediaWanted),
      },
      { additionalProperties: false },
    ),
    result: Type.Object({ service: OfferService, description: Text, messages: Type.Array(PromptMessage), truncated: Type.Boolean() }),
    errors: ['NOT_OFFERED', 'OFFER_HELD', 'INVALID_ARGUMENTS', ...LIST_ERRORS],
  }),
  'offers.review': method({
    summary:
      'The held prompts and resource templates of an active service (changed or added since they were pinned), read again now, each with its kind and what changed, as tools.review shows a tool. Accept with offers.accept.',
    params: ServiceParams,
    result: Type.Object({ service: OfferService, held: Type.Array(HeldOffer) }),
    errors: [...LIST_ERRORS],
  }),
  'offers.accept': method({
    summary: 'Accept held prompts and templates, each named with its kind and the digest offers.review showed: pinned as they are, offered from now. One not held as reviewed makes it APPROVAL_STALE and accepts nothing.',
    params: Type.Object(
      {
        serviceId: ServiceId,
        items: Type.Array(
          Type.Object({ kind: OfferKind, name: Type.String({ minLength: 1, maxLength: 2048 }), digest: Type.String({ pattern: '^[0-9a-f]{64}$' }) }, { additionalProperties: false }),
          { minItems: 1, maxItems: 256 },
        ),
      },
      { additionalProperties: false },
    ),
    result: Type.Object({ service: OfferService, accepted: Type.Array(Type.Object({ kind: OfferKind, name: Type.String() })) }),
    errors: ['APPROVAL_STALE', 'STORAGE_FAILED', ...LIST_ERRORS],
  }),
  'completion.complete': method({
    summary:
      'Completions a service offers for an argument of one of its prompts or resource templates (completion/complete): at most 100 values, each redacted and cut to 1,024 characters. ' +
      'Empty when the service declared no completions.',
    params: Type.Object(
      {
        serviceId: ServiceId,
        ref: Type.Union([
          Type.Object({ type: Type.Literal('ref/prompt'), name: Type.String({ minLength: 1, maxLength: 256 }) }, { additionalProperties: false }),
          Type.Object({ type: Type.Literal('ref/resource'), uri: Type.String({ minLength: 1, maxLength: 2048 }) }, { additionalProperties: false }),
        ]),
        argument: Type.Object({ name: Type.String({ minLength: 1, maxLength: 256 }), value: Type.String({ maxLength: 8192 }) }, { additionalProperties: false }),
        context: Type.Optional(
          Type.Object({ arguments: Type.Optional(Type.Record(Type.String({ maxLength: 256 }), Type.String({ maxLength: 8192 }), { maxProperties: 64 })) }, { additionalProperties: false }),
        ),
      },
      { additionalProperties: false },
    ),
    result: Type.Object({ service: OfferService, values: Type.Array(Type.String()), total: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]), hasMore: Type.Boolean() }),
    errors: [...LIST_ERRORS],
  }),
};
