/** The helpers the method and event tables are written with. */
import { Type, type TSchema } from '@sinclair/typebox';
import type { WireErrorCode } from '../errors.js';
import { Timestamp } from './shapes.js';

export interface MethodDef {
  readonly summary: string;
  readonly params: TSchema;
  readonly result: TSchema;
  /** Only codes that cross the socket (a local code in a method's list fails to compile). */
  readonly errors: readonly WireErrorCode[];
}

export function method<P extends TSchema, R extends TSchema>(def: {
  summary: string;
  params: P;
  result: R;
  errors?: WireErrorCode[];
}): { summary: string; params: P; result: R; errors: readonly WireErrorCode[] } {
  return { ...def, errors: def.errors ?? [] };
}

export function event<T extends string, P extends Record<string, TSchema>>(type: T, summary: string, payload: P) {
  return Type.Object(
    { seq: Type.Integer({ minimum: 1 }), type: Type.Literal(type), at: Timestamp, ...payload },
    { description: summary },
  );
}
