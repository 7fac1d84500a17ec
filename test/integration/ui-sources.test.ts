import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findChromium } from '../helpers/browser.js';
import { scenarioServer } from '../helpers/services.js';
import { openPanelSession, type PanelSession } from '../helpers/ui.js';
import { tempDir } from '../helpers/wispd.js';

/**
 * Issue 15, second slice: the Sources page against a real daemon whose config dir
 * (<data>/config) and a project directory get real files, reloaded and added from the page.
 */

const chromiumPath = findChromium();
const HOSTILE_NAME = '<img src=x onerror=alert(1)>';

function writeJson(file: string, value: unknown): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify(value, null, 2));
}
const stdio = (flags: string[] = [], extra: Record<string, unknown> = {}) => ({ command: process.execPath, args: [scenarioServer, ...flags], ...extra });

describe.skipIf(chromiumPath === undefined)('wispctl ui: Sources', { timeout: 60_000 }, () => {
  let s: PanelSession;
  const project = tempDir();
  let settingsFile: string;
  const projectFile = path.join(project.path, '.mcp.json');

  beforeAll(async () => {
    s = await openPanelSession(chromiumPath ?? '');
    settingsFile = path.join(s.home.path, 'config', 'settings.json');
  }, 60_000);

  afterAll(async () => {
    await s.close();
    project.remove();
  });

  const cell = (name: string, key: string) => s.page.locator(`table.sources tr[data-entry="${name}"] [data-cell="${key}"]`);

  it('reloads the config files and shows each entry with its origin and warnings, and a hostile name as text', async () => {
    const { page } = s;
    await page.getByRole('link', { name: 'Sources' }).click();
    await page.getByText('no entries').waitFor();
    writeJson(settingsFile, { config: { mcpServers: { shared: stdio(['--tools', '1']), warned: stdio([], { env: { TOKEN: '${NOT_SET_ANYWHERE}' } }), [HOSTILE_NAME]: stdio() } } });
    await page.getByRole('button', { name: 'Reload the sources' }).click();

    await expect.poll(() => cell('shared', 'from').textContent()).toBe(`global ${settingsFile}`);
    expect(await cell('shared', 'action').textContent()).toBe('added');
    expect(await cell('shared', 'overrides').textContent()).toBe('-');
    expect(await cell('warned', 'warnings').innerText()).toContain('${NOT_SET_ANYWHERE} is not set');
    const notes = await page.getByRole('list', { name: 'skipped, unusable and removed' }).innerText();
    expect(notes).toContain(`skipped ${HOSTILE_NAME} (global ${settingsFile}): invalid`);
    expect(await page.evaluate<number>("document.querySelectorAll('img, script:not([src])').length")).toBe(0);
    expect(s.dialogs).toEqual([]);
    expect((await s.client.call('services.get', { name: 'shared' })).service).toMatchObject({ enabled: false, origin: { kind: 'source', source: 'global' } });
  });

  it('adds a project whose entry overrides the global one, says so, and removes it again', async () => {
    const { page } = s;
    writeJson(projectFile, { mcpServers: { shared: stdio(['--tools', '3']) } });
    const form = page.getByRole('form', { name: 'Add a project' });
    await form.getByLabel(/^Project directory/).fill('relative/dir');
    await form.getByRole('button', { name: 'Add the project' }).click();
    expect(await page.getByRole('alert').innerText()).toBe('the directory must be an absolute path (INVALID_PARAMS)');
    await form.getByLabel(/^Project directory/).fill(project.path);
    await form.getByLabel(/^Project directory/).press('Enter');

    await expect.poll(() => cell('shared', 'from').textContent()).toBe(`project ${projectFile}`);
    expect(await cell('shared', 'overrides').textContent()).toBe(`global ${settingsFile}`);
    expect(await cell('shared', 'action').textContent()).toBe('updated');
    expect(await page.getByRole('list', { name: 'skipped, unusable and removed' }).innerText()).toContain(`skipped shared (global ${settingsFile}): replaced whole by the entry of the same name in ${projectFile}`);
    expect(await page.locator('ul.projects').innerText()).toContain(project.path);
    expect(await form.getByLabel(/^Project directory/).inputValue()).toBe('');
    await s.shot('sources');
    expect((await s.client.call('services.get', { name: 'shared' })).service.args).toEqual([scenarioServer, '--tools', '3']);

    await page.getByRole('button', { name: `Remove the project ${project.path}…` }).click();
    await page.getByRole('group', { name: `confirm removing ${project.path}` }).getByRole('button', { name: 'Yes, remove' }).click();
    await expect.poll(() => cell('shared', 'from').textContent()).toBe(`global ${settingsFile}`);
    await page.getByText('(none: add one below)').waitFor();
    expect((await s.client.call('sources.list')).projects).toEqual([]);
  });

  it('imports a pasted config file once: entries registered disabled, the bad one skipped with why, values kept write-only', async () => {
    const { page } = s;
    const canary = 'import-canary-5521';
    const text = JSON.stringify({ mcpServers: { imported: stdio([], { env: { API_TOKEN: canary } }), broken: { args: ['no command'] } } });
    const form = page.getByRole('form', { name: 'Import a config file once' });
    await form.getByLabel("The file's text").fill(text);
    await form.getByLabel('this run only (memory, gone when the daemon stops)').check();
    await form.getByRole('button', { name: 'Import' }).click();
    const outcome = form.getByRole('status', { name: 'the import' });
    await outcome.waitFor({ timeout: 20_000 });
    const shown = await outcome.innerText();
    expect(shown).toContain('Imported, disabled until you trust each: imported');
    expect(shown).toMatch(/broken: \S/);
    expect(shown).toContain('The local ones run sandboxed: no network, their working directory only, nothing else of yours');
    expect(await form.getByLabel("The file's text").inputValue()).toBe('');
    expect(await page.content()).not.toContain(canary);
    const { service } = await s.client.call('services.get', { name: 'imported' });
    expect(service).toMatchObject({ enabled: false, origin: { kind: 'import' }, env: [{ name: 'API_TOKEN', storage: 'session' }] });
    await s.shot('sources-import');
  });

  it('the trust view names every ${VAR} a launch reads: field, variable, public or secret, and the file', async () => {
    const { page } = s;
    writeJson(settingsFile, { config: { mcpServers: { templated: stdio([], { env: { HOME_DIR: '${HOME}', API: 'Bearer ${SOME_TOKEN}' } }) } } });
    await page.getByRole('link', { name: 'Sources' }).click();
    await page.getByRole('button', { name: 'Reload the sources' }).click();
    await expect.poll(() => cell('templated', 'action').textContent()).toBe('added');
    await page.getByRole('link', { name: 'Services' }).click();
    await page.locator('tr[data-service="templated"]').getByRole('button', { name: 'templated' }).click();
    const detail = page.locator('section.detail');
    await detail.getByRole('button', { name: 'Trust and activate…' }).click();
    const shown = await page.getByRole('region', { name: 'Trust and activate templated' }).innerText();
    expect(shown).toContain('the minimal inherited set, plus HOME_DIR=${HOME}, API=Bearer ${SOME_TOKEN}');
    expect(shown).toContain(`2 variables of the daemon's environment at launch, as written in ${settingsFile}:`);
    expect(shown).toContain('env.HOME_DIR ← ${HOME} (public: shown as it is)');
    expect(shown).toContain('env.API ← ${SOME_TOKEN} (a secret: redacted wherever it appears)');
    await s.shot('services-trust-reads');
  });

  it('a plugin\'s service: its origin names the plugin once, and instead of a removal the daemon would refuse it says where it comes from', async () => {
    const { page } = s;
    const manifest = path.join(s.home.path, 'config', 'plugins', 'kit-folder', 'plugin.json');
    writeJson(manifest, { name: 'kit', mcpServers: { helper: stdio() } });
    writeJson(settingsFile, { enabledPlugins: ['kit'], config: { mcpServers: {} } });
    await s.client.call('services.register', { name: 'by-hand', command: process.execPath, args: [scenarioServer] });
    await page.getByRole('link', { name: 'Sources' }).click();
    await page.getByRole('button', { name: 'Reload the sources' }).click();
    await expect.poll(() => cell('kit.helper', 'action').textContent()).toBe('added');
    await page.getByRole('link', { name: 'Services' }).click();
    const row = page.locator('tr[data-service="kit.helper"]');
    // Short in the table (the file's name), whole on hover and in the detail.
    expect(await row.locator('[data-cell="origin"]').innerText()).toBe(`plugin kit: ${path.basename(manifest)}`);
    expect(await row.locator('[data-cell="origin"]').getAttribute('title')).toBe(`plugin kit: ${manifest}`);
    await row.getByRole('button', { name: 'kit.helper' }).click();
    const detail = page.locator('section.detail');
    expect(await detail.locator('dt', { hasText: /^origin$/ }).locator('xpath=following-sibling::dd').innerText()).toBe(`plugin kit: ${manifest}`);
    expect(await detail.getByRole('button', { name: 'Remove…' }).count()).toBe(0);
    expect(await detail.getByRole('button', { name: 'Edit…' }).count()).toBe(0);
    expect(await detail.locator('p[data-note="source"]').innerText()).toBe(
      `It comes from the plugin kit's manifest, ${manifest}: to change or remove it, edit that entry or disable the plugin (enabledPlugins in settings.json), then reload the sources (the Sources page, or wispctl mcp reload).`,
    );
    // A service registered by hand is still removable here.
    await page.locator('tr[data-service="by-hand"]').getByRole('button', { name: 'by-hand' }).click();
    await page.locator('section.detail').getByRole('button', { name: 'Remove…' }).waitFor();
  });
});
