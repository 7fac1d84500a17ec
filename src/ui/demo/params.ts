import { WispError } from '../../core/index.js';

/**
 * The demo's own checks of what a page sends (the real daemon checks with its schemas, which
 * the panel does not load): types and sizes, so nothing a page sends is kept unbounded.
 */
export type Params = Readonly<Record<string, unknown>>;

function bad(key: string, what: string): WispError {
  return new WispError('INVALID_PARAMS', `${key} must be ${what}`);
}

export function text(params: Params, key: string, max = 4096): string {
  const value = params[key];
  if (typeof value !== 'string' || value.length === 0 || value.length > max || value.includes('\u0000')) throw bad(key, `a string of 1 to ${max} characters`);
  return value;
}

export function optionalText(params: Params, key: string, max = 4096): string | undefined {
  return params[key] === undefined ? undefined : text(params, key, max);
}

export function texts(params: Params, key: string, maxItems = 256, max = 4096): string[] {
  const value = params[key] ?? [];
  if (!Array.isArray(value) || value.length > maxItems) throw bad(key, `a list of at most ${maxItems} strings`);
  return value.map((item, i) => {
    if (typeof item !== 'string' || item.length > max || item.includes('\u0000')) throw bad(`${key}[${i}]`, `a string of at most ${max} characters`);
    return item;
  });
}

export function integer(params: Params, key: string): number {
  const value = params[key];
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) throw bad(key, 'a positive integer');
  return value;
}

export function oneOf<T extends string>(params: Params, key: string, allowed: readonly T[]): T {
  const value = params[key];
  const found = allowed.find((a) => a === value);
  if (found === undefined) throw bad(key, `one of ${allowed.join(', ')}`);
  return found;
}

/** Name/storage entries of setEnv and setHeaders: the values are checked, then dropped. */
export function secretEntries(params: Params, key: string, namePattern: RegExp): { name: string; storage: 'keychain' | 'session' }[] {
  const value = params[key];
  if (!Array.isArray(value) || value.length > 64) throw bad(key, 'a list of at most 64 entries');
  return value.map((entry: unknown, i) => {
    const item = (typeof entry === 'object' && entry !== null ? entry : {}) as Params;
    const name = text(item, 'name', 128);
    if (!namePattern.test(name)) throw bad(`${key}[${i}].name`, `a name matching ${namePattern.source}`);
    if (typeof item.value !== 'string' || item.value.length > 16 * 1024) throw bad(`${key}[${i}].value`, 'a string');
    return { name, storage: oneOf(item, 'storage', ['keychain', 'session'] as const) };
  });
}
