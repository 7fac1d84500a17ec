import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalRegistry } from '../../fixtures/npm/registry.mjs';
import { findChromium } from '../helpers/browser.js';
import { ensureNpm12, NPM12_SETUP_MS } from '../helpers/npm12.js';
import { openPanelSession, type PanelSession } from '../helpers/ui.js';
import { repoRoot } from '../helpers/wispd.js';

/**
 * Issue 15, second slice: the Installs page in a real browser, installing with the real npm 12
 * (ensureNpm12) from a local registry of real tarballs (fixtures/npm), as installs.test.ts does.
 */

const chromiumPath = findChromium();

describe.skipIf(chromiumPath === undefined)('wispctl ui: Installs', { timeout: 120_000 }, () => {
  let s: PanelSession;
  let registry: LocalRegistry;

  beforeAll(async () => {
    const npm12Bin = await ensureNpm12();
    registry = await LocalRegistry.start();
    const hello = readFileSync(path.join(repoRoot, 'fixtures', 'npm', 'hello-mcp.cjs'), 'utf8');
    await registry.publish({ name: '@fixture/case-lib', version: '2.1.0', files: { 'index.js': 'exports.upper = (s) => s.toUpperCase();\n' } });
    await registry.publish({
      name: 'greeting-lib',
      version: '1.4.0',
      dependencies: { '@fixture/case-lib': '^2.0.0' },
      files: { 'index.js': "const { upper } = require('@fixture/case-lib');\nexports.greet = (name) => `HELLO ${upper(name)}`;\n" },
    });
    await registry.publish({ name: 'hello-mcp', version: '1.0.0', dependencies: { 'greeting-lib': '^1.0.0' }, bin: { 'hello-mcp': 'bin/hello.js' }, files: { 'bin/hello.js': hello } });
    s = await openPanelSession(chromiumPath ?? '', {
      before: async (client) => {
        await client.call('installs.setSettings', { runtimeDirs: [npm12Bin], registry: registry.url, timeoutMs: 120_000 });
      },
    });
  }, NPM12_SETUP_MS + 60_000);

  afterAll(async () => {
    await s.close();
    await registry.close();
  });

  it('refuses a range with the daemon\'s reason, and writes nothing', async () => {
    const { page } = s;
    await page.getByRole('link', { name: 'Installs' }).click();
    const form = page.getByRole('form', { name: 'Plan an install from the npm registry' });
    await form.getByLabel(/^Package/).fill('hello-mcp');
    await form.getByLabel(/^Exact version/).fill('^1.0.0');
    await form.getByLabel(/^Bin/).fill('hello-mcp');
    await form.getByRole('button', { name: 'Show the plan' }).click();
    expect(await form.getByRole('alert').innerText()).toContain('(INVALID_PLAN)');
    await page.getByText('no installs').waitFor();
  });

  it('shows the plan as wispctl does, installs once approved, with a progress bar that reaches the end, and lists the attempt', async () => {
    const { page } = s;
    const form = page.getByRole('form', { name: 'Plan an install from the npm registry' });
    await form.getByLabel(/^Exact version/).fill('1.0.0');
    await form.getByRole('button', { name: 'Add an argument' }).click();
    await form.getByLabel('argument 1', { exact: true }).fill('--verbose');
    await form.getByRole('button', { name: 'Show the plan' }).click();

    const plan = page.getByLabel('the plan', { exact: true });
    await plan.waitFor();
    const text = await plan.innerText();
    expect(text).toMatch(/^Install hello-mcp@1\.0\.0 \(npm 12\.[\d.]+, node v22\.[\d.]+\)$/m);
    expect(text).toContain(`  from:       ${registry.url}`);
    expect(text).toMatch(/^ {2}into: {7}.+\/mcp-installs\/[0-9a-f]+$/m);
    expect(text).toContain('  then run:   hello-mcp --verbose (registered disabled)');
    expect(text).toContain('  it will not:');
    expect(text).toContain('install script');
    await page.getByText('Install hello-mcp@1.0.0?').waitFor();
    await s.shot('installs-plan');

    // Every value the bar takes, as the page draws it: it must move step by step to the end.
    await page.evaluate(`{
      window.barValues = [];
      new MutationObserver(() => {
        const bar = document.querySelector('progress');
        if (bar !== null && window.barValues.at(-1) !== bar.dataset.done + '/' + bar.dataset.total) window.barValues.push(bar.dataset.done + '/' + bar.dataset.total);
      }).observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
    }`);
    await page.getByRole('button', { name: 'Approve: Install hello-mcp@1.0.0?' }).focus();
    await page.keyboard.press('Enter');

    const outcome = page.getByLabel('the outcome', { exact: true });
    await outcome.waitFor({ timeout: 90_000 });
    const lines = (await outcome.innerText()).split('\n');
    expect(lines[0]).toBe('installed hello-mcp@1.0.0 (3 packages verified)');
    expect(lines[1]).toMatch(/^registered hello-mcp \(disabled\): .+\/node .+\/hello\.js --verbose$/);
    expect(lines[2]).toBe('trust and start it on the Services page');
    const bar = page.locator('progress');
    expect(await bar.getAttribute('data-done')).toBe('6');
    expect(await bar.getAttribute('data-total')).toBe('6');
    expect(await page.getByRole('status').filter({ hasText: '6/6 done' }).count()).toBe(1);
    const seen = await page.evaluate<string[]>('window.barValues');
    expect(seen.length).toBeGreaterThan(2);
    expect(seen.at(-1)).toBe('6/6');
    const done = seen.map((v) => Number(v.split('/')[0]));
    expect(done).toEqual([...done].sort((a, b) => a - b));
    await s.shot('installs');

    // The human answered the daemon's install approval from this page, bound to the plan shown.
    const resolved = await s.events.waitFor((e) => e.type === 'approval.resolved' && e.approval.kind === 'install');
    expect(resolved.type === 'approval.resolved' && resolved.approval.state.status).toMatch(/approved|consumed/);

    const row = page.locator('tr[data-attempt]');
    await expect.poll(() => row.locator('[data-cell="status"]').textContent()).toBe('succeeded');
    expect(await row.innerText()).toContain('hello-mcp@1.0.0');
    await row.getByRole('button').click();
    const attempt = await page.getByLabel('the attempt', { exact: true }).innerText();
    expect(attempt).toContain('hello-mcp@1.0.0: succeeded (last step: register)');
    expect(attempt).toContain(`registry:   ${registry.url}`);
    expect(attempt).toContain('service:    hello-mcp (');

    await page.getByRole('link', { name: 'Go to Services to trust and start it' }).click();
    await expect.poll(() => page.locator('tr[data-service="hello-mcp"] [data-cell="state"]').textContent()).toBe('disabled');
    // The origin, short in the table (package@version), whole on hover (with the plan).
    const origin = page.locator('tr[data-service="hello-mcp"] [data-cell="origin"]');
    expect(await origin.innerText()).toBe('npm hello-mcp@1.0.0');
    expect(await origin.getAttribute('title')).toMatch(/^npm install of hello-mcp@1\.0\.0 \(plan [0-9a-f]+\)$/);
    expect(s.dialogs).toEqual([]);
  });

  it('a plan denied in the page asks the daemon nothing and installs nothing; the same plan approved again is already installed', async () => {
    const { page } = s;
    const planIt = async () => {
      const form = page.getByRole('form', { name: 'Plan an install from the npm registry' });
      await form.getByLabel(/^Package/).fill('hello-mcp');
      await form.getByLabel(/^Exact version/).fill('1.0.0');
      await form.getByLabel(/^Bin/).fill('hello-mcp');
      await form.getByRole('button', { name: 'Add an argument' }).click();
      await form.getByLabel('argument 1', { exact: true }).fill('--verbose');
      await form.getByRole('button', { name: 'Show the plan' }).click();
      await page.getByText('Install hello-mcp@1.0.0?').waitFor();
    };
    await page.getByRole('link', { name: 'Installs' }).click();
    const installApprovals = () => s.events.events.filter((e) => e.type === 'approval.requested' && e.approval.kind === 'install').length;
    const asked = installApprovals();
    await planIt();
    await page.getByRole('button', { name: 'Deny: Install hello-mcp@1.0.0?' }).click();
    expect(await page.getByLabel('the outcome', { exact: true }).innerText()).toBe('not installed');
    expect(installApprovals()).toBe(asked);
    await page.getByRole('button', { name: 'Plan another' }).click();

    await planIt();
    await page.getByRole('button', { name: 'Approve: Install hello-mcp@1.0.0?' }).click();
    const outcome = page.getByLabel('the outcome', { exact: true });
    await outcome.waitFor({ timeout: 60_000 });
    const lines = (await outcome.innerText()).split('\n');
    expect(lines[0]).toBe('already installed hello-mcp@1.0.0 (3 packages verified)');
    expect(lines[1]).toMatch(/^registered hello-mcp \(disabled\): /);
    expect(installApprovals()).toBe(asked + 1);
    await expect.poll(() => page.locator('tr[data-attempt]').count()).toBe(1);
    expect((await s.client.call('services.list')).services.filter((x) => x.name.startsWith('hello-mcp'))).toHaveLength(1);
    await s.shot('installs-reused');
  });
});
