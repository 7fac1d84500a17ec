import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MockDeepSeek, textEvents, toolCallEvents } from '../../fixtures/model/mock-deepseek.mjs';
import { findChromium } from '../helpers/browser.js';
import { activate } from '../helpers/services.js';
import { openPanelSession, type PanelSession } from '../helpers/ui.js';
import { daemonEnv, repoRoot } from '../helpers/wispd.js';

/**
 * Issue 33 (MED 3): what a human sees in the web panel when a server's or a model's text
 * holds code points a page would hide or act on: fifty Unicode tag characters spelling a
 * secret after "See you at 5", bidi overrides that reorder what is read, ESC and CR. Each is
 * measured as the page renders it (innerText, the text a human is shown), in Debian's
 * Chromium against a real daemon, the hostile stdio fixture (forged-title), real wispctl
 * callers and the mock DeepSeek: nothing hidden reaches the screen, each is shown as the
 * escape wispctl shows, and the approval card (and its copy in the chat) says the arguments
 * hold hidden or direction-changing characters.
 */

const chromiumPath = findChromium();
const hostileServer = path.join(repoRoot, 'fixtures', 'servers', 'hostile-server.mjs');

/** What the hidden payload spells: 50 ASCII characters, each sent as its invisible tag twin (U+E0000 + code). */
const SECRET = 'AKIAIOSFODNN7EXAMPLE:wJalrXUtnFEMI/K7MDENG/bPxRfiC';
const TAGS = Array.from(SECRET, (ch) => String.fromCodePoint(0xe0000 + (ch.codePointAt(0) ?? 0))).join('');
/** RLO ... PDF: "invoice_\u202Efdp.exe\u202C" reads as "invoice_exe.pdf". */
const BIDI_FILE = 'invoice_\u202Efdp.exe\u202C';

/** How JSON escapes a tag character (a surrogate pair), as wispctl --json and the panel show it. */
const tagEscapes = (text: string) => Array.from(text, (ch) => `\\udb40\\udc${(ch.codePointAt(0) ?? 0).toString(16).padStart(2, '0')}`).join('');
/** Every code point wispctl escapes (controls, format characters, separators, lone surrogates, default-ignorables). */
const UNSEEN = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]/u;
/** The unseen code points of a text, as U+XXXX, LF and TAB aside (innerText's own line breaks). */
const unseen = (text: string) => Array.from(text).filter((ch) => ch !== '\n' && ch !== '\t' && UNSEEN.test(ch)).map((ch) => `U+${(ch.codePointAt(0) ?? 0).toString(16)}`);

const WARNING_TAGS_AND_BIDI = `WARNING: the arguments hold 50 invisible or control characters (Unicode tag characters spelling ${JSON.stringify(SECRET)}) and 2 bidirectional control characters (they can reorder how the text reads). Each is shown above as an escape (\\uXXXX); the server receives them as they are.`;

/** What a human sees of the whole page: its rendered text, and every attribute read aloud or shown on hover. */
async function everythingShown(page: Page): Promise<string> {
  return page.evaluate<string>("[document.body.innerText, document.title, ...[...document.querySelectorAll('[aria-label], [title], [alt], [placeholder]')].flatMap((el) => ['aria-label', 'title', 'alt', 'placeholder'].map((a) => el.getAttribute(a) ?? ''))].join('\\n')");
}

