import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Service } from '../../src/core/index.js';
import { findChromium } from '../helpers/browser.js';
import { activate, registerScenario } from '../helpers/services.js';
import { openPanelSession, type PanelSession } from '../helpers/ui.js';

/**
 * Issue 37: a tool tried from the panel, as the MCP Inspector lets you. The form comes from
 * the tool's input schema; the call waits for its approval like any other (answered on the
 * page, or by another client); the result is shown as the model gets it. And a service
 * whose activation failed shows why on its page: its last stderr lines, secrets redacted,
 * and the command that follows its log.
 */

const SECRET = 'canary-9f8e7d6c5b-not-on-the-page';

const chromiumPath = findChromium();

describe.skipIf(chromiumPath === undefined)('wispctl ui: trying a tool', { timeout: 90_000 }, () => {
  let s: PanelSession;
  let service: Service;

  beforeAll(async () => {
    s = await openPanelSession(chromiumPath ?? '');
    await registerScenario(s.client, 'tryme', ['--typed-tool', '--call-tools']);
    service = await activate(s.client, 'tryme');
    expect(service.connection.status).toBe('active');
    await registerScenario(s.client, 'crashy', ['--exit-on-init', '3', '--stderr-lines', '25']);
    await s.client.call('services.setEnv', { name: 'crashy', mode: 'replace', variables: [{ name: 'CANARY', value: SECRET, storage: 'session' }] });
  }, 60_000);

  afterAll(async () => {
    await s.close();
  });

  const openTool = async (tool: string) => {
    await s.page.goto(`${s.panel.base}/#/services`);
    // A fresh page: nothing tried before is open.
    await s.page.reload();
    await s.page.locator('tr[data-service="tryme"]').getByRole('button', { name: 'tryme' }).click();
    const details = s.page.locator(`details.tool[data-tool="${tool}"]`);
    await details.locator('summary').click();
    await details.getByRole('button', { name: `Try ${tool}…` }).click();
    return details.getByRole('region', { name: `Try ${tool}` });
  };

  it('fills a form from the schema, is approved on the page, and shows the result as the model gets it', async () => {
    const form = await openTool('typed');
    await form.getByLabel(/^count/).fill('3');
    await form.getByLabel(/^ratio/).fill('0.5');
    await form.getByLabel(/^flag/).selectOption('true');
    await form.getByLabel(/^tags/).fill('["a", "b"]');
    await form.getByLabel(/^note/).fill('hello');
    // The schema's description is the server's, its escape code shown as text.
    expect(await form.innerText()).toContain('from the server: a note \\x1b[31min red');
    const requested = s.events.next((e) => e.type === 'approval.requested' && e.approval.summary.toolName === 'typed');
    await form.getByRole('button', { name: 'Call typed' }).click();
    await expect.poll(() => form.getByRole('status').first().innerText()).toBe('Waiting for approval…');
    const event = await requested;
    if (event.type !== 'approval.requested') throw new Error('unreachable');
    // Exactly what was typed, typed as the schema says.
    expect(event.approval.summary.arguments).toEqual({ count: 3, ratio: 0.5, flag: true, tags: ['a', 'b'], note: 'hello' });
    const card = form.locator(`article[data-approval="${event.approval.id}"]`);
    expect(await card.getByRole('heading').innerText()).toBe('Run typed (service tryme)?');
    await s.shot('try-tool-waiting');
    await card.getByRole('button', { name: 'Approve: Run typed (service tryme)?' }).click();
    const result = form.getByRole('group', { name: 'the result' });
    await result.waitFor();
    expect(JSON.parse(await result.getByLabel('result text').innerText())).toEqual({ count: 3, ratio: 0.5, flag: true, tags: ['a', 'b'], note: 'hello' });
    expect(await result.innerText()).toContain('Not truncated.');
    await s.shot('try-tool-result');
  });

  it('shows a denial answered elsewhere, and an error result as an error', async () => {
    const form = await openTool('echo');
    const requested = s.events.next((e) => e.type === 'approval.requested' && e.approval.summary.toolName === 'echo');
    await form.getByLabel(/^text/).fill('hi');
    await form.getByRole('button', { name: 'Call echo' }).click();
    const event = await requested;
    if (event.type !== 'approval.requested') throw new Error('unreachable');
    await form.locator(`article[data-approval="${event.approval.id}"]`).waitFor();
    // Another client answers: the page follows.
    await s.client.call('approvals.respond', { id: event.approval.id, decision: 'deny' });
    const result = form.getByRole('group', { name: 'the result' });
    await result.waitFor();
    expect(await result.getByRole('alert').innerText()).toMatch(/\(APPROVAL_DENIED\)$/);
    expect(await form.locator(`article[data-approval="${event.approval.id}"]`).innerText()).toContain('Answered elsewhere');

    const fail = await openTool('fail');
    // A schema with no properties: one JSON field for the whole arguments.
    await fail.getByLabel('arguments (a JSON object)').fill('{"why": 1}');
    const asked = s.events.next((e) => e.type === 'approval.requested' && e.approval.summary.toolName === 'fail');
    await fail.getByRole('button', { name: 'Call fail' }).click();
    const failEvent = await asked;
    if (failEvent.type !== 'approval.requested') throw new Error('unreachable');
    expect(failEvent.approval.summary.arguments).toEqual({ why: 1 });
    await fail.locator(`article[data-approval="${failEvent.approval.id}"]`).getByRole('button', { name: /^Approve/ }).click();
    const failed = fail.getByRole('group', { name: 'the result' });
    await failed.waitFor();
    expect(await failed.getByRole('alert').innerText()).toMatch(/\(TOOL_ERROR\)$/);
    expect(await failed.innerText()).toContain('what the model gets (an error result):');
    await s.shot('try-tool-error');
  });

  it('shows markers for content the model never gets, and the truncation', async () => {
    const media = await openTool('media');
    const asked = s.events.next((e) => e.type === 'approval.requested' && e.approval.summary.toolName === 'media');
    await media.getByRole('button', { name: 'Call media' }).click();
    const event = await asked;
    if (event.type !== 'approval.requested') throw new Error('unreachable');
    await s.client.call('approvals.respond', { id: event.approval.id, decision: 'approve' });
    const text = media.getByRole('group', { name: 'the result' }).getByLabel('result text');
    await text.waitFor();
    expect(await text.innerText()).toMatch(/\[omitted by Wisp: image image\/png, \d+ bytes\]/);

    const big = await openTool('big');
    await big.getByLabel(/^chars/).fill('40000');
    const askedBig = s.events.next((e) => e.type === 'approval.requested' && e.approval.summary.toolName === 'big');
    await big.getByRole('button', { name: 'Call big' }).click();
    const bigEvent = await askedBig;
    if (bigEvent.type !== 'approval.requested') throw new Error('unreachable');
    await s.client.call('approvals.respond', { id: bigEvent.approval.id, decision: 'approve' });
    const result = big.getByRole('group', { name: 'the result' });
    await result.waitFor();
    expect(await result.innerText()).toContain('Truncated: the model gets only what is shown.');
    expect(await result.getByLabel('result text').innerText()).toMatch(/\[truncated by Wisp: 40000 characters, the first 32000 shown\]$/);
  });

  it('a failed activation shows its last stderr lines, redacted, and how to follow its log', async () => {
    const { page } = s;
    await page.goto(`${s.panel.base}/#/services`);
    await page.reload();
    await page.locator('tr[data-service="crashy"]').getByRole('button', { name: 'crashy' }).click();
    const detail = page.locator('section.detail');
    await detail.getByRole('button', { name: 'Trust and activate…' }).click();
    await detail.getByRole('button', { name: /^Trust and start / }).click();
    const why = detail.getByRole('region', { name: 'Why crashy failed' });
    await why.waitFor();
    const lines = (await why.getByLabel('last stderr lines').innerText()).split('\n');
    expect(lines).toHaveLength(20);
    expect(lines[0]).toBe('starting: step 7 of 25');
    expect(lines[19]).toMatch(/^fatal: cannot start with key \[REDACTED/);
    expect(await why.innerText()).toContain('Follow its log: wispctl mcp logs crashy -f');
    expect(await page.content()).not.toContain(SECRET);
    await s.shot('service-failed-tail');
  });
});
