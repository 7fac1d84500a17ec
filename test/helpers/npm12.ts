import { npm12Bin } from '../../scripts/npm12-runtime.mjs';

/**
 * A bin directory holding node 22 and npm 12 from the npm registry, for the suites that need
 * them (the install tests, the conformance suite's CLI). Fetched once per machine into
 * .cache/ (kept across runs and by .ci/run), and once per test file at most: call it in
 * beforeAll with room for a first download (NPM12_SETUP_MS).
 */
let bin: Promise<string> | undefined;
export function ensureNpm12(): Promise<string> {
  bin ??= npm12Bin();
  return bin;
}

/** A beforeAll that may download node and npm on a cold cache. */
export const NPM12_SETUP_MS = 300_000;
