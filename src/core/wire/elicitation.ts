/** Elicitation: a server asks the user for input (MCP elicitation/create, form or URL mode). Shape, methods and events. */
import { Type, type Static } from '@sinclair/typebox';
import { method, event, type MethodDef } from './define.js';
import { Requester, Timestamp } from './shapes.js';

// pending -> accepted | declined (a human answered) | cancelled (a human, or its calls ended, or nobody could answer).
// An enum, not a union of literals: the same check, a quarter of the lines in docs/protocol.md.
const ElicitationStatus = Type.Unsafe<'pending' | 'accepted' | 'declined' | 'cancelled'>({ type: 'string', enum: ['pending', 'accepted', 'declined', 'cancelled'] });

export const Elicitation = Type.Object(
  {
    id: Type.String(),
    service: Type.Object({ id: Type.String(), name: Type.String() }),
    mode: Type.Union([Type.Literal('form'), Type.Literal('url')]),
    message: Type.String({ description: 'The server\'s text: untrusted.' }),
    requestedSchema: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()]),
    url: Type.Union([Type.String(), Type.Null()], { description: 'url: the URL to open (never by the daemon).' }),
    host: Type.Union([Type.String(), Type.Null()], { description: 'url: its host.' }),
    owners: Type.Array(Requester),
    status: ElicitationStatus,
    by: Type.Union([Type.String(), Type.Null()], { description: 'Who answered.' }),
    reason: Type.Union([Type.String(), Type.Null()], { description: 'Why cancelled unanswered.' }),
    createdAt: Timestamp,
  },
  { description: 'A server\'s request for input from the user. No model ever sees or answers it.' },
);
export type Elicitation = Static<typeof Elicitation>;

export const elicitationMethods = {
  'elicitations.list': method({
    summary: 'The pending elicitations (servers asking the user for input), oldest first.',
    params: Type.Object({}, { additionalProperties: false }),
    result: Type.Object({ elicitations: Type.Array(Elicitation) }),
  }),
  'elicitations.respond': method({
    summary:
      'Answer a pending elicitation: accept (form mode: with content, checked against the requested schema after its defaults are filled in; url mode: the user opened the URL), decline or cancel. The first answer wins.',
    params: Type.Object(
      {
        id: Type.String({ minLength: 1, maxLength: 128 }),
        action: Type.Unsafe<'accept' | 'decline' | 'cancel'>({ type: 'string', enum: ['accept', 'decline', 'cancel'] }),
        content: Type.Optional(
          Type.Object({}, { additionalProperties: true, description: 'form + accept: the flat values.' }),
        ),
      },
      { additionalProperties: false },
    ),
    result: Type.Object({ elicitation: Elicitation }),
    errors: ['ELICITATION_NOT_FOUND', 'ELICITATION_NOT_PENDING', 'ELICITATION_INVALID'],
  }),
} as const satisfies Record<string, MethodDef>;

export const elicitationEvents = {
  'elicitation.requested': event('elicitation.requested', 'A server asks the user for input (form or URL): any human-facing client may answer with elicitations.respond.', {
    elicitation: Elicitation,
  }),
  'elicitation.resolved': event('elicitation.resolved', 'An elicitation was accepted, declined or cancelled (status, by, reason). Never with the content: that goes only to the server.', {
    elicitation: Elicitation,
  }),
} as const;
