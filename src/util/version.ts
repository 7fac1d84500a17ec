import { readFileSync } from 'node:fs';

/** The package version, read from package.json next to dist/ (or src/ under tests). */
export function packageVersion(): string {
  const parsed: unknown = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
  const version = (parsed as { version?: unknown }).version;
  return typeof version === 'string' ? version : '0.0.0';
}
