import type { WispClient } from '../control/client.js';
import { WispError } from '../core/index.js';

/** A word as the shell reads it back: as is when plain, else single-quoted. */
function shellWord(word: string): string {
  return /^[A-Za-z0-9_./@:=+-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * The command line that would keep the value for this daemon run only, as the user types it;
 * `tail` goes after --session (a server's own `-- COMMAND ARGS`, which must stay last).
 */
export function sessionCommand(words: readonly string[], tail: readonly string[] = []): string {
  return ['wispctl', ...words.map(shellWord), '--session', ...tail.map(shellWord)].join(' ');
}

/**
 * Runs a write that may need the keychain. The daemon's KEYCHAIN_UNAVAILABLE cannot know
 * which command asked, so this command adds its own way to keep the value for this run only.
 */
export async function withSessionAdvice<T>(work: () => Promise<T>, words: readonly string[], tail: readonly string[] = []): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof WispError && error.code === 'KEYCHAIN_UNAVAILABLE') {
      throw new WispError(error.code, `${error.message} For this daemon run only: ${sessionCommand(words, tail)}`, error.details);
    }
    throw error;
  }
}

/** An empty secret is refused here, before anything is sent: it would store an empty value. */
export function nonEmpty(value: string, what: string): string {
  if (value === '') throw new WispError('INVALID_PARAMS', `${what} is empty: nothing was sent`);
  return value;
}

/**
 * Before asking for a value meant for the keychain: the daemon checks it answers, so nobody
 * types a secret only to hear it cannot be kept. Session storage needs no keychain.
 */
export async function keychainFirst(client: WispClient, session: boolean, words: readonly string[], tail: readonly string[] = []): Promise<void> {
  if (session) return;
  const { available, reason } = await client.call('services.checkKeychain');
  if (available) return;
  throw new WispError(
    'KEYCHAIN_UNAVAILABLE',
    `the OS keychain is unavailable (${reason ?? 'unknown'}), so nothing was asked and nothing written. Unlock or start it, or keep the value for this daemon run only: ${sessionCommand(words, tail)}`,
    { reason },
  );
}
