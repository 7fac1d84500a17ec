import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findChromium, startPanelProcess, type PanelProcess } from '../helpers/browser.js';
import { shotsDir } from '../helpers/ui.js';
import { tempDir } from '../helpers/wispd.js';

/**
 * Issue 15: `wispctl ui --demo`, the seeds' QA walk-through in the panel: no daemon at all
 * (the socket named does not exist), a banner on every page, a sample service whose command
 * is fail, and the conversational install -> separate activation -> call approvals with the
 * scripted model. The panel's process starts no other process.
 */

const chromiumPath = findChromium();
const PAGES = ['Services', 'Approvals', 'Installs', 'Sources', 'Chat', 'Events'];

/** The processes the panel started (Linux: /proc/PID/task/TID/children). */
function childrenOf(pid: number): string[] {
  const tasks = readdirSync(`/proc/${pid}/task`);
  return tasks.flatMap((tid) => readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(' ').filter((p) => p.trim() !== ''));
}

describe.skipIf(chromiumPath === undefined)('wispctl ui --demo', { timeout: 90_000 }, () => {
  const home = tempDir();
  let panel: PanelProcess;
  let browser: Browser;
  let page: Page;
  const dialogs: string[] = [];
  const shot = (name: string) => page.screenshot({ path: path.join(shotsDir, `${name}.png`), fullPage: true });

  beforeAll(async () => {
    // No daemon: the socket named does not exist, and the demo never looks at it.
    panel = await startPanelProcess(path.join(home.path, 'no-daemon.sock'), ['--demo']);
    browser = await chromium.launch({ executablePath: chromiumPath ?? '', args: ['--no-sandbox'] });
    const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    page = await context.newPage();
    page.on('dialog', (d) => void d.dismiss().then(() => dialogs.push(d.message())));
    await page.goto(panel.url.href);
    await page.getByRole('heading', { name: 'Services' }).waitFor();
  }, 60_000);

  afterAll(async () => {
    await browser.close();
    panel.child.kill('SIGINT');
    await panel.exited;
    home.remove();
  });

  it('says on every page that it is a demo: nothing runs, nothing is saved', async () => {
    for (const name of PAGES) {
      await page.getByRole('link', { name }).click();
      await page.getByRole('heading', { level: 2, name }).waitFor();
      const banner = page.getByRole('note', { name: 'demo mode' });
      expect(await banner.innerText()).toMatch(/^Demo: an in-memory scenario .*Nothing runs, nothing is installed, nothing is saved and the keychain is never touched/);
      expect(await page.title()).toMatch(/\(demo\)$/);
    }
    expect(await page.locator('header .daemon').innerText()).toBe('demo daemon (in memory, no processes)');
  });

  it('shows a start failure for a command named fail, and starts nothing', async () => {
    await page.getByRole('link', { name: 'Services' }).click();
    const row = page.locator('tr', { hasText: 'broken' });
    await row.getByRole('button', { name: 'broken' }).click();
    await page.getByRole('button', { name: 'Trust and activate…' }).click();
    const trust = page.getByRole('region', { name: 'Trust and activate broken' });
    expect(await trust.innerText()).toContain('broken will run in a sandbox: it sees only the paths listed below');
    await trust.getByRole('button', { name: 'Trust and start fail' }).click();
    await expect.poll(() => row.innerText(), { timeout: 10_000 }).toContain('SPAWN_FAILED: demo: a command named fail shows how a start failure looks (nothing was run)');
    expect(childrenOf(panel.child.pid ?? 0)).toEqual([]);
    await shot('demo-services');
  });

  it('calls a stdio service by what it is (never "remote"), and says a value was dropped, never "saved (keychain)"', async () => {
    await page.getByRole('link', { name: 'Services' }).click();
    await page.locator('tr[data-service="notes"]').getByRole('button', { name: 'notes' }).click();
    const detail = page.locator('section.detail');
    const state = detail.locator('dt', { hasText: /^state$/ }).locator('xpath=following-sibling::dd');
    expect(await state.innerText()).toBe('active (2 tools)');
    expect(await detail.innerText()).not.toContain('remote');
    const form = detail.getByRole('form', { name: 'Set a variable' });
    await form.getByLabel('Variable name').fill('NOTES_TOKEN');
    await form.getByLabel('Value (not shown)').fill('demo-value-1');
    await form.getByRole('button', { name: 'Save the variable' }).click();
    const said = await detail.getByRole('status').innerText();
    expect(said).toBe('notes: NOTES_TOKEN taken (demo: the value was dropped at once; nothing is saved and the keychain is never touched); the service is disabled until activated again');
    expect(await detail.locator('ul.secret-names').innerText()).toBe('NOTES_TOKEN (keychain chosen; demo: not kept)');
    expect(await detail.innerText()).not.toContain('saved (keychain)');
  });

  it('walks the conversational install, then a separate activation, then the call, each approved in the page', async () => {
    await page.getByRole('link', { name: 'Chat' }).click();
    await page.getByLabel('Title (optional)').fill('weather');
    await page.getByRole('button', { name: 'New session' }).click();
    await page.getByRole('heading', { name: /^weather/ }).waitFor();
    const ask = async (text: string) => {
      await page.getByLabel('Your request').fill(text);
      await page.getByRole('button', { name: 'Send' }).click();
    };
    const transcript = page.getByRole('list', { name: 'transcript' });
    const live = page.locator('section.live');

    await ask('What will the weather be tomorrow?');
    const install = live.locator('article.card', { hasText: 'an install' });
    await install.getByRole('button', { name: 'Approve: Allow install (wisp host)?' }).waitFor({ timeout: 20_000 });
    expect(await install.locator('pre.json').innerText()).toContain('"package": "@wisp-demo/weather-mcp"');
    expect(await live.locator('details.reasoning').innerText()).toContain('I will ask to install a weather server');
    await shot('demo-chat-install');
    await install.getByRole('button', { name: /^Approve/ }).click();

    const activation = live.locator('article.card', { hasText: 'an activation' });
    await activation.getByRole('button', { name: 'Approve: Allow mcp_activate_service (weather-mcp)?' }).waitFor({ timeout: 20_000 });
    expect(await activation.locator('pre.json').innerText()).toContain('"command": "/demo/mcp-installs/');
    await activation.getByRole('button', { name: /^Approve/ }).click();
    await expect.poll(() => transcript.innerText(), { timeout: 20_000 }).toContain('model: weather-mcp is active with 1 tool (forecast). It is offered from your next request: ask me again.');

    await ask('And now?');
    const callCard = live.locator('article.card', { hasText: 'a tool call' });
    await callCard.getByRole('button', { name: 'Approve: Run forecast (service weather-mcp)?' }).waitFor({ timeout: 20_000 });
    expect(await callCard.getByRole('group', { name: 'from the server, not verified' }).innerText()).toContain('Weather forecast');
    await shot('demo-chat-call');
    await callCard.getByRole('button', { name: /^Approve/ }).focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => transcript.innerText(), { timeout: 20_000 }).toContain('model: The forecast tool says: Tomorrow in Lisbon: sunny, 21 °C (made-up demo data).');
    const text = await transcript.innerText();
    expect(text).toContain('reasoning: The weather tool is active now: I will call it.');
    expect(text).toContain('tool result: Tomorrow in Lisbon');

    // What the chat did shows on the other pages: the service, the install attempt.
    await page.getByRole('link', { name: 'Services' }).click();
    await expect.poll(() => page.locator('tr', { hasText: 'weather-mcp' }).innerText()).toMatch(/weather-mcp\s+active/);
    await page.getByRole('link', { name: 'Installs' }).click();
    await expect.poll(() => page.locator('tr[data-attempt]').first().innerText()).toMatch(/@wisp-demo\/weather-mcp@1\.0\.0\s+succeeded\s+weather-mcp/);
    expect(childrenOf(panel.child.pid ?? 0)).toEqual([]);
    expect(dialogs).toEqual([]);
  });

  it('a denied activation leaves the service disabled', async () => {
    await page.getByRole('link', { name: 'Services' }).click();
    const row = page.locator('tr', { hasText: 'weather-mcp' });
    await row.getByRole('button', { name: 'weather-mcp' }).click();
    await page.getByRole('button', { name: 'Disable' }).click();
    await expect.poll(() => row.innerText()).toMatch(/weather-mcp\s+disabled/);
    await page.getByRole('link', { name: 'Chat' }).click();
    await page.getByRole('button', { name: 'weather' }).click();
    await page.getByLabel('Your request').fill('Once more?');
    await page.getByRole('button', { name: 'Send' }).click();
    const activation = page.locator('section.live article.card', { hasText: 'an activation' });
    await activation.getByRole('button', { name: /^Deny/ }).click();
    await expect.poll(() => page.getByRole('list', { name: 'transcript' }).innerText(), { timeout: 20_000 }).toContain('model: weather-mcp stays disabled: you denied the activation.');
    await page.getByRole('link', { name: 'Services' }).click();
    expect(await row.innerText()).toMatch(/weather-mcp\s+disabled/);
  });
});
