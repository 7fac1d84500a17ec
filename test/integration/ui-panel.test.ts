import { mkdirSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import { findChromium, plainRequest, startPanelProcess, type PanelProcess } from '../helpers/browser.js';
import { EventLog, activate, scenarioServer } from '../helpers/services.js';
import { killLeftovers, repoRoot, runWispctl, startWispd, tempDir, type RunningDaemon } from '../helpers/wispd.js';

/**
 * Issue 15, first slice: `wispctl ui` in a real browser (Debian's Chromium through
 * playwright-core), against a real daemon, real stdio servers and real `wispctl` callers.
 * Every wait is on a condition the page shows; screenshots go to test-results/ui/.
 */

const chromiumPath = findChromium();
if (chromiumPath === undefined) console.warn('ui-panel.test.ts: no Chromium found: the web panel tests are skipped (apt-get install chromium, or set WISP_CHROMIUM)');

const hostileServer = path.join(repoRoot, 'fixtures', 'servers', 'hostile-server.mjs');
const shots = path.join(repoRoot, 'test-results', 'ui');
/** What fixtures/servers/hostile/html-title.mjs claims about its tool. */
const HTML_TITLE = '<img src=x onerror=alert(1)>';
const HTML_DESCRIPTION = '<img src=x onerror=alert(2)><script>alert(3)</script> Reads a file.';

describe.skipIf(chromiumPath === undefined)('wispctl ui: the web panel in a browser', { timeout: 60_000 }, () => {
  const home = tempDir();
  let daemon: RunningDaemon;
  let client: WispClient;
  let events: EventLog;
  let panel: PanelProcess;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const dialogs: string[] = [];

  beforeAll(async () => {
    mkdirSync(shots, { recursive: true });
    daemon = await startWispd(home.path);
    client = await daemon.connect();
    events = await EventLog.follow(client);
    panel = await startPanelProcess(daemon.socket);
    browser = await chromium.launch({ executablePath: chromiumPath ?? '', args: ['--no-sandbox'] });
    context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    context.on('page', (p) => p.on('dialog', (d) => void d.dismiss().then(() => dialogs.push(d.message()))));
    page = await context.newPage();
    page.on('dialog', (d) => void d.dismiss().then(() => dialogs.push(d.message())));
  }, 60_000);

  afterAll(async () => {
    await browser.close();
    panel.child.kill('SIGKILL');
    await client.close();
    killLeftovers();
    home.remove();
  });

  /** A `wispctl mcp call` in its own process, as a script would run it (no terminal: it waits for any client). */
  const callFromCli = (service: string, tool: string, args: object) => runWispctl(['--socket', daemon.socket, 'mcp', 'call', service, tool, JSON.stringify(args)]);

  it('exchanges the one-time token for an HttpOnly, SameSite=Strict cookie and drops it from the address bar', async () => {
    const response = await page.goto(panel.url.href);
    expect(response?.status()).toBe(200);
    await page.getByRole('heading', { name: 'Services' }).waitFor();
    expect(page.url()).toBe(`${panel.base}/`);
    expect(page.url()).not.toContain('token');
    const cookies = await context.cookies();
    expect(cookies).toEqual([expect.objectContaining({ name: `wisp_panel_${panel.port}`, httpOnly: true, sameSite: 'Strict', path: '/' })]);
    expect(cookies[0]?.value).not.toBe(panel.url.searchParams.get('token'));
    expect(await page.evaluate<string>('document.cookie')).toBe('');
    // The same link a second time (another browser, or someone else): refused.
    const again = await plainRequest(panel.port, { path: `${panel.url.pathname}${panel.url.search}` });
    expect(again.status).toBe(401);
    expect(again.body).toContain('used already');
  });

  it('refuses requests without the cookie, with a wrong token, a foreign Host or a foreign Origin', async () => {
    const cookie = `wisp_panel_${panel.port}=${(await context.cookies())[0]?.value ?? ''}`;
    const origin = panel.base;
    const post = (headers: Record<string, string>) =>
      plainRequest(panel.port, { method: 'POST', path: '/api/call', headers: { 'Content-Type': 'application/json', ...headers }, body: JSON.stringify({ method: 'services.list' }) });

    expect((await plainRequest(panel.port, { path: '/' })).status).toBe(401);
    expect((await plainRequest(panel.port, { path: '/api/events' })).status).toBe(401);
    expect((await post({ Origin: origin })).status).toBe(401);
    expect((await plainRequest(panel.port, { path: '/?token=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' })).status).toBe(401);
    expect((await plainRequest(panel.port, { path: '/', headers: { Cookie: `wisp_panel_${panel.port}=wrong` } })).status).toBe(401);
    // DNS rebinding: a page of evil.example resolved to 127.0.0.1 sends its own Host, cookie or not.
    for (const host of ['evil.example', `evil.example:${panel.port}`, `localhost:${panel.port}`, '127.0.0.1:1']) {
      const refused = await plainRequest(panel.port, { path: '/api/events', headers: { Host: host, Cookie: cookie } });
      expect(refused.status, host).toBe(403);
    }
    expect((await post({ Cookie: cookie })).status).toBe(403);
    expect((await post({ Cookie: cookie, Origin: 'http://evil.example' })).status).toBe(403);
    expect((await post({ Cookie: cookie, Origin: `http://localhost:${panel.port}` })).status).toBe(403);

    const ok = await post({ Cookie: cookie, Origin: origin });
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.body)).toMatchObject({ ok: true, result: { services: [] } });
    expect(ok.headers).toMatchObject({ 'cache-control': 'no-store', 'x-content-type-options': 'nosniff', 'x-frame-options': 'DENY', 'referrer-policy': 'no-referrer' });
    expect(ok.headers['content-security-policy']).toMatch(/^default-src 'self';.*frame-ancestors 'none'/);
    expect(ok.headers['content-security-policy']).not.toContain('unsafe-inline');
    expect(Object.keys(ok.headers).filter((h) => h.startsWith('access-control-'))).toEqual([]);

    // Only the methods the pages use are forwarded; a body is capped and must be JSON.
    const shutdown = await plainRequest(panel.port, { method: 'POST', path: '/api/call', headers: { Cookie: cookie, Origin: origin, 'Content-Type': 'application/json' }, body: JSON.stringify({ method: 'daemon.shutdown' }) });
    expect(shutdown.status).toBe(403);
    expect(JSON.parse(shutdown.body)).toMatchObject({ ok: false, error: { code: 'METHOD_NOT_FOUND' } });
    const huge = await plainRequest(panel.port, { method: 'POST', path: '/api/call', headers: { Cookie: cookie, Origin: origin, 'Content-Type': 'application/json' }, body: JSON.stringify({ method: 'services.list', params: { pad: 'x'.repeat(70_000) } }) });
    expect(huge.status).toBe(413);
    const form = await plainRequest(panel.port, { method: 'POST', path: '/api/call', headers: { Cookie: cookie, Origin: origin, 'Content-Type': 'text/plain' }, body: '{"method":"services.list"}' });
    expect(form.status).toBe(415);
    expect((await client.call('daemon.status')).pid).toBe(daemon.pid);
  });

  it('adds a stdio server, shows exactly what will run, trusts and activates it, and lists its tools', async () => {
    await page.getByRole('button', { name: 'Add a server' }).click();
    await page.getByLabel('Name', { exact: true }).fill('echo');
    await page.getByLabel(/^Command/).fill(process.execPath);
    await page.getByRole('button', { name: 'Add an argument' }).click();
    await page.getByLabel('argument 1', { exact: true }).fill(scenarioServer);
    await page.getByLabel(/^Working directory/).fill(home.path);
    await page.getByRole('button', { name: 'Register' }).click();
    const row = page.locator('tr[data-service="echo"]');
    await expect.poll(() => row.locator('[data-cell="state"]').textContent()).toBe('disabled');

    await page.getByRole('button', { name: 'Trust and activate…' }).click();
    const trust = page.getByRole('region', { name: 'Trust and activate echo' });
    await trust.waitFor();
    // What its sandbox lets it see, from services.sandboxPlan (issue 34).
    await trust.getByText('It will see only these paths').waitFor();
    const shown = await trust.innerText();
    expect(shown).toContain('echo will run in a sandbox: it sees only the paths listed below, and the network shown.');
    expect(shown).toContain(`read-write ${home.path} (its cwd)`);
    expect(shown).toContain('Network: none (its own loopback only)');
    expect(shown).toContain(process.execPath);
    expect(shown).toContain(scenarioServer);
    expect(shown).toContain(home.path);
    expect(shown).toContain('configuration version 1');
    await page.screenshot({ path: path.join(shots, 'services-trust.png'), fullPage: true });
    await trust.getByRole('button', { name: `Trust and start ${process.execPath}` }).click();

    await expect.poll(() => row.locator('[data-cell="state"]').textContent(), { timeout: 20_000 }).toBe('active');
    expect(await row.locator('[data-cell="tools"]').textContent()).toBe('2');
    await page.locator('details.tool[data-tool="echo"] summary').click();
    const echoTool = await page.locator('details.tool[data-tool="echo"]').innerText();
    expect(echoTool).toContain('from the server, not verified:');
    expect(echoTool).toContain('Echoes its text argument.');
    expect(echoTool).toContain('"required": [');
    await page.screenshot({ path: path.join(shots, 'services.png'), fullPage: true });
  });

  it('a call started by wispctl mcp call is approved in the page, by keyboard, and the result reaches the caller', async () => {
    await page.getByRole('link', { name: /Approvals/ }).click();
    const caller = callFromCli('echo', 'echo', { text: 'hello from the page' });
    const card = page.locator('article.card.pending', { hasText: 'hello from the page' });
    await card.waitFor({ timeout: 20_000 });
    const text = await card.innerText();
    expect(text).toContain('echo');
    expect(text).toContain('"text": "hello from the page"');
    expect(await card.getByRole('group', { name: 'from the server, not verified' }).innerText()).toContain('readOnlyHint');
    expect(text).toContain('Run echo (service echo)?');
    await page.screenshot({ path: path.join(shots, 'approvals.png'), fullPage: true });

    await card.getByRole('button', { name: 'Approve: Run echo (service echo)?' }).focus();
    await page.keyboard.press('Enter');
    const done = await caller;
    expect(done.stderr).toContain('waiting for a human');
    expect(done.code).toBe(0);
    expect(done.stdout.trim()).toBe('hello from the page');
    await page.locator('article.card', { hasText: 'hello from the page' }).getByText('Approved here.').waitFor();
  });

  it('a denied call fails for its caller with APPROVAL_DENIED', async () => {
    const caller = callFromCli('echo', 'echo', { text: 'please deny' });
    const card = page.locator('article.card.pending', { hasText: 'please deny' });
    await card.waitFor({ timeout: 20_000 });
    await card.getByRole('button', { name: /^Approve/ }).focus();
    await page.keyboard.press('Tab');
    expect(await page.evaluate<string | undefined>('document.activeElement?.textContent')).toBe('Deny');
    await page.keyboard.press('Space');
    const done = await caller;
    expect(done.code).not.toBe(0);
    expect(done.stderr).toContain('APPROVAL_DENIED');
    await page.locator('article.card', { hasText: 'please deny' }).getByText('Denied here.').waitFor();
  });

  it('two pages race on one approval: one wins, the other card says it was answered elsewhere', async () => {
    const second = await context.newPage();
    await second.goto(`${panel.base}/#/approvals`);
    const caller = callFromCli('echo', 'echo', { text: 'race' });
    const cards = [page, second].map((p) => p.locator('article.card', { hasText: '"race"' }));
    await Promise.all(cards.map((card) => card.getByRole('button', { name: /^Approve/ }).waitFor({ timeout: 20_000 })));
    // Both clicks leave at once; a page whose card was withdrawn before its click landed lost too.
    const clickApprove = "[...document.querySelectorAll('article.card')].find((a) => a.textContent.includes('\"race\"'))?.querySelector('button.approve')?.click()";
    await Promise.all([page, second].map((p) => p.evaluate(clickApprove)));
    expect((await caller).stdout.trim()).toBe('race');
    const outcomes = await Promise.all(cards.map(async (card) => {
      await card.locator('.outcome', { hasText: /here|elsewhere/ }).waitFor();
      return card.locator('.outcome').innerText();
    }));
    expect(outcomes.filter((o) => o === 'Approved here.')).toHaveLength(1);
    expect(outcomes.filter((o) => /^Answered elsewhere(: approved by .+)?\. This question is withdrawn\.$/.test(o))).toHaveLength(1);

    // An answer from a terminal: the open card is withdrawn, with who answered.
    const other = callFromCli('echo', 'echo', { text: 'from a terminal' });
    const card = second.locator('article.card', { hasText: 'from a terminal' });
    await card.getByRole('button', { name: /^Approve/ }).waitFor({ timeout: 20_000 });
    const id = (await card.getAttribute('data-approval')) ?? '';
    expect((await runWispctl(['--socket', daemon.socket, 'approve', id])).code).toBe(0);
    await card.getByText(/^Answered elsewhere: approved by .+\. This question is withdrawn\.$/).waitFor();
    expect(await card.getByRole('button', { name: /^Approve/ }).count()).toBe(0);
    expect((await other).stdout.trim()).toBe('from a terminal');
    await second.close();
  });

  it('shows a hostile server\'s markup as text: no element is created, no script runs', async () => {
    await client.call('services.register', { name: 'hostile', command: process.execPath, args: [hostileServer, 'html-title'] });
    await activate(client, 'hostile');
    await page.getByRole('link', { name: 'Services' }).click();
    await page.locator('tr[data-service="hostile"]').getByRole('button', { name: 'hostile' }).click();
    await page.locator('details.tool[data-tool="show_html"] summary').click();
    const tool = page.locator('details.tool[data-tool="show_html"]');
    const claims = await tool.getByRole('group', { name: 'from the server, not verified' }).innerText();
    expect(claims).toContain(HTML_TITLE);
    expect(claims).toContain(HTML_DESCRIPTION);
    expect(await tool.locator('pre.json').innerText()).toContain('<img src=x onerror=alert(7)>');
    expect(await page.locator('section.detail').innerText()).toContain('<img src=x onerror=alert(4)> <b>1.0</b> (what the server says)');
    await page.getByRole('button', { name: 'Show the stderr tail' }).click();
    await page.locator('pre.logs', { hasText: '<img src=x onerror=alert(5)> started' }).waitFor();
    await page.screenshot({ path: path.join(shots, 'services-hostile.png'), fullPage: true });

    await page.getByRole('link', { name: /Approvals/ }).click();
    const caller = callFromCli('hostile', 'show_html', { text: '<img src=x onerror=alert(9)>' });
    const card = page.locator('article.card.pending', { hasText: 'show_html' });
    await card.waitFor({ timeout: 20_000 });
    const shown = await card.getByRole('group', { name: 'from the server, not verified' }).innerText();
    expect(shown).toContain(HTML_TITLE);
    expect(shown).toContain('<svg onload=alert(6)>');
    expect(await card.locator('pre.json').innerText()).toContain('"text": "<img src=x onerror=alert(9)>"');
    await page.screenshot({ path: path.join(shots, 'approvals-hostile.png'), fullPage: true });
    await card.getByRole('button', { name: /^Deny/ }).click();
    expect((await caller).stderr).toContain('APPROVAL_DENIED');

    expect(await page.evaluate<number>("document.querySelectorAll('img, svg, script:not([src]), b').length")).toBe(0);
    expect(dialogs).toEqual([]);
  });

  it('disables a service, then removes it after a confirmation', async () => {
    await page.getByRole('link', { name: 'Services' }).click();
    const row = page.locator('tr[data-service="echo"]');
    await row.getByRole('button', { name: 'echo' }).click();
    await page.locator('section.detail').getByRole('button', { name: 'Disable' }).click();
    await expect.poll(() => row.locator('[data-cell="state"]').textContent(), { timeout: 20_000 }).toBe('disabled');
    await page.getByRole('button', { name: 'Remove…' }).click();
    await page.getByRole('group', { name: 'confirm removal' }).getByRole('button', { name: 'Yes, remove' }).click();
    await row.waitFor({ state: 'detached' });
    await events.waitFor((e) => e.type === 'service.deleted' && e.service.name === 'echo');
    expect((await client.call('services.list')).services.map((s) => s.name)).toEqual(['hostile']);
  });

  it('notifies on the desktop once asked to, through the browser\'s Notification API', async () => {
    const watched = await context.newPage();
    // Counts what the page shows through the real Notification (it still shows them).
    await watched.addInitScript('{ const Real = window.Notification; window.shown = []; window.Notification = class extends Real { constructor(title, options) { super(title, options); window.shown.push([title, options.body]); } }; }');
    await context.grantPermissions(['notifications'], { origin: panel.base });
    await watched.goto(`${panel.base}/#/approvals`);
    await watched.getByRole('button', { name: 'Notify me when an approval arrives' }).click();
    await watched.getByText('Desktop notifications are on for this page.').waitFor();
    const caller = callFromCli('hostile', 'show_html', { text: 'notify me' });
    // The card and the notification come from the same event.
    const card = watched.locator('article.card', { hasText: 'notify me' });
    await card.waitFor({ timeout: 20_000 });
    expect(await watched.evaluate<string[][]>('window.shown')).toEqual([['Wisp: an approval waits', 'hostile: show_html']]);
    await card.getByRole('button', { name: /^Deny/ }).click();
    expect((await caller).stderr).toContain('APPROVAL_DENIED');
    await watched.close();
  });

  it('listens on the --port given, and stops on Ctrl-C with exit 130', async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = net.createServer().listen(0, '127.0.0.1', () => {
        const { port: free } = probe.address() as net.AddressInfo;
        probe.close(() => resolve(free));
      });
    });
    const other = await startPanelProcess(daemon.socket, ['--port', String(port)]);
    expect(other.port).toBe(port);
    expect((await plainRequest(port, { path: '/' })).status).toBe(401);
    other.child.kill('SIGINT');
    expect(await other.exited).toBe(130);
    expect(other.stderr()).toContain('panel stopped');
  });

  it('stops when the daemon goes away, and says so, in the page and on stderr', async () => {
    await client.call('daemon.shutdown');
    await page.getByRole('alert').filter({ hasText: /daemon is stopping|Lost the connection/ }).waitFor();
    expect(await panel.exited).toBe(3);
    expect(panel.stderr()).toMatch(/the daemon went away \(.+\): the panel stopped \(DAEMON_NOT_RUNNING\)/);
    expect(panel.stderr()).not.toContain(panel.url.searchParams.get('token') ?? 'no token');
    await daemon.exited;
  });
});
