/**
 * wispctl's stdin, opened only by the commands that read it. `process.stdin` is made on
 * first use, and making it costs a command a few milliseconds (a stream over the
 * terminal, pipe or file, and the modules behind it); most commands never read stdin.
 */
let opened = false;

/** process.stdin, for a command that reads it (wispctl lets it go when the command ends). */
export function stdin(): NodeJS.ReadStream {
  opened = true;
  return process.stdin;
}

/**
 * Whether stdin is a terminal (what process.stdin.isTTY says), without opening it as a
 * stream. node:tty is loaded here, when a command asks, not by every command.
 */
export function stdinIsTerminal(): boolean {
  return process.getBuiltinModule('node:tty').isatty(0);
}

/** Lets stdin go if a command opened it: a terminal's stdin that a prompt used would otherwise keep the process alive. */
export function releaseStdin(): void {
  if (!opened) return;
  process.stdin.pause();
  (process.stdin as { unref?: () => void }).unref?.();
}
