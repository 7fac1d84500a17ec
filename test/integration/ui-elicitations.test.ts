import { createRequire } from 'node:module';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Result, WispEvent } from '../../src/core/index.js';
import { findChromium } from '../helpers/browser.js';
import { activate } from '../helpers/services.js';
import { openPanelSession, type PanelSession } from '../helpers/ui.js';
import { repoRoot } from '../helpers/wispd.js';

/**
 * Issue 15: servers asking the user for input, answered in the panel against a real daemon
 * and real stdio fixtures (fixtures/servers/elicit-server.mjs, elicit-hostile-server.mjs):
 * form mode by keyboard alone, URL mode shown and never opened by itself, decline, cancel,
 * an answer given elsewhere first, hostile text shown as text, and axe-core's checks.
 */

const chromiumPath = findChromium();
const axePath = createRequire(import.meta.url).resolve('axe-core');
const elicitServer = path.join(repoRoot, 'fixtures', 'servers', 'elicit-server.mjs');
const hostileServer = path.join(repoRoot, 'fixtures', 'servers', 'elicit-hostile-server.mjs');

type Requested = Extract<WispEvent, { type: 'elicitation.requested' }>;

async function seriousViolations(page: Page): Promise<string[]> {
  await page.addScriptTag({ path: axePath });
  const violations = await page.evaluate<{ id: string; impact: string | null; nodes: { target: string[] }[] }[]>('axe.run(document, { resultTypes: ["violations"] }).then((r) => r.violations)');
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

describe.skipIf(chromiumPath === undefined)('wispctl ui: requests for input (elicitation)', { timeout: 90_000 }, () => {
  let s: PanelSession;
  let axePage: Page;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    s = await openPanelSession(chromiumPath ?? '');
    // The caller's approvals are answered on the socket: this file is about the requests for input.
    s.client.onEvent((event) => {
      if (event.type === 'approval.requested') void s.client.call('approvals.respond', { id: event.approval.id, decision: 'approve' });
    });
    // Registered once the panel follows the events: a server is offered elicitation only when a client could answer.
    for (const [name, server] of [['asker', elicitServer], ['hostile', hostileServer]] as const) {
      // A deadline that outlasts a human at the keyboard (a call waiting for input is still a call).
      await s.client.call('services.register', { name, command: process.execPath, args: [server], timeoutMs: 60_000 });
      ids[name] = (await activate(s.client, name)).id;
    }
    const context = await s.browser.newContext({ viewport: { width: 1200, height: 900 }, bypassCSP: true });
    await context.addCookies(await s.context.cookies());
    axePage = await context.newPage();
    await s.page.goto(`${s.panel.base}/#/approvals`);
    await s.page.getByRole('heading', { name: 'Requests for input' }).waitFor();
  }, 60_000);

  afterAll(async () => {
    await s.close();
  });

  /** Starts a tool call that asks for input; resolves with the request, the call and its card. */
  async function ask(service: string, tool: string) {
    const requested = s.events.next((e) => e.type === 'elicitation.requested' && e.elicitation.service.name === service) as Promise<Requested>;
    const call = s.client.call('tools.call', { serviceId: ids[service] ?? '', toolName: tool, arguments: {} });
    call.catch(() => undefined);
    const { elicitation } = await requested;
    const card = s.page.locator(`article[data-elicitation="${elicitation.id}"]`);
    await card.waitFor();
    return { elicitation, call, card };
  }
  const answerOf = async (call: Promise<Result<'tools.call'>>) => JSON.parse((await call).text) as { action: string; content: Record<string, unknown> | null };

  it('answers a form by keyboard alone: fields from the schema, defaults shown, the values reach the server', async () => {
    const { page } = s;
    const { call, card } = await ask('asker', 'ask_form');
    expect(await card.getByRole('heading').innerText()).toBe('asker asks you for input');
    expect(await card.getByRole('group', { name: 'the server\'s message, not verified' }).innerText()).toContain('Who are you?\nReally.');
    const name = card.getByLabel('name (required)', { exact: true });
    expect(await card.getByText('Your name').count()).toBe(1);
    expect(await card.getByLabel('age', { exact: true }).inputValue()).toBe('30');
    expect(await card.getByLabel('plan', { exact: true }).inputValue()).toBe('free');
    expect(await seriousViolations(await openOnAxePage())).toEqual([]);
    await s.shot('approvals-elicitation-form');

    // Too short for the schema: the daemon refuses, the card says why, nothing reaches the server.
    await name.focus();
    await page.keyboard.type('A');
    await page.keyboard.press('Enter');
    expect(await card.getByRole('alert').innerText()).toMatch(/ELICITATION_INVALID/);
    await name.focus();
    await page.keyboard.type('da');
    await card.getByLabel('plan', { exact: true }).focus();
    await page.keyboard.press('ArrowDown');
    await name.focus();
    await page.keyboard.press('Enter');
    await card.getByRole('status').getByText('Accepted here.').waitFor();
    expect(await answerOf(call)).toEqual({ action: 'accept', content: { name: 'Ada', age: 30, plan: 'pro' } });
  });

  /** The same page in the context that lets axe's script in, on the Approvals page. */
  async function openOnAxePage(): Promise<Page> {
    await axePage.goto(`${s.panel.base}/#/approvals`);
    await axePage.locator('article.elicitation.pending').first().waitFor();
    return axePage;
  }

  it('declines and cancels with the buttons, by keyboard', async () => {
    const declined = await ask('asker', 'ask_form');
    await declined.card.getByRole('button', { name: 'Decline' }).focus();
    await s.page.keyboard.press('Space');
    await declined.card.getByRole('status').getByText('Declined here.').waitFor();
    expect(await answerOf(declined.call)).toEqual({ action: 'decline', content: null });

    const cancelled = await ask('asker', 'ask_form');
    await cancelled.card.getByRole('button', { name: 'Cancel (ask me later)' }).focus();
    await s.page.keyboard.press('Enter');
    await cancelled.card.getByRole('status').getByText('Cancelled here.').waitFor();
    expect(await answerOf(cancelled.call)).toEqual({ action: 'cancel', content: null });
  });

  it('shows a URL request with its whole URL and host; only a click would open it; accepted here', async () => {
    const { call, card } = await ask('asker', 'ask_url');
    const group = card.getByRole('group', { name: 'the page it asks you to open' });
    expect(await group.innerText()).toContain('It asks you to open a page on consent.example.com.');
    expect(await group.getByLabel('the whole URL').innerText()).toBe('https://consent.example.com/sign?id=42');
    const link = group.getByRole('link', { name: 'Open the page on consent.example.com' });
    expect(await link.getAttribute('href')).toBe('https://consent.example.com/sign?id=42');
    expect(await link.getAttribute('rel')).toBe('noopener noreferrer');
    expect(await link.getAttribute('target')).toBe('_blank');
    expect(s.context.pages()).toHaveLength(1);
    expect(await seriousViolations(await openOnAxePage())).toEqual([]);
    await s.shot('approvals-elicitation-url');
    await card.getByRole('button', { name: 'Accept (I will open it)' }).click();
    await card.getByRole('status').getByText('Accepted here.').waitFor();
    expect(await answerOf(call)).toEqual({ action: 'accept', content: null });
    expect(s.context.pages()).toHaveLength(1);
  });

  it('says so when another client answered first, and offers no answer any more', async () => {
    const { elicitation, call, card } = await ask('asker', 'ask_form');
    const other = await s.daemon.connect();
    await other.call('elicitations.respond', { id: elicitation.id, action: 'decline' });
    expect(await answerOf(call)).toEqual({ action: 'decline', content: null });
    await card.getByRole('status').getByText(/^Answered elsewhere: declined by client-\d+\. This request is withdrawn\.$/).waitFor();
    expect(await card.getByRole('button').count()).toBe(0);
    await other.close();
  });

  it('shows hostile text from the server as text: no element made, no script run', async () => {
    const { page } = s;
    const form = await ask('hostile', 'ask_hostile_form');
    const message = await form.card.getByRole('group', { name: 'the server\'s message, not verified' }).innerText();
    expect(message).toContain('<img src=x onerror="document.title=\'pwned\'">');
    expect(message).toContain('<a href="javascript:alert(1)">click</a>');
    // Terminal escapes are shown, not passed on: ESC as its escape.
    expect(message).toContain('\\x1b[31m red \\x1b[0m');
    expect(await form.card.locator('.field-about').innerText()).toBe('<script>alert(1)</script>\\x1b[2J\\x1b]0;owned\\x07');
    const token = form.card.getByLabel(/^Token <img src=x onerror=/);
    expect(await form.card.getByText('<script>alert(1)</script>', { exact: false }).count()).toBe(1);
    expect(await form.card.locator('option').allInnerTexts()).toEqual(['(none)', 'Safe <img src=x onerror="document.title=\'pwned\'">', '<b>Fast</b>']);
    expect(await form.card.getByLabel('<u>I agree</u>').isChecked()).toBe(false);
    expect(await page.locator('main img, main script, main b, main u, main a[href^="javascript"]').count()).toBe(0);
    await token.fill('t-1');
    await form.card.getByLabel('<u>I agree</u>').check();
    await form.card.getByRole('button', { name: 'Send these values to the server' }).click();
    expect(await answerOf(form.call)).toEqual({ action: 'accept', content: { token: 't-1', agree: true } });

    const url = await ask('hostile', 'ask_hostile_url');
    const link = url.card.getByRole('link', { name: 'Open the page on consent.example.com' });
    const href = (await link.getAttribute('href')) ?? '';
    expect(new URL(href).host).toBe('consent.example.com');
    expect(href).not.toMatch(/[<>"]/);
    expect(await url.card.getByRole('group', { name: 'the server\'s message, not verified' }).innerText()).toContain('Open <img src=x');
    await url.card.getByRole('button', { name: 'Decline' }).click();
    expect(await answerOf(url.call)).toEqual({ action: 'decline', content: null });
    expect(await page.title()).not.toContain('pwned');
    expect(await page.locator('main img, main script').count()).toBe(0);
    expect(s.dialogs).toEqual([]);
  });
});
