/**
 * The method table: every method, its params, result and the error codes it may answer
 * with. The server validates params against these schemas and the client is typed from them.
 */
import type { Static } from '@sinclair/typebox';
import type { MethodDef } from './define.js';
import { serviceMethods } from './service-methods.js';
import { sessionMethods } from './session-methods.js';
import { pinMethods } from './pin-methods.js';
import { elicitationMethods } from './elicitation.js';
import { offeringMethods } from './offering-methods.js';
import { profileMethods } from './profile-methods.js';

export type { MethodDef } from './define.js';

export const methods = { ...serviceMethods, ...sessionMethods, ...pinMethods, ...elicitationMethods, ...offeringMethods, ...profileMethods } as const satisfies Record<string, MethodDef>;

export type Methods = typeof methods;
export type MethodName = keyof Methods;
export type Params<M extends MethodName> = Static<Methods[M]['params']>;
export type Result<M extends MethodName> = Static<Methods[M]['result']>;
