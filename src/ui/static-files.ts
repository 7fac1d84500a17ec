import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The browser app, next to this module once built (scripts/bundle-ui.js puts it there). */
export const DEFAULT_STATIC_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'static');

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

export interface StaticFile {
  readonly type: string;
  readonly body: Buffer;
}

/**
 * Every file of the app, read once at start and served from memory by its exact URL path:
 * no path from a request ever reaches the file system.
 */
export function loadStaticFiles(dir: string = DEFAULT_STATIC_DIR): ReadonlyMap<string, StaticFile> {
  const files = new Map<string, StaticFile>();
  const walk = (sub: string): void => {
    for (const entry of readdirSync(path.join(dir, sub), { withFileTypes: true })) {
      const rel = path.posix.join(sub, entry.name);
      if (entry.isDirectory()) walk(rel);
      else {
        const type = TYPES[path.extname(entry.name)];
        if (type !== undefined) files.set(`/${rel}`, { type, body: readFileSync(path.join(dir, rel)) });
      }
    }
  };
  walk('');
  const index = files.get('/index.html');
  if (index === undefined) throw new Error(`the panel's files are missing from ${dir} (run npm run build)`);
  files.set('/', index);
  return files;
}
