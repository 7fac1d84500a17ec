import { execFileSync } from 'node:child_process';
import { needs } from './skips.js';

/**
 * A real terminal for CLI tests: a private tmux server. A terminal gives no event when text
 * appears, so `waitFor` polls the screen until the text is there (or the deadline passes).
 */
export class Terminal {
  private readonly socket = `wisp-test-${process.pid}-${Math.random().toString(36).slice(2)}`;

  constructor(command: string[], env: Record<string, string>, size = { width: 160, height: 50 }) {
    const envArgs = Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
    this.tmux(['new-session', '-d', '-s', 'main', '-x', String(size.width), '-y', String(size.height), ...envArgs, ...command]);
    this.tmux(['set-option', '-t', 'main', 'remain-on-exit', 'on']);
  }

  static available(): boolean {
    try {
      execFileSync('tmux', ['-V'], { stdio: 'ignore' });
      return true;
    } catch {
      return needs(false, 'tmux is not installed (apt-get install tmux): the tests on a real terminal');
    }
  }

  screen(): string {
    return this.tmux(['capture-pane', '-p', '-t', 'main', '-S', '-200']);
  }

  type(text: string): void {
    this.tmux(['send-keys', '-t', 'main', '-l', text]);
  }

  /** Presses keys (tmux names: Enter, C-c), several in one send-keys: one write to the program. */
  press(...keys: string[]): void {
    this.tmux(['send-keys', '-t', 'main', ...keys]);
  }

  async waitFor(pattern: RegExp, timeoutMs = 15_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const screen = this.screen();
      if (pattern.test(screen)) return screen;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${String(pattern)}; the screen shows:\n${screen}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /**
   * Waits until the program in the terminal has exited; resolves with its exit status, or
   * null where tmux did not record one (it sometimes does not).
   */
  async exited(timeoutMs = 15_000): Promise<number | null> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const [dead, status] = this.tmux(['display-message', '-p', '-t', 'main', '#{pane_dead} #{pane_dead_status}']).trim().split(' ');
      if (dead === '1') return status === undefined || status === '' ? null : Number(status);
      if (Date.now() > deadline) throw new Error(`the program did not exit; the screen shows:\n${this.screen()}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  close(): void {
    try {
      this.tmux(['kill-server']);
    } catch {
      // already gone
    }
  }

  private tmux(args: string[]): string {
    return execFileSync('tmux', ['-L', this.socket, ...args], { encoding: 'utf8' });
  }
}
