import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpServer, type HttpFixture } from '../../fixtures/servers/http-server.mjs';
import { findChromium } from '../helpers/browser.js';
import { pidOf, registerScenario, scenarioServer } from '../helpers/services.js';
import { openPanelSession, type PanelSession } from '../helpers/ui.js';
import { environOf, onLinux } from '../helpers/wispd.js';

/**
 * Issue 15, second slice: the rest of the Services page in a real browser against a real
 * daemon (started without a D-Bus session, so its keychain is unavailable), a real stdio
 * server and a real remote (streamable HTTP) server that wants a bearer token.
 */

const chromiumPath = findChromium();
const TOKEN = 'tok-remote-5517';
const SECRET = 'value-never-shown-8823';

describe.skipIf(chromiumPath === undefined)('wispctl ui: Services, adding remote servers, editing, secrets', { timeout: 60_000 }, () => {
  let s: PanelSession;
  let remote: HttpFixture;
  let moved: HttpFixture;

  beforeAll(async () => {
    remote = await startHttpServer({ token: TOKEN });
    moved = await startHttpServer({ token: TOKEN });
    s = await openPanelSession(chromiumPath ?? '');
  }, 60_000);

  afterAll(async () => {
    await s.close();
    await remote.close();
    await moved.close();
  });

  /** Everything the page holds as text, inputs' values included: a secret must be in none of it. */
  const pageText = () => s.page.evaluate<string>("document.body.innerText + [...document.querySelectorAll('input')].map((i) => i.value).join(' ')");
  const stateOf = (name: string) => s.page.locator(`tr[data-service="${name}"] [data-cell="state"]`).textContent();

  it('adds a remote server: no keychain here, so its header is kept for this run only; shows what it trusts, and connects with it', async () => {
    const { page } = s;
    await page.getByRole('button', { name: 'Add a remote server' }).click();
    const form = page.getByRole('form', { name: 'Add a remote server' });
    await form.getByLabel('Name', { exact: true }).fill('remote');
    await form.getByLabel(/^URL/).fill(remote.url);
    await form.getByRole('button', { name: 'Add a header' }).click();
    await form.getByLabel('header 1 name').fill('Authorization');
    await form.getByLabel('header 1 value').fill(`Bearer ${TOKEN}`);
    expect(await form.getByLabel('the keychain', { exact: true }).isChecked()).toBe(true);
    await form.getByRole('button', { name: 'Register' }).click();
    // Registered, but this daemon has no keychain: the page says so and how to go on.
    const refused = await form.getByRole('alert').innerText();
    expect(refused).toContain('The keychain is not available here');
    expect(refused).toContain('Choose "this run only"');
    await form.getByText('remote is registered; its headers are not saved yet.').waitFor();
    await form.getByLabel(/this run only/).check();
    await s.shot('services-remote-form');
    await form.getByRole('button', { name: 'Save the headers' }).click();

    await expect.poll(() => stateOf('remote')).toBe('disabled');
    const detail = page.locator('section.detail');
    await detail.getByRole('region', { name: /^Headers/ }).getByText('Authorization (session)').waitFor();
    expect(await page.locator('tr[data-service="remote"]').innerText()).toContain('http');
    expect(await pageText()).not.toContain(TOKEN);

    await detail.getByRole('button', { name: 'Trust and activate…' }).click();
    const trust = page.getByRole('region', { name: 'Trust and activate remote' });
    const shown = await trust.innerText();
    expect(shown).toContain('remote is a remote server: the daemon will send it requests, and what it answers is untrusted.');
    expect(shown).toContain(remote.url);
    expect(shown).toContain('Authorization (session)');
    await trust.getByRole('button', { name: 'Trust and connect to remote' }).click();
    await expect.poll(() => stateOf('remote'), { timeout: 20_000 }).toBe('active');
    expect(remote.requests).toBeGreaterThan(0);
    expect(JSON.stringify(await s.client.call('services.get', { name: 'remote' }))).not.toContain(TOKEN);
  });

  it('sets a variable write-only: the keychain is unavailable, this run only works, and the value never comes back', async () => {
    const { page } = s;
    await registerScenario(s.client, 'vars', ['--print-env']);
    await page.locator('tr[data-service="vars"]').getByRole('button', { name: 'vars' }).click();
    const secrets = page.getByRole('region', { name: /^Variables/ });
    await secrets.getByText('no variables').waitFor();
    await secrets.getByLabel('Variable name').fill('API_TOKEN');
    await secrets.getByLabel('Value (not shown)').fill(SECRET);
    expect(await secrets.getByLabel('Value (not shown)').getAttribute('type')).toBe('password');
    await secrets.getByRole('button', { name: 'Save the variable' }).click();
    const refused = await secrets.getByRole('alert').innerText();
    expect(refused).toContain('The keychain is not available here');
    expect(refused).toContain('KEYCHAIN_UNAVAILABLE');
    expect(refused).toContain('Choose "this run only"');
    expect((await s.client.call('services.get', { name: 'vars' })).service.env).toEqual([]);

    await secrets.getByLabel(/this run only/).check();
    await secrets.getByRole('button', { name: 'Save the variable' }).click();
    await secrets.getByRole('status').getByText('vars: API_TOKEN saved (session only); the service is disabled until activated again').waitFor();
    await secrets.getByText('API_TOKEN (session)').waitFor();
    expect(await secrets.getByLabel('Value (not shown)').inputValue()).toBe('');
    expect(await secrets.getByLabel('Variable name').inputValue()).toBe('');
    expect(await pageText()).not.toContain(SECRET);
    await s.shot('services-variables');

    await page.locator('section.detail').getByRole('button', { name: 'Trust and activate…' }).click();
    expect(await page.getByRole('region', { name: 'Trust and activate vars' }).innerText()).toContain('the minimal inherited set, plus API_TOKEN (session)');
    await page.getByRole('button', { name: `Trust and start ${process.execPath}` }).click();
    await expect.poll(() => stateOf('vars'), { timeout: 20_000 }).toBe('active');
    const { service } = await s.client.call('services.get', { name: 'vars' });
    if (onLinux) expect(environOf(pidOf(service))).toContain(`API_TOKEN=${SECRET}`);
    expect(JSON.stringify(service)).not.toContain(SECRET);
    expect(s.panel.stderr()).not.toContain(SECRET);
  });

  it('edits a service: it stops, and its saved values go to the edited program only once allowed', async () => {
    const { page } = s;
    const detail = page.locator('section.detail');
    await detail.getByRole('button', { name: 'Edit…' }).click();
    const form = page.getByRole('form', { name: 'Edit vars' });
    await form.getByRole('button', { name: 'Add an argument' }).click();
    await form.getByLabel('argument 3', { exact: true }).fill('--tools');
    await form.getByRole('button', { name: 'Add an argument' }).click();
    await form.getByLabel('argument 4', { exact: true }).fill('1');
    await s.shot('services-edit');
    await form.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => stateOf('vars'), { timeout: 20_000 }).toBe('disabled');
    expect((await s.client.call('services.get', { name: 'vars' })).service.args).toEqual([scenarioServer, '--print-env', '--tools', '1']);

    await detail.getByRole('button', { name: 'Trust and activate…' }).click();
    const trust = page.getByRole('region', { name: 'Trust and activate vars' });
    expect(await trust.innerText()).toContain('configuration version 3');
    await trust.getByRole('button', { name: `Trust and start ${process.execPath}` }).click();
    const rebind = trust.getByRole('group', { name: 'carry the saved values over' });
    await rebind.waitFor();
    expect(await trust.getByRole('alert').first().innerText()).toContain('SECRET_BINDING_CHANGED');
    expect(await rebind.innerText()).toContain(`API_TOKEN will be given to: ${process.execPath} ${scenarioServer} --print-env --tools 1`);
    await rebind.getByRole('button', { name: 'Let the saved values go to this program, and start it' }).click();
    await expect.poll(() => stateOf('vars'), { timeout: 20_000 }).toBe('active');
    expect(await page.locator('tr[data-service="vars"] [data-cell="tools"]').textContent()).toBe('4');
    expect(s.dialogs).toEqual([]);
  });

  it('edits a remote server\'s URL: a bad one is refused with nothing changed; a new one disables it, and its header goes there only once allowed', async () => {
    const { page } = s;
    await page.locator('tr[data-service="remote"]').getByRole('button', { name: 'remote' }).click();
    const detail = page.locator('section.detail');
    await detail.getByRole('heading', { name: 'remote' }).waitFor();
    const before = (await s.client.call('services.get', { name: 'remote' })).service;
    expect(before.connection.status).toBe('active');
    await detail.getByRole('button', { name: 'Edit…' }).click();
    const form = page.getByRole('form', { name: 'Edit remote' });
    const note = await form.innerText();
    expect(note).toContain('A new URL is a new server: its tools are reviewed afresh.');
    expect(note).toContain('The saved values of its headers (Authorization) are not sent to the new URL until you let them');
    await form.getByLabel(/^URL/).fill('ftp://example.com/mcp');
    await form.getByRole('button', { name: 'Save' }).click();
    expect(await form.getByRole('alert').innerText()).toContain('must be an http:// or https:// URL without spaces');
    expect((await s.client.call('services.get', { name: 'remote' })).service).toMatchObject({ url: remote.url, configVersion: before.configVersion, connection: { status: 'active' } });

    await form.getByLabel(/^URL/).fill(moved.url);
    await s.shot('services-edit-url');
    await form.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => stateOf('remote'), { timeout: 20_000 }).toBe('disabled');
    await detail.getByText(moved.url).waitFor();
    expect((await s.client.call('services.get', { name: 'remote' })).service.configVersion).toBe(before.configVersion + 1);

    const oldRequests = remote.requests;
    await detail.getByRole('button', { name: 'Trust and activate…' }).click();
    const trust = page.getByRole('region', { name: 'Trust and activate remote' });
    expect(await trust.innerText()).toContain(moved.url);
    await trust.getByRole('button', { name: 'Trust and connect to remote' }).click();
    const rebind = trust.getByRole('group', { name: 'carry the saved values over' });
    await rebind.waitFor();
    expect(await trust.getByRole('alert').first().innerText()).toContain('SECRET_BINDING_CHANGED');
    expect(moved.requests).toBe(0);
    expect(await rebind.innerText()).toContain(`Authorization will be sent to: ${moved.url}`);
    await rebind.getByRole('button', { name: 'Send the saved header values to this URL, and connect' }).click();
    await expect.poll(() => stateOf('remote'), { timeout: 20_000 }).toBe('active');
    expect(moved.requests).toBeGreaterThan(0);
    expect(remote.requests).toBe(oldRequests);
    expect(await pageText()).not.toContain(TOKEN);
    expect(s.dialogs).toEqual([]);
  });

  it('replaces a remote server\'s headers from its edit form: new names, values typed again, bound to its URL', async () => {
    const { page } = s;
    const detail = page.locator('section.detail');
    await detail.getByRole('button', { name: 'Edit…' }).click();
    const form = page.getByRole('form', { name: 'Edit remote' });
    await form.getByRole('button', { name: 'Replace its headers (names and values)…' }).click();
    expect(await form.getByLabel('header 1 name').inputValue()).toBe('Authorization');
    expect(await form.getByLabel('header 1 value').inputValue()).toBe('');
    await form.getByRole('button', { name: 'Add a header' }).click();
    await form.getByLabel('header 2 name').fill('X-Team');
    await form.getByLabel('header 2 value').fill('blue');
    await form.getByRole('button', { name: 'Save' }).click();
    expect(await form.getByRole('alert').innerText()).toContain('enter the value of Authorization');
    await form.getByLabel('header 1 value').fill(`Bearer ${TOKEN}`);
    await form.getByLabel(/this run only/).check();
    await form.getByRole('button', { name: 'Save' }).click();
    await detail.getByRole('region', { name: /^Headers/ }).getByText('X-Team (session)').waitFor();
    expect((await s.client.call('services.get', { name: 'remote' })).service.headers).toEqual([
      { name: 'Authorization', storage: 'session' },
      { name: 'X-Team', storage: 'session' },
    ]);
    await expect.poll(() => stateOf('remote'), { timeout: 20_000 }).toBe('disabled');
    // Set for this URL: they go to it without a carry-over.
    await detail.getByRole('button', { name: 'Trust and activate…' }).click();
    await page.getByRole('region', { name: 'Trust and activate remote' }).getByRole('button', { name: 'Trust and connect to remote' }).click();
    await expect.poll(() => stateOf('remote'), { timeout: 20_000 }).toBe('active');
    expect(await pageText()).not.toContain(TOKEN);
    expect(s.dialogs).toEqual([]);
  });
});
