import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { ALLOWED_METHODS } from '../../../src/ui/api.js';
import { PANEL_EVENT_TYPES } from '../../../src/ui/event-stream.js';
import { browserOpener } from '../../../src/ui/index.js';
import { repoRoot } from '../../helpers/wispd.js';

/** Every file the browser loads: what npm run build put in dist/ui/static (scripts/bundle-ui.js). */
function clientFiles(): { name: string; body: Buffer }[] {
  const dir = path.join(repoRoot, 'dist', 'ui', 'static');
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath, entry.name))
    .map((file) => ({ name: path.relative(dir, file), body: readFileSync(file) }));
}

describe('the web panel\'s browser app', () => {
  it('is at most 100 KB gzipped, all files together', () => {
    const gzipped = clientFiles().reduce((sum, file) => sum + gzipSync(file.body, { level: 9 }).length, 0);
    expect(gzipped).toBeGreaterThan(5_000);
    expect(gzipped).toBeLessThanOrEqual(100 * 1024);
  });

  it('is one module of ours beside Preact, and loads nothing from elsewhere, with no inline script, no inline style and no HTML sink', () => {
    expect(clientFiles().map((f) => f.name).sort()).toEqual(['app.js', 'favicon.svg', 'index.html', 'style.css', path.join('vendor', 'preact-htm.js')]);
    for (const { name, body } of clientFiles().filter((f) => !f.name.startsWith('vendor'))) {
      const text = body.toString('utf8');
      expect(text, name).not.toMatch(/https?:\/\/(?!www\.w3\.org\/2000\/svg)/);
      expect(text, name).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|dangerouslySetInnerHTML|document\.write|eval\(|new Function/);
      if (name.endsWith('.html')) expect(text, name).not.toMatch(/<script(?![^>]*\bsrc=)|<style|\sstyle=|\son[a-z]+=/i);
      if (name.endsWith('.js')) expect([...text.matchAll(/^(?:import|export)\b[^'"\n]*['"]([^'"]+)['"];$/gm)].map((m) => m[1])).toEqual(['./vendor/preact-htm.js']);
    }
  });

  it('escapes what it shows with wispctl\'s own code, src/core/visible-text.ts, and holds no copy of it', () => {
    const modules = JSON.parse(readFileSync(path.join(repoRoot, 'dist', 'ui', 'panel-modules.json'), 'utf8')) as string[];
    expect(modules).toContain('src/core/visible-text.ts');
    expect(modules).toContain('src/ui/static/html.js');
    const dir = path.join(repoRoot, 'src', 'ui', 'static');
    for (const name of readdirSync(dir).filter((f) => f.endsWith('.js'))) {
      // The sanitizer's character classes live in core only.
      expect(readFileSync(path.join(dir, name), 'utf8'), name).not.toMatch(/Default_Ignorable_Code_Point|\\p\{C[cfs]\}|codePointAt/);
    }
  });
});

describe('what the panel lets through', () => {
  it('keeps one list of the event types it follows: the server\'s, which the Events page asks for and describes each of', () => {
    const dir = path.join(repoRoot, 'src', 'ui', 'static');
    const text = readFileSync(path.join(dir, 'event-text.js'), 'utf8');
    // No second list in the browser app: the Events page reads GET /api/panel.
    expect(text).not.toMatch(/EVENT_TYPES/);
    expect(readFileSync(path.join(dir, 'events.js'), 'utf8')).toMatch(/eventTypes/);
    const described = new Set([...text.matchAll(/case '([a-z.]+)':/g)].map((m) => m[1]));
    for (const type of PANEL_EVENT_TYPES) expect(described, type).toContain(type);
  });

  it('forwards exactly the methods the pages name', () => {
    const dir = path.join(repoRoot, 'src', 'ui', 'static');
    // An approval's kind is no method either: the one with a dot (shapes.ts approvalKind).
    const events = new Set<string>([...PANEL_EVENT_TYPES, 'network.connect']);
    // Every 'group.method' string in the app that is not an event type (or that kind) is a method it calls.
    const named = new Set(
      readdirSync(dir)
        .filter((f) => f.endsWith('.js'))
        .flatMap((f) => [...readFileSync(path.join(dir, f), 'utf8').matchAll(/'([a-z]+\.[a-zA-Z]+)'/g)].map((m) => m[1] ?? ''))
        .filter((name) => !events.has(name) && !name.endsWith('.js')),
    );
    expect(named).toEqual(new Set(ALLOWED_METHODS));
  });
});

describe('opening a browser', () => {
  it('uses open on macOS, xdg-open only where a display is named, and nothing otherwise', () => {
    expect(browserOpener('darwin', {})).toBe('open');
    expect(browserOpener('linux', { DISPLAY: ':0' })).toBe('xdg-open');
    expect(browserOpener('linux', { WAYLAND_DISPLAY: 'wayland-0' })).toBe('xdg-open');
    expect(browserOpener('linux', {})).toBeNull();
    expect(browserOpener('linux', { DISPLAY: '' })).toBeNull();
    expect(browserOpener('freebsd', {})).toBeNull();
    expect(browserOpener('win32', { DISPLAY: ':0' })).toBeNull();
  });
});
