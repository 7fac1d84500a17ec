import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MockDeepSeek, textEvents, toolCallEvents } from '../../fixtures/model/mock-deepseek.mjs';
import { findChromium } from '../helpers/browser.js';
import { activate, registerScenario } from '../helpers/services.js';
import { openPanelSession, type PanelSession } from '../helpers/ui.js';
import { daemonEnv } from '../helpers/wispd.js';

/**
 * Issue 15, second slice: the Chat page with the mock DeepSeek (fixtures/model), a real daemon
 * and a real stdio server: the answer streams into the page, approvals are answered inline.
 */

const chromiumPath = findChromium();
const ANSWER = 'The tool said: from the page.';

describe.skipIf(chromiumPath === undefined)('wispctl ui: Chat', { timeout: 60_000 }, () => {
  const mock = new MockDeepSeek();
  let s: PanelSession;
  let echoName = '';

  beforeAll(async () => {
    const url = await mock.start();
    s = await openPanelSession(chromiumPath ?? '', {
      env: daemonEnv({ DEEPSEEK_API_KEY: 'sk-panel-chat' }),
      before: async (client) => {
        await client.call('model.setSettings', { baseUrl: url, maxRetries: 0 });
        await registerScenario(client, 'tools');
        await activate(client, 'tools');
        echoName = (await client.call('tools.list')).tools.find((t) => t.name === 'echo')?.modelName ?? '';
      },
    });
  }, 60_000);

  afterAll(async () => {
    await s.close();
    await mock.stop();
  });

  it('streams the answer, asks for the tool call inline (answered by keyboard), and keeps the transcript', async () => {
    const { page } = s;
    await page.getByRole('link', { name: 'Chat' }).click();
    await page.getByLabel('Title (optional)').fill('panel chat');
    await page.getByRole('button', { name: 'New session' }).click();
    await page.getByRole('heading', { name: /^panel chat/ }).waitFor();

    // The answer stops after its first piece until released: the page must show that piece alone.
    const answer = textEvents(ANSWER, { pieces: 3 });
    answer.splice(2, 0, { gate: 'half' });
    mock.enqueue({ events: toolCallEvents([{ id: 'c1', name: echoName, arguments: '{"text":"from the page"}' }]) }, { events: answer });
    await page.getByLabel('Your request').fill('Echo "from the page", please.');
    await page.getByRole('button', { name: 'Send' }).click();

    const live = page.getByRole('region', { name: /^(Waiting for your answer|The model is answering…)$/ });
    const card = live.locator('article.card', { hasText: 'from the page' });
    await card.getByRole('button', { name: 'Approve: Run echo (service tools)?' }).waitFor({ timeout: 20_000 });
    expect(await card.locator('pre.json').innerText()).toContain('"text": "from the page"');
    await s.shot('chat-approval');
    await card.getByRole('button', { name: /^Approve/ }).focus();
    await page.keyboard.press('Enter');
    await card.getByText('Approved here.').waitFor();

    const stream = page.getByLabel('the answer as it streams');
    const first = ANSWER.slice(0, Math.ceil(ANSWER.length / 3));
    await expect.poll(() => stream.innerText(), { timeout: 20_000 }).toBe(first);
    await live.getByText(/^\(tools\/echo ran in \d+ ms\)$/).waitFor();
    await s.shot('chat-streaming');
    mock.release('half');

    // Once the task has ended, the transcript holds the whole exchange and the live part goes.
    const transcript = page.getByRole('list', { name: 'transcript' });
    await expect.poll(() => transcript.innerText(), { timeout: 20_000 }).toContain(`model: ${ANSWER}`);
    await live.waitFor({ state: 'detached' });
    await page.getByRole('button', { name: 'panel chat' }).locator('xpath=..').getByText('4 messages').waitFor();
    const text = await transcript.innerText();
    expect(text).toContain('you: Echo "from the page", please.');
    expect(text).toContain(`tool call: ${echoName} {"text":"from the page"}`);
    expect(text).toContain('tool result: from the page');
    await s.shot('chat');
  });

  it('asks for a host tool inline too; a denial reaches the model, and the task still ends', async () => {
    const { page } = s;
    mock.enqueue({ events: toolCallEvents([{ id: 'l', name: 'mcp_list_services', arguments: '{}' }]) }, { events: textEvents('Not allowed, then.') });
    await page.getByLabel('Your request').fill('Which services are there?');
    await page.getByRole('button', { name: 'Send' }).click();
    const card = page.locator('section.live article.card', { hasText: 'mcp_list_services' });
    await card.waitFor({ timeout: 20_000 });
    expect(await card.innerText()).toContain('a host tool');
    await card.getByRole('button', { name: /^Deny/ }).click();
    // The task goes on at once (and its live part with it): the denial is read from the daemon.
    const resolved = await s.events.waitFor((e) => e.type === 'approval.resolved' && e.approval.kind === 'host_tool');
    expect(resolved.type === 'approval.resolved' && resolved.approval.state.status).toBe('denied');
    await expect.poll(() => page.getByRole('list', { name: 'transcript' }).innerText(), { timeout: 20_000 }).toContain('model: Not allowed, then.');
    expect(await page.getByRole('list', { name: 'transcript' }).innerText()).toContain('tool call: mcp_list_services {}');
    expect(s.dialogs).toEqual([]);
  });

  it('follows a request sent by another client: its tool call is answered in the page', async () => {
    const { page } = s;
    const { session } = await s.client.call('sessions.create', { title: 'from a terminal' });
    mock.enqueue({ events: toolCallEvents([{ id: 't1', name: echoName, arguments: '{"text":"asked elsewhere"}' }]) }, { events: textEvents('Echoed for the terminal.') });
    await s.client.call('sessions.send', { id: session.id, text: 'Echo "asked elsewhere".' });
    await s.events.waitFor((e) => e.type === 'approval.requested' && e.approval.requester.sessionId === session.id);
    await page.getByRole('button', { name: 'from a terminal' }).click();
    const card = page.locator('section.live article.card', { hasText: 'asked elsewhere' });
    await card.getByRole('button', { name: 'Approve: Run echo (service tools)?' }).click();
    await expect.poll(() => page.getByRole('list', { name: 'transcript' }).innerText(), { timeout: 20_000 }).toContain('model: Echoed for the terminal.');
    expect(await page.getByRole('list', { name: 'transcript' }).innerText()).toContain('tool result: asked elsewhere');
    await page.getByRole('button', { name: 'panel chat' }).click();
  });

  it('cancels a running request from the page, and says how it ended', async () => {
    const { page } = s;
    mock.enqueue({ events: [...textEvents('this never ends', { pieces: 3 }).slice(0, 2), { stall: true }] });
    await page.getByLabel('Your request').fill('Say something long.');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => page.getByLabel('the answer as it streams').innerText(), { timeout: 20_000 }).toBe('this ');
    expect(await page.getByRole('button', { name: 'Send' }).isDisabled()).toBe(true);
    await page.getByRole('button', { name: 'Cancel the request' }).click();
    await expect.poll(() => page.getByRole('alert').innerText(), { timeout: 20_000 }).toMatch(/^cancelled: .+/);
    expect(await page.getByRole('button', { name: 'Send' }).isDisabled()).toBe(false);
  });

  it('shows the model\'s reasoning apart from its answer, and deletes a session after a confirmation', async () => {
    const { page } = s;
    await page.getByLabel('Title (optional)').fill('to delete');
    await page.getByRole('button', { name: 'New session' }).click();
    await page.getByRole('heading', { name: /^to delete/ }).waitFor();
    mock.enqueue({ events: textEvents('Short answer.', { reasoning: 'Think first, then answer.' }) });
    await page.getByLabel('Your request').fill('Think, then answer.');
    await page.getByRole('button', { name: 'Send' }).click();
    const transcript = page.getByRole('list', { name: 'transcript' });
    await expect.poll(() => transcript.innerText(), { timeout: 20_000 }).toContain('model: Short answer.');
    expect(await transcript.innerText()).toContain('reasoning: Think first, then answer.');
    expect(await transcript.locator('li.msg-reasoning').count()).toBe(1);
    const { sessions } = await s.client.call('sessions.list');
    const id = sessions.find((x) => x.title === 'to delete')?.id ?? '';

    await page.getByRole('button', { name: 'Delete this session…' }).click();
    await page.getByRole('group', { name: 'confirm deleting the session' }).getByRole('button', { name: 'Yes, delete it' }).click();
    await page.getByText('Pick or start a session.').waitFor();
    expect(await page.getByRole('button', { name: 'to delete' }).count()).toBe(0);
    await expect(s.client.call('sessions.get', { id })).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' });
    await s.events.waitFor((e) => e.type === 'session.deleted' && e.sessionId === id);
  });
});
