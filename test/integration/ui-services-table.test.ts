import { copyFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import { findChromium } from '../helpers/browser.js';
import { activate, registerScenario, scenarioServer } from '../helpers/services.js';
import { openPanelSession, shotsDir, type PanelSession } from '../helpers/ui.js';
import { repoRoot } from '../helpers/wispd.js';

/**
 * Issue 37: the services table with real data at 1280 px. Sixteen services as a user has
 * them (imported from Claude Desktop's file under its long path, added by hand, remote ones,
 * some active, one failing with its reason): no header or short cell broken inside a word,
 * ages in SINCE, origins short with the whole text on hover, nothing wider than the window.
 * The screenshot is saved (test-results/ui/services-16.png; WISP_DOCS_SHOTS=1 also puts it
 * in docs/ui-services-16.png).
 */
const chromiumPath = findChromium();
const CLAUDE_FILE = '/home/alex/Library/Application Support/Claude/claude_desktop_config.json';
const IMPORTED = ['filesystem', 'github', 'brave-search', 'slack', 'memory', 'sequential-thinking', 'everything', 'google-maps'];

/** In the page: the lines (tops) the text nodes under an element are on (a button's own box is not a line). */
const LINES = `(cell) => {
  const tops = new Set();
  const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) {
    const range = document.createRange();
    range.selectNodeContents(node);
    for (const rect of range.getClientRects()) tops.add(Math.round(rect.top));
  }
  return tops.size;
}`;
/** Every word of the table (but the reason's, which may break anywhere) whose own text spans two lines. */
const BROKEN_WORDS = `(() => {
  const out = [];
  for (const cell of document.querySelectorAll('table.services th, table.services td:not([data-cell="reason"])')) {
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) {
      for (const match of (node.textContent ?? '').matchAll(/\\S+/g)) {
        const range = document.createRange();
        range.setStart(node, match.index);
        range.setEnd(node, match.index + match[0].length);
        if (new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size > 1) out.push(match[0]);
      }
    }
  }
  return out;
})()`;
/** The headers, names and short cells on more than one line. */
const ON_MORE_LINES = `[...document.querySelectorAll('table.services thead th, table.services tbody th, table.services td[data-cell="state"], table.services td[data-cell="since"], table.services td[data-cell="transport"]')]
  .filter((cell) => (${LINES})(cell) > 1).map((cell) => cell.textContent)`;

async function realistic(client: WispClient): Promise<void> {
  const mcpServers = Object.fromEntries(IMPORTED.map((name) => [name, { command: process.execPath, args: [scenarioServer, '--tools', '3'] }]));
  await client.call('services.import', { content: JSON.stringify({ mcpServers }), file: CLAUDE_FILE, storage: 'session' });
  for (const name of ['notes', 'calendar', 'sqlite', 'time']) await registerScenario(client, name);
  await client.call('services.register', { name: 'postgres', command: process.execPath, args: ['-e', "console.error('could not connect to server: Connection refused (localhost:5432)'); process.exit(1)"] });
  await client.call('services.registerRemote', { name: 'linear', url: 'https://mcp.linear.app/sse', transport: 'sse' });
  await client.call('services.registerRemote', { name: 'sentry', url: 'https://mcp.sentry.dev/mcp' });
  await client.call('services.registerRemote', { name: 'github-copilot', url: 'https://api.githubcopilot.com/mcp/' });
  for (const name of ['filesystem', 'github', 'memory', 'notes', 'time', 'everything']) await activate(client, name);
  await activate(client, 'postgres').catch(() => undefined);
}

describe.skipIf(chromiumPath === undefined)('wispctl ui: the services table with 16 services at 1280 px', { timeout: 120_000 }, () => {
  let s: PanelSession;

  beforeAll(async () => {
    s = await openPanelSession(chromiumPath ?? '', { before: realistic });
    await s.page.setViewportSize({ width: 1280, height: 900 });
  }, 120_000);

  afterAll(async () => {
    await s.close();
  });

  it('shows every service, each header and short cell on one line, no word broken, nothing wider than the window', async () => {
    const { page } = s;
    const rows = page.locator('table.services tbody tr');
    await expect.poll(() => rows.count()).toBe(16);
    await page.locator('tr[data-service="postgres"] td[data-cell="state"]', { hasText: 'failed' }).waitFor();
    await page.locator('tr[data-service="everything"] td[data-cell="state"]', { hasText: 'active' }).waitFor();

    expect(await page.evaluate<string[]>(BROKEN_WORDS)).toEqual([]);
    expect(await page.evaluate<string[]>(ON_MORE_LINES)).toEqual([]);
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(1280);

    const shot = path.join(shotsDir, 'services-16.png');
    await page.screenshot({ path: shot, fullPage: true });
    if (process.env.WISP_DOCS_SHOTS === '1') copyFileSync(shot, path.join(repoRoot, 'docs', 'ui-services-16.png'));
  });

  it('SINCE is an age; ORIGIN is short, with the whole origin on hover', async () => {
    const { page } = s;
    const row = page.locator('tr[data-service="github"]');
    expect(await row.locator('td[data-cell="since"]').innerText()).toMatch(/^(just now|\d+ s ago|\d+ min ago)$/);
    const origin = row.locator('td[data-cell="origin"]');
    expect(await origin.innerText()).toBe('imported: claude_desktop_config.json');
    expect(await origin.getAttribute('title')).toMatch(new RegExp(`^imported from ${CLAUDE_FILE.replace(/[.]/g, '\\.')} at \\d{4}-\\d\\d-\\d\\dT`));
    expect(await page.locator('tr[data-service="notes"] td[data-cell="origin"]').innerText()).toBe('registered by hand');
    expect(await page.locator('tr[data-service="postgres"] td[data-cell="reason"]').innerText()).toMatch(/^SERVER_EXITED: the server exited/);
  });
});
