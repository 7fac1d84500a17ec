import { spawn } from 'node:child_process';

/**
 * The program that opens a URL in the user's browser, or null where there is no desktop:
 * `open` on macOS; `xdg-open` elsewhere, only when a display server is named (on a server
 * over ssh it would start a text browser or fail).
 */
export function browserOpener(platform: NodeJS.Platform, env: NodeJS.ProcessEnv): string | null {
  if (platform === 'darwin') return 'open';
  if (platform === 'win32') return null;
  return (env.DISPLAY ?? '') !== '' || (env.WAYLAND_DISPLAY ?? '') !== '' ? 'xdg-open' : null;
}

/**
 * Opens the URL in the browser: the program runs directly (no shell ever parses the URL),
 * detached in its own process group, so the Ctrl-C that stops the panel does not reach the
 * user's browser. Resolves false when it could not be started.
 */
export function openBrowser(url: string, platform: NodeJS.Platform = process.platform, env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  const opener = browserOpener(platform, env);
  if (opener === null) return Promise.resolve(false);
  return new Promise((resolve) => {
    const child = spawn(opener, [url], { shell: false, detached: true, stdio: 'ignore' });
    child.once('error', () => resolve(false));
    child.once('spawn', () => {
      child.unref();
      resolve(true);
    });
  });
}
