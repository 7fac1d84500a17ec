import { copyFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findChromium, startPanelProcess, type PanelProcess } from '../helpers/browser.js';
import { activate, registerScenario } from '../helpers/services.js';
import { shotsDir, openPanelSession, type PanelSession } from '../helpers/ui.js';
import { repoRoot, runWispctl, tempDir } from '../helpers/wispd.js';

/**
 * Issue 15: every page passes axe-core's checks (no serious or critical violation), with
 * content in it: an active service opened with its trust view, a pending approval, a plan
 * form, a chat session; and the demo's pages with their banner. Each page's screenshot is
 * saved; with WISP_DOCS_SHOTS=1 they also replace the README's docs/ui-<page>.png.
 */

const chromiumPath = findChromium();
const axePath = createRequire(import.meta.url).resolve('axe-core');

interface Violation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/** axe-core run in the page (injected: the panel's own CSP allows no such script, so the test's context bypasses it). */
async function seriousViolations(page: Page): Promise<string[]> {
  await page.addScriptTag({ path: axePath });
  const violations = await page.evaluate<Violation[]>('axe.run(document, { resultTypes: ["violations"] }).then((r) => r.violations)');
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact ?? ''}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

async function checkPage(page: Page, name: string, shot: string): Promise<void> {
  expect(await seriousViolations(page), name).toEqual([]);
  const file = path.join(shotsDir, `${shot}.png`);
  await page.screenshot({ path: file, fullPage: true });
  if (process.env.WISP_DOCS_SHOTS === '1') copyFileSync(file, path.join(repoRoot, 'docs', `${shot}.png`));
}

describe.skipIf(chromiumPath === undefined)('wispctl ui: accessibility (axe-core)', { timeout: 180_000 }, () => {
  let s: PanelSession;
  let page: Page;
  let pendingCall: ReturnType<typeof runWispctl>;

  beforeAll(async () => {
    s = await openPanelSession(chromiumPath ?? '', {
      before: async (client) => {
        await registerScenario(client, 'tools');
        await activate(client, 'tools');
        await client.call('sessions.create', { title: 'notes' });
      },
    });
    // The shared page enforces the panel's CSP; axe needs a page whose context bypasses it.
    const context = await s.browser.newContext({ viewport: { width: 1200, height: 900 }, bypassCSP: true });
    await context.addCookies(await s.context.cookies());
    page = await context.newPage();
    await page.goto(s.panel.base);
    await page.getByRole('heading', { name: 'Services' }).waitFor();
  }, 60_000);

  afterAll(async () => {
    await s.close();
    await pendingCall.catch(() => undefined);
  });

  it('Services: the list, a service opened with its trust view and forms', async () => {
    await page.getByRole('button', { name: 'tools' }).click();
    await page.getByRole('heading', { name: /^Tools \(\d+\)$/ }).waitFor();
    await page.locator('details.tool summary').first().click();
    await page.getByRole('button', { name: 'Disable' }).click();
    await page.getByRole('button', { name: 'Trust and activate…' }).click();
    await page.getByRole('region', { name: 'Trust and activate tools' }).waitFor();
    await checkPage(page, 'Services', 'ui-services');
    await page.getByRole('button', { name: 'Add a server' }).click();
    await page.getByRole('button', { name: 'Add an argument' }).click();
    await page.getByRole('button', { name: 'Add a remote server' }).click();
    await page.getByRole('button', { name: 'Add a header' }).click();
    expect(await seriousViolations(page), 'Services with the forms open').toEqual([]);
    await page.getByRole('region', { name: 'Trust and activate tools' }).getByRole('button', { name: /^Trust and start/ }).click();
    await expect.poll(() => page.locator('tr[data-service="tools"] [data-cell="state"]').textContent(), { timeout: 20_000 }).toBe('active');
  });

  it('Approvals: a pending call with its arguments and the server\'s claims', async () => {
    pendingCall = s.wispctl(['mcp', 'call', 'tools', 'echo', '{"text":"from the accessibility check"}']);
    await page.getByRole('link', { name: /^Approvals/ }).click();
    await page.locator('article.card.pending').waitFor({ timeout: 20_000 });
    await checkPage(page, 'Approvals', 'ui-approvals');
    await page.getByRole('button', { name: /^Approve/ }).click();
    expect((await pendingCall).code).toBe(0);
  });

  it('Installs, Sources, Chat and Events', async () => {
    await page.getByRole('link', { name: 'Installs' }).click();
    await page.getByRole('heading', { name: 'Attempts, newest first' }).waitFor();
    await checkPage(page, 'Installs', 'ui-installs');
    await page.getByRole('link', { name: 'Sources' }).click();
    await page.getByRole('heading', { level: 2, name: 'Sources' }).waitFor();
    await checkPage(page, 'Sources', 'ui-sources');
    await page.getByRole('link', { name: 'Chat' }).click();
    await page.getByRole('button', { name: 'notes' }).click();
    await page.getByRole('heading', { name: /^notes/ }).waitFor();
    await checkPage(page, 'Chat', 'ui-chat');
    await page.getByRole('link', { name: 'Events' }).click();
    await page.locator('table.events tbody tr').first().waitFor();
    await checkPage(page, 'Events', 'ui-events');
  });
});

describe.skipIf(chromiumPath === undefined)('wispctl ui --demo: accessibility (axe-core)', { timeout: 180_000 }, () => {
  const home = tempDir();
  let panel: PanelProcess;
  let browser: Browser;

  beforeAll(async () => {
    panel = await startPanelProcess(path.join(home.path, 'none.sock'), ['--demo']);
    browser = await chromium.launch({ executablePath: chromiumPath ?? '', args: ['--no-sandbox'] });
  }, 60_000);

  afterAll(async () => {
    await browser.close();
    panel.child.kill('SIGINT');
    await panel.exited;
    home.remove();
  });

  it('every page, with the demo banner, a failed service and an inline approval', async () => {
    const page = await (await browser.newContext({ viewport: { width: 1200, height: 900 }, bypassCSP: true })).newPage();
    await page.goto(panel.url.href);
    await page.getByRole('note', { name: 'demo mode' }).waitFor();
    await page.getByRole('button', { name: 'broken' }).click();
    await page.getByRole('button', { name: 'Trust and activate…' }).click();
    await page.getByRole('button', { name: 'Trust and start fail' }).click();
    await page.getByRole('region', { name: 'Trust and activate broken' }).getByRole('alert').waitFor();
    await checkPage(page, 'demo Services', 'ui-demo-services');
    await page.getByRole('link', { name: 'Chat' }).click();
    await page.getByRole('button', { name: 'New session' }).click();
    await page.getByLabel('Your request').fill('What will the weather be tomorrow?');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.locator('section.live article.card').waitFor({ timeout: 20_000 });
    await checkPage(page, 'demo Chat', 'ui-demo-chat');
    for (const name of ['Approvals', 'Installs', 'Sources', 'Events']) {
      await page.getByRole('link', { name: new RegExp(`^${name}`) }).click();
      await page.getByRole('heading', { level: 2, name }).waitFor();
      expect(await seriousViolations(page), `demo ${name}`).toEqual([]);
    }
  });
});