describe.skipIf(chromiumPath === undefined)('wispctl ui: hidden and direction-changing characters are shown, never hidden', { timeout: 90_000 }, () => {
  const mock = new MockDeepSeek();
  let s: PanelSession;
  let echoName = '';

  beforeAll(async () => {
    const url = await mock.start();
    s = await openPanelSession(chromiumPath ?? '', {
      env: daemonEnv({ DEEPSEEK_API_KEY: 'sk-panel-hidden' }),
      before: async (client) => {
        await client.call('model.setSettings', { baseUrl: url, maxRetries: 0 });
        await client.call('services.register', { name: 'forged', command: process.execPath, args: [hostileServer, 'forged-title'] });
        await activate(client, 'forged');
        echoName = (await client.call('tools.list')).tools.find((t) => t.name === 'echo')?.modelName ?? '';
      },
    });
  }, 60_000);

  afterAll(async () => {
    await s.close();
    await mock.stop();
  });

  it('the approval card shows the arguments\' tag characters and bidi overrides as escapes, with a warning, as wispctl does', async () => {
    const { page } = s;
    await page.getByRole('link', { name: /Approvals/ }).click();
    const args = { text: `See you at 5${TAGS}`, file: BIDI_FILE };
    const caller = s.wispctl(['mcp', 'call', 'forged', 'echo', JSON.stringify(args)]);
    const card = page.locator('article.card.pending', { hasText: 'See you at 5' });
    await card.getByRole('button', { name: 'Approve: Run echo (service forged)?' }).waitFor({ timeout: 20_000 });

    const seen = await card.innerText();
    expect(unseen(seen)).toEqual([]);
    expect(await card.getByLabel('arguments', { exact: true }).innerText()).toBe(`{\n  "text": "See you at 5${tagEscapes(SECRET)}",\n  "file": "invoice_\\u202efdp.exe\\u202c"\n}`);
    expect(await card.getByRole('note', { name: 'hidden characters in the arguments' }).innerText()).toBe(WARNING_TAGS_AND_BIDI);
    expect(seen).toContain('Run echo (service forged)?');
    await s.shot('approvals-hidden-text');

    // wispctl shows the same escapes for the same approval.
    const listed = await s.wispctl(['approvals']);
    expect(listed.stdout).toContain(`"text":"See you at 5${tagEscapes(SECRET)}"`);
    expect(listed.stdout).toContain('"file":"invoice_\\u202efdp.exe\\u202c"');

    await card.getByRole('button', { name: /^Deny/ }).click();
    expect((await caller).stderr).toContain('APPROVAL_DENIED');
  });

  it('the server\'s claims and the daemon\'s warnings on a card are escaped too; arguments without hidden characters have no warning', async () => {
    const { page } = s;
    const caller = s.wispctl(['mcp', 'call', 'forged', 'delete_all', JSON.stringify({ path: '/tmp/plain' })]);
    const card = page.locator('article.card.pending', { hasText: '/tmp/plain' });
    await card.getByRole('button', { name: 'Approve: Run delete_all (service forged)?' }).waitFor({ timeout: 20_000 });
    expect(unseen(await card.innerText())).toEqual([]);
    const claims = await card.getByRole('group', { name: 'from the server, not verified' }).innerText();
    expect(claims).toContain('Delete everything\\r\\x1b[2K  tool:       read_file (Read a file)');
    expect(claims).toContain('Read\\x1b[1A\\x1b[2K file');
    expect(await card.getByRole('group', { name: 'warnings about the tool\'s definition' }).innerText()).toContain('bidirectional control characters');
    expect(await card.getByRole('note', { name: 'hidden characters in the arguments' }).count()).toBe(0);
    await card.getByRole('button', { name: /^Deny/ }).click();
    expect((await caller).stderr).toContain('APPROVAL_DENIED');
  });

  it('the chat\'s copy of the card shows them and warns the same way, and so does the transcript', async () => {
    const { page } = s;
    await page.getByRole('link', { name: 'Chat' }).click();
    await page.getByLabel('Title (optional)').fill(`hidden\u202Etxet`);
    await page.getByRole('button', { name: 'New session' }).click();
    await page.getByRole('heading', { name: /^hidden\\u202etxet/ }).waitFor();
    const args = { text: `See you at 5${TAGS}`, file: BIDI_FILE };
    mock.enqueue({ events: toolCallEvents([{ id: 'h1', name: echoName, arguments: JSON.stringify(args) }]) }, { events: textEvents(`Sent.\u202E\u200B${TAGS}`) });
    await page.getByLabel('Your request').fill('Send it.');
    await page.getByRole('button', { name: 'Send' }).click();

    const card = page.locator('section.live article.card', { hasText: 'See you at 5' });
    await card.getByRole('button', { name: 'Approve: Run echo (service forged)?' }).waitFor({ timeout: 20_000 });
    expect(unseen(await card.innerText())).toEqual([]);
    expect(await card.getByLabel('arguments', { exact: true }).innerText()).toContain(`"See you at 5${tagEscapes(SECRET)}"`);
    expect(await card.getByRole('note', { name: 'hidden characters in the arguments' }).innerText()).toBe(WARNING_TAGS_AND_BIDI);
    await s.shot('chat-hidden-text');
    await card.getByRole('button', { name: /^Approve/ }).click();

    const transcript = page.getByRole('list', { name: 'transcript' });
    await expect.poll(() => transcript.innerText(), { timeout: 20_000 }).toContain('model: Sent.\\u202e\\u200b\\u{e0041}');
    const text = await transcript.innerText();
    expect(unseen(text)).toEqual([]);
    expect(text).toContain('\\u{e0041}\\u{e004b}\\u{e0049}\\u{e0041}');
    expect(text).toContain('invoice_\\u202efdp.exe\\u202c');
  });

  it('no page shows a hidden code point: services, tools, stderr, approvals, installs, sources, chat, events', async () => {
    const { page } = s;
    const pages: Record<string, string> = {};
    await page.getByRole('link', { name: 'Services' }).click();
    await page.locator('tr[data-service="forged"]').getByRole('button', { name: 'forged' }).click();
    await page.locator('details.tool[data-tool="delete_all"] summary').click();
    await page.getByRole('button', { name: 'Show the stderr tail' }).click();
    await page.locator('pre.logs', { hasText: 'line two' }).waitFor();
    pages.services = await everythingShown(page);
    // The server's name, its stderr and its tool's description, each escaped where it is shown.
    expect(pages.services).toContain('forged\\x1b[2J\\u202eserver');
    expect(pages.services).toContain('\\u202eevil\\u202c');
    expect(pages.services).toContain('Reads a file.\\u202e elif daer \\u202c\\u200bzero\\u2060width\\ufeff\\x9b2K\\x7f');
    for (const [name, title] of [['approvals', 'Approvals'], ['installs', 'Installs'], ['sources', 'Sources'], ['chat', 'Chat'], ['events', 'Events']] as const) {
      await page.getByRole('link', { name: new RegExp(`^${title}`) }).click();
      await page.getByRole('heading', { name: title, exact: true }).waitFor();
      if (name === 'chat') await page.getByRole('button', { name: /^hidden/ }).click();
      if (name === 'chat') await page.getByRole('list', { name: 'transcript' }).waitFor();
      pages[name] = await everythingShown(page);
    }
    expect(pages.events).toContain(tagEscapes(SECRET));
    expect(pages.chat).toContain('hidden\\u202etxet');
    for (const [name, shown] of Object.entries(pages)) expect(unseen(shown), name).toEqual([]);
    expect(s.dialogs).toEqual([]);
  });
});
