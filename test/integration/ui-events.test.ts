import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findChromium } from '../helpers/browser.js';
import { activate, registerScenario } from '../helpers/services.js';
import { openPanelSession, type PanelSession } from '../helpers/ui.js';

/** Issue 15, second slice: the Events page (live events, filtered by type) and the daemon's status. */

const chromiumPath = findChromium();

describe.skipIf(chromiumPath === undefined)('wispctl ui: Events', { timeout: 60_000 }, () => {
  let s: PanelSession;

  beforeAll(async () => {
    // Registered before the panel starts: the Events page must still list it (the daemon's history).
    s = await openPanelSession(chromiumPath ?? '', { before: async (client) => { await registerScenario(client, 'early'); } });
  }, 60_000);

  afterAll(async () => {
    await s.close();
  });

  const rows = (type: string) => s.page.locator(`table.events tr[data-type="${type}"] td.what`);

  it('shows the daemon\'s status in wispctl status\'s words, and reloads it', async () => {
    const { page } = s;
    await page.getByRole('link', { name: 'Events' }).click();
    const status = page.getByLabel('daemon status', { exact: true });
    const text = await status.innerText();
    expect(text).toMatch(new RegExp(`^wispd \\S+ running \\(pid ${s.daemon.pid}, up \\d+s\\)$`, 'm'));
    expect(text).toContain(`socket:    ${s.daemon.socket}`);
    expect(text).toContain('services:  1 (0 enabled)');
    await registerScenario(s.client, 'ev');
    await page.getByRole('button', { name: 'Reload the status' }).click();
    await expect.poll(() => status.innerText()).toContain('services:  2 (0 enabled)');
  });

  it('starts with the history the daemon holds: an event from before the panel started is listed, once, and the note says the list is complete', async () => {
    await rows('service.registered').filter({ hasText: 'early (v1)' }).waitFor();
    expect(await rows('service.registered').filter({ hasText: 'early (v1)' }).count()).toBe(1);
    await s.page.getByText('The daemon\'s events since it started, then live').waitFor();
  });

  it('the Services page\'s SINCE column is an age, with the full time on hover', async () => {
    const { page } = s;
    await page.getByRole('link', { name: 'Services' }).click();
    const since = page.locator('tr[data-service="early"] td[data-cell="since"] time');
    await since.waitFor();
    expect(await since.innerText()).toMatch(/^(just now|\d+ s ago|\d+ min ago)$/);
    const { service } = await s.client.call('services.get', { name: 'early' });
    const at = service.connection.status === 'disabled' ? service.connection.since : '';
    expect(await since.getAttribute('title')).toBe(at);
    expect(await since.getAttribute('datetime')).toBe(at);
    await page.getByRole('link', { name: 'Events' }).click();
  });

  it('shows events live, and filters them by type from the keyboard', async () => {
    const { page } = s;
    await rows('service.registered').filter({ hasText: 'ev (v1)' }).waitFor();
    await activate(s.client, 'ev');
    await rows('service.state').filter({ hasText: /^ev active \(pid \d+, 2 tools\)$/ }).waitFor();

    // A call from a terminal, answered by another client: its approval and its outcome arrive too.
    const caller = s.wispctl(['mcp', 'call', 'ev', 'echo', '{"text":"seen in events"}']);
    const asked = await s.events.waitFor((e) => e.type === 'approval.requested');
    if (asked.type !== 'approval.requested') throw new Error('unreachable');
    await rows('approval.requested').filter({ hasText: `${asked.approval.id} ev/echo {"text":"seen in events"}` }).waitFor();
    await s.client.call('approvals.respond', { id: asked.approval.id, decision: 'approve' });
    expect((await caller).stdout.trim()).toBe('seen in events');
    await rows('tool.call.finished').filter({ hasText: /^ev\/echo ok in \d+ ms, after \d+ ms waiting$/ }).waitFor();
    await s.shot('events');

    const stateBox = page.getByRole('checkbox', { name: 'service.state' });
    await stateBox.focus();
    await page.keyboard.press('Space');
    expect(await stateBox.isChecked()).toBe(false);
    await expect.poll(() => rows('service.state').count()).toBe(0);
    expect(await rows('service.registered').count()).toBe(2);
    await page.getByText(/\d+ hidden by the filter\./).waitFor();

    await page.getByRole('button', { name: 'None', exact: true }).click();
    await page.getByText('no events to show').waitFor();
    // A new event of a hidden type stays hidden; All shows everything kept.
    await s.client.call('services.disable', { name: 'ev' });
    await page.getByRole('button', { name: 'All', exact: true }).click();
    await rows('service.state').filter({ hasText: /^ev disabled$/ }).waitFor();
    expect(s.dialogs).toEqual([]);
  });
});
