/**
 * A module-load recorder, preloaded into a child process (node --import): every URL the ESM
 * loader resolves, plus, at exit, every file in the CommonJS cache (Node 20's hooks do not
 * see require()), appended to the file WISP_LOAD_RECORD names.
 */

/** The recorder: the preload registers itself as the hooks module (run on the loader thread). */
export const RECORDER = `
import { appendFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';
import { pathToFileURL } from 'node:url';
import { isMainThread } from 'node:worker_threads';

let record = '';
export function initialize(data) {
  record = data.record;
}
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  appendFileSync(record, resolved.url + '\\n');
  return resolved;
}
if (isMainThread && record === '') {
  const file = process.env.WISP_LOAD_RECORD;
  register(import.meta.url, { data: { record: file } });
  const cache = createRequire(import.meta.url).cache;
  process.once('exit', () => appendFileSync(file, Object.keys(cache).map((p) => pathToFileURL(p).href + '\\n').join('')));
}
`;
