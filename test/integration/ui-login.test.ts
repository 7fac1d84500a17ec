import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOAuthServer, type OAuthFixture } from '../../fixtures/servers/oauth-server.mjs';
import { findChromium, startPanelProcess, type PanelProcess } from '../helpers/browser.js';
import { startInProcess, type InProcessDaemon } from '../helpers/in-process.js';
import { EventLog } from '../helpers/services.js';
import { shotsDir } from '../helpers/ui.js';
import { tempDir } from '../helpers/wispd.js';
import path from 'node:path';

/**
 * Issue 15: an OAuth login started from the panel, against the local authorization server
 * (fixtures/servers/oauth-server.mjs) and a real daemon (in this process, with the in-memory
 * secret store: no keyring needed). The page shows the authorization URL and its host; it
 * is opened only by the user's click, and the login ends with the service active.
 */

const chromiumPath = findChromium();

describe.skipIf(chromiumPath === undefined)('wispctl ui: OAuth login', { timeout: 120_000 }, () => {
  const home = tempDir();
  let oauth: OAuthFixture;
  let daemon: InProcessDaemon;
  let events: EventLog;
  let panel: PanelProcess;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    oauth = await startOAuthServer();
    daemon = await startInProcess(home.path);
    events = await EventLog.follow(daemon.client);
    panel = await startPanelProcess(daemon.socket);
    browser = await chromium.launch({ executablePath: chromiumPath ?? '', args: ['--no-sandbox'] });
    page = await (await browser.newContext({ viewport: { width: 1200, height: 900 } })).newPage();
    await page.goto(panel.url.href);
    await page.getByRole('heading', { name: 'Services' }).waitFor();
  }, 60_000);

  afterAll(async () => {
    await browser.close();
    panel.child.kill('SIGKILL');
    await daemon.stop();
    await oauth.close();
    home.remove();
  });

  it('registers a remote server that needs OAuth, logs in from the page by a click, and it becomes active', async () => {
    await page.getByRole('button', { name: 'Add a remote server' }).click();
    await page.getByLabel('Name', { exact: true }).fill('protected');
    await page.getByLabel(/^URL/).fill(oauth.url);
    await page.getByLabel(/needs an OAuth login/).check();
    await page.getByRole('button', { name: 'Register' }).click();
    const row = page.locator('tr[data-service="protected"]');
    await expect.poll(() => row.locator('[data-cell="state"]').textContent()).toBe('disabled');

    const authorizations = oauth.counts.authorizations;
    await page.getByRole('button', { name: 'Log in to protected…' }).click();
    const link = page.getByRole('link', { name: `Open the authorization page on ${new URL(oauth.issuer).host}` });
    await link.waitFor({ timeout: 20_000 });
    const group = page.getByRole('group', { name: 'the authorization page' });
    expect(await group.innerText()).toContain(`Log in on ${new URL(oauth.issuer).host} (not encrypted: http)`);
    const announced = events.events.find((e) => e.type === 'service.login');
    expect(announced?.type === 'service.login' && (await link.getAttribute('href')) === announced.authorizationUrl).toBe(true);
    expect(await link.getAttribute('rel')).toBe('noopener noreferrer');
    // Shown, not opened: the authorization server has not been asked anything yet.
    expect(oauth.counts.authorizations).toBe(authorizations);
    await page.screenshot({ path: path.join(shotsDir, 'login.png'), fullPage: true });

    const opened = page.context().waitForEvent('page');
    await link.click();
    const tab = await opened;
    await tab.waitForLoadState();
    expect(await tab.locator('body').innerText()).toContain('Logged in');
    await tab.close();
    await page.getByRole('status').filter({ hasText: 'Logged in to protected: active' }).waitFor({ timeout: 20_000 });
    await expect.poll(() => row.locator('[data-cell="state"]').textContent()).toBe('active');
    expect(oauth.counts.codeExchanges).toBe(1);
  });
});
