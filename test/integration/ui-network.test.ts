import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Approval, Service, WispEvent } from '../../src/core/index.js';
import { findChromium } from '../helpers/browser.js';
import { listening } from '../helpers/egress.js';
import { describeSandbox, hostileServer } from '../helpers/sandbox.js';
import { activate } from '../helpers/services.js';
import { openPanelSession, type PanelSession } from '../helpers/ui.js';

/**
 * Issue 34 in the web panel: a real sandboxed server (fixtures/servers/hostile/egress.mjs,
 * bwrap, network `ask`) connects to a loopback HTTP server no grant covers. The connection's
 * network.connect approval is a card on the Approvals page, answered there with a click
 * (Always allow, then Deny for another port); the service's detail shows the grant made
 * while it runs, and the refusal is on the Events page with how to grant it.
 */

const chromiumPath = findChromium();
let hits = 0;
const target = http.createServer((_req, res) => {
  hits += 1;
  res.end('panel hello');
});
let port = 0;
let s: PanelSession;
let weather: Service;

type Requested = Extract<WispEvent, { type: 'approval.requested' }>;

/** Starts the fixture's `get` of the target (as a script would, from the socket) and approves the tool call; the answer comes later. */
async function startGet(url: string): Promise<{ answer: Promise<string>; network: Promise<Approval> }> {
  const network = s.events.next((e) => e.type === 'approval.requested' && e.approval.kind === 'network.connect').then((e) => (e as Requested).approval);
  const asked = s.events.next((e) => e.type === 'approval.requested' && e.approval.kind === 'tool_call') as Promise<Requested>;
  const answer = s.client.call('tools.call', { serviceId: weather.id, toolName: 'get', arguments: { url } }).then((result) => result.text);
  answer.catch(() => undefined);
  await s.client.call('approvals.respond', { id: (await asked).approval.id, decision: 'approve' });
  return { answer, network };
}

describeSandbox('the panel and a sandboxed server\'s network (issue 34)', () => {
  describe.skipIf(chromiumPath === undefined)('in a browser', { timeout: 90_000 }, () => {
    beforeAll(async () => {
      port = await listening(target, '127.0.0.2');
      s = await openPanelSession(chromiumPath ?? '');
      const sandbox = { enabled: true, read: [], write: [], net: { mode: 'ask' as const } };
      await s.client.call('services.register', { name: 'weather', command: process.execPath, args: [hostileServer, 'egress'], timeoutMs: 60_000, sandbox });
      weather = await activate(s.client, 'weather');
      expect(weather.connection.status).toBe('active');
    }, 90_000);

    afterAll(async () => {
      await s.close();
      await new Promise((resolve) => target.close(resolve));
    });

    it('shows the held connection as a card naming the service, host and port; Always allow lets it through, and the detail shows the grant', async () => {
      const { page } = s;
      const { answer, network } = await startGet(`http://127.0.0.2:${port}/first`);
      await network;
      expect(hits).toBe(0);
      await page.getByRole('link', { name: /Approvals/ }).click();
      const card = page.locator('article.card', { hasText: `Let weather connect to 127.0.0.2:${port}?` });
      await card.waitFor();
      const text = await card.innerText();
      expect(text).toContain(`Let weather connect to 127.0.0.2:${port}?`);
      expect(text).toContain('the connection waits for this answer');
      expect(text).toContain(`revoke with wispctl mcp allow weather 127.0.0.2:${port} --revoke`);
      await s.shot('network-connect');
      await card.getByRole('button', { name: `Always allow: Let weather connect to 127.0.0.2:${port}?` }).click();
      expect(await answer).toBe('STATUS 200: panel hello');
      expect(hits).toBe(1);
      // The grant made while it runs, on the service's detail, with how to take it back.
      await page.getByRole('link', { name: 'Services' }).click();
      await page.locator('tr[data-service="weather"]').getByRole('button', { name: 'weather' }).click();
      await page.locator('section.detail', { hasText: `allowed while running: 127.0.0.2:${port} (wispctl mcp allow weather HOST --revoke takes one back)` }).waitFor();
      const detail = await page.locator('section.detail').innerText();
      expect(detail).toContain('on: read (no grants); write (its cwd only); ask for each new host');
      // Granted for good: the next connection there asks nothing.
      expect(await (await startGet(`http://127.0.0.2:${port}/again`)).answer).toBe('STATUS 200: panel hello');
      expect(hits).toBe(2);
    });

    it('a denial from the card refuses the connection, and the refusal is on the Events page with how to grant it', async () => {
      const { page } = s;
      const other = http.createServer((_req, res) => res.end('never'));
      const otherPort = await listening(other, '127.0.0.2');
      try {
        const refused = s.events.next((e) => e.type === 'network.refused');
        const { answer, network } = await startGet(`http://127.0.0.2:${otherPort}/denied`);
        await network;
        await page.getByRole('link', { name: /Approvals/ }).click();
        const card = page.locator('article.card', { hasText: `Let weather connect to 127.0.0.2:${otherPort}?` });
        await card.getByRole('button', { name: /^Deny/ }).click();
        expect(await answer).toMatch(new RegExp(`^STATUS 403: Wisp's egress proxy: 127\\.0\\.0\\.2:${otherPort} is not granted to this service`));
        expect(await refused).toMatchObject({ host: '127.0.0.2', port: otherPort, reason: 'not-granted' });
        await page.getByRole('link', { name: 'Events' }).click();
        const row = page.locator('table.events tr[data-type="network.refused"] td.what', { hasText: `127.0.0.2:${otherPort}` });
        await row.waitFor();
        expect(await row.innerText()).toBe(`weather tried to reach 127.0.0.2:${otherPort}: not granted — wispctl mcp allow weather 127.0.0.2:${otherPort}`);
        await s.shot('network-refused');
        expect(s.dialogs).toEqual([]);
      } finally {
        await new Promise((resolve) => other.close(resolve));
      }
    });
  });
});
