import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import type { WispClient } from '../../src/control/client.js';
import { startPanelProcess, type PanelProcess } from './browser.js';
import { EventLog } from './services.js';
import { killLeftovers, repoRoot, runWispctl, startWispd, tempDir, type RunningDaemon } from './wispd.js';

/** Where every page's screenshot goes. */
export const shotsDir = path.join(repoRoot, 'test-results', 'ui');

/**
 * One real daemon, one `wispctl ui --no-open` connected to it, and one Chromium page signed
 * in through the panel's one-time URL: what each ui-*.test.ts file starts in beforeAll.
 * Dialogs (alert, confirm) are dismissed and recorded: a page that opens one failed.
 */
export interface PanelSession {
  readonly home: { path: string; remove: () => void };
  readonly daemon: RunningDaemon;
  readonly client: WispClient;
  readonly events: EventLog;
  readonly panel: PanelProcess;
  readonly browser: Browser;
  readonly context: BrowserContext;
  readonly page: Page;
  readonly dialogs: string[];
  /** A wispctl command against this daemon, in its own process. */
  wispctl(args: string[]): ReturnType<typeof runWispctl>;
  shot(name: string): Promise<void>;
  close(): Promise<void>;
}

export async function openPanelSession(chromiumPath: string, options: { env?: NodeJS.ProcessEnv; before?: (client: WispClient) => Promise<void> } = {}): Promise<PanelSession> {
  mkdirSync(shotsDir, { recursive: true });
  const home = tempDir();
  const daemon = await startWispd(home.path, options.env !== undefined ? { env: options.env } : {});
  const client = await daemon.connect();
  await options.before?.(client);
  const events = await EventLog.follow(client);
  const panel = await startPanelProcess(daemon.socket);
  const browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox'] });
  const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  const dialogs: string[] = [];
  context.on('page', (p) => p.on('dialog', (d) => void d.dismiss().then(() => dialogs.push(d.message()))));
  const page = await context.newPage();
  await page.goto(panel.url.href);
  await page.getByRole('heading', { name: 'Services' }).waitFor();
  return {
    home,
    daemon,
    client,
    events,
    panel,
    browser,
    context,
    page,
    dialogs,
    wispctl: (args) => runWispctl(['--socket', daemon.socket, ...args]),
    shot: async (name) => {
      await page.screenshot({ path: path.join(shotsDir, `${name}.png`), fullPage: true });
    },
    close: async () => {
      await browser.close();
      panel.child.kill('SIGKILL');
      await client.call('daemon.shutdown').catch(() => undefined);
      await client.close();
      await daemon.exited;
      killLeftovers();
      home.remove();
    },
  };
}
