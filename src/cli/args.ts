import path from 'node:path';
import { WispError } from '../core/index.js';

/** Parsing what the command line gives: service references, JSON, numbers. */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A service given by id (a UUID) or by name. */
export function ref(nameOrId: string): { id: string } | { name: string } {
  return UUID.test(nameOrId) ? { id: nameOrId } : { name: nameOrId };
}

/** A directory given on the command line, made absolute against the current directory (as `mcp sources add-project DIR` does); '' stays '' for the daemon to refuse. */
export function absoluteDir(given: string): string {
  return given === '' ? given : path.resolve(given);
}

export function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new WispError('INVALID_PARAMS', `${what} is not valid JSON: ${(error as Error).message}`);
  }
}

export function parseArgsJson(text: string, trailing: readonly string[]): string[] {
  if (trailing.length > 0) throw new WispError('INVALID_PARAMS', 'give arguments either after -- or with --args-json, not both');
  const parsed = parseJson(text, '--args-json');
  if (!Array.isArray(parsed) || !parsed.every((a): a is string => typeof a === 'string')) {
    throw new WispError('INVALID_PARAMS', '--args-json must be a JSON array of strings');
  }
  return parsed;
}

export function parseNonNegative(value: string, flag: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new WispError('INVALID_PARAMS', `${flag} must be a non-negative integer`);
  return n;
}

/** `name@1.2.3` or `@scope/name@1.2.3` -> package and version (the daemon checks the version is exact). */
export function parsePackageSpec(spec: string): { package: string; version: string } {
  const at = spec.lastIndexOf('@');
  // `@latest` or `@1.2.3` alone: a version (or tag) with no package in front of it.
  if (at === 0 && !spec.includes('/')) throw new WispError('INVALID_PLAN', `${JSON.stringify(spec)} names no package: give package@exact-version, like hello-mcp@1.2.3`, { field: 'package' });
  if (at <= 0) throw new WispError('INVALID_PLAN', `give the package with an exact version, like ${spec}@1.2.3`, { field: 'version' });
  return { package: spec.slice(0, at), version: spec.slice(at + 1) };
}
