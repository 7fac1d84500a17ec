import { promises as fs, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';

/** A secret to plant: long, random, and recognisable in pieces. */
export function makeCanary(label = 'CANARY'): string {
  const hex = [...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, '0')).join('');
  return `${label}-${hex}`;
}

/**
 * A canary that every encoding changes: with `/`, `+`, a space, `?`, `~` and a non-ASCII
 * letter, its percent encodings (any case, form fields) and its base64 alphabets all differ
 * from it and from each other.
 */
export function makeEncodableCanary(label = 'CANARY'): string {
  return `${makeCanary(label)}/+ é?~`;
}

export interface CanaryChannels {
  /** Socket replies a test collected (values, not text: any JSON). */
  readonly replies?: readonly unknown[];
  /** Events a test collected. */
  readonly events?: readonly unknown[];
  /** The daemon's data dir: every file under it is read (recursively). */
  readonly dataDir?: string;
  /** Files (relative to dataDir) that must be among those swept. */
  readonly expectFiles?: readonly string[];
  /** What the daemon wrote to stdout/stderr (its log). */
  readonly daemonOutput?: string;
  /** Bodies of the requests the mock model received. */
  readonly modelRequests?: readonly unknown[];
  /** Terminal output: wispctl stdout/stderr, tmux screens. */
  readonly terminal?: readonly string[];
}

/**
 * The base64 characters that depend on `bytes` alone when they sit at byte offset `shift`
 * (0, 1, 2) of a larger encoded blob: character j carries bits [6j, 6j+6) of the stream.
 * Computed here on its own (not with the daemon's code), so the sweep checks the redactor.
 */
function base64Core(bytes: Buffer, shift: number, alphabet: 'base64' | 'base64url'): string {
  const encoded = Buffer.concat([Buffer.alloc(shift), bytes]).toString(alphabet);
  return encoded.slice(Math.ceil((8 * shift) / 6), Math.floor((8 * (shift + bytes.length)) / 6));
}

/**
 * Every form a leak of `secret` could take in a text, besides its 12-character pieces: the
 * value; JSON-escaped; percent-encoded (upper-case, and as a form field), looked for in the
 * text with every `%xx` upper-cased, so lower-case and mixed-case copies count; base64 of the
 * value and of its percent encoding, standard and URL-safe, as the three cores that stay the
 * same whatever surrounds it (the value alone, inside a Basic credential `user:secret`,
 * inside any larger blob); hex of the value, lower- and upper-case. Forms shorter than 12 characters are left out: the redactor
 * promises none below that.
 */
export function leakForms(secret: string): { exact: string[]; percent: string[] } {
  const uri = encodeURIComponent(secret);
  const percent = [uri, new URLSearchParams({ q: secret }).toString().slice(2)].filter((form) => form !== secret);
  const exact = [secret, JSON.stringify(secret).slice(1, -1)];
  const hex = Buffer.from(secret, 'utf8').toString('hex');
  exact.push(hex, hex.toUpperCase());
  for (const source of new Set([secret, uri])) {
    for (const alphabet of ['base64', 'base64url'] as const) {
      for (const shift of [0, 1, 2]) exact.push(base64Core(Buffer.from(source, 'utf8'), shift, alphabet));
    }
  }
  return { exact: [...new Set(exact)].filter((form) => form === secret || form.length >= 12), percent: [...new Set(percent)] };
}

/** The first copy of `secret` in `text` in any form leakForms lists, or a 12-character piece of it; null if none. */
export function findLeak(secret: string, text: string): string | null {
  const { exact, percent } = leakForms(secret);
  for (const form of exact) if (text.includes(form)) return form;
  const upper = text.replace(/%[0-9a-fA-F]{2}/g, (triple) => triple.toUpperCase());
  for (const form of percent) {
    const at = upper.indexOf(form);
    if (at !== -1) return text.slice(at, at + form.length);
  }
  const piece = 12;
  for (let i = 0; i + piece <= secret.length; i++) {
    const part = secret.slice(i, i + piece);
    if (text.includes(part)) return part;
  }
  return null;
}

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  const entries = await fs.readdir(dir, { withFileTypes: true });
  for (const entry of entries) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await filesUnder(full)));
    else if (entry.isFile()) out.push(full);
  }
  return out;
}

/**
 * The text of every file under a data dir (recursively), for a test that looks for a secret
 * in all of them: it fails unless the sweep has something to sweep, and unless the files
 * named (relative to `dir`) are among those read, so a sweep of an empty or wrong dir cannot
 * pass. A file the daemon removed between the listing and the reading is left out.
 */
export function sweptFiles(dir: string, mustInclude: readonly string[]): { file: string; text: string }[] {
  const gone = (error: unknown): boolean => (error as { code?: string }).code === 'ENOENT';
  const walk = (at: string): string[] =>
    readdirSync(at).flatMap((name) => {
      const full = path.join(at, name);
      try {
        const stat = statSync(full);
        return stat.isDirectory() ? walk(full) : stat.isFile() ? [full] : [];
      } catch (error) {
        if (gone(error)) return [];
        throw error;
      }
    });
  const read = walk(dir).flatMap((file) => {
    try {
      return [{ file, text: readFileSync(file, 'utf8') }];
    } catch (error) {
      if (gone(error)) return [];
      throw error;
    }
  });
  expect(read.length).toBeGreaterThan(0);
  expect(read.map(({ file }) => path.relative(dir, file))).toEqual(expect.arrayContaining([...mustInclude]));
  return read;
}

/**
 * Checks every channel for the secret (whole, in pieces, or in any form leakForms lists) and fails naming each place
 * it was found. Returns how much was swept, so a test can see the sweep was not empty.
 */
export async function sweepForCanary(secret: string, channels: CanaryChannels): Promise<{ files: string[]; checked: number }> {
  const found: string[] = [];
  let checked = 0;
  const check = (where: string, text: string): void => {
    checked += 1;
    const hit = findLeak(secret, text);
    if (hit !== null) {
      const at = text.indexOf(hit);
      found.push(`${where}: ${JSON.stringify(text.slice(Math.max(0, at - 60), at + hit.length + 20))}`);
    }
  };
  const json = (value: unknown): string => (value === undefined ? '' : JSON.stringify(value));
  (channels.replies ?? []).forEach((reply, i) => check(`reply #${i}`, json(reply)));
  (channels.events ?? []).forEach((event, i) => check(`event #${i} (${(event as { type?: string }).type ?? '?'})`, json(event)));
  (channels.modelRequests ?? []).forEach((body, i) => check(`model request #${i}`, json(body)));
  (channels.terminal ?? []).forEach((text, i) => check(`terminal output #${i}`, text));
  if (channels.daemonOutput !== undefined) check('daemon output (log)', channels.daemonOutput);
  let files: string[] = [];
  if (channels.dataDir !== undefined) {
    files = await filesUnder(channels.dataDir);
    expect(files.length).toBeGreaterThan(0);
    const relative = files.map((f) => path.relative(channels.dataDir ?? '', f));
    for (const wanted of channels.expectFiles ?? []) expect(relative).toContain(wanted);
    for (const file of files) {
      // Read both ways: latin1 keeps every byte of a binary file, UTF-8 shows a non-ASCII secret as itself.
      const bytes = await fs.readFile(file);
      check(`file ${path.relative(channels.dataDir, file)}`, `${bytes.toString('latin1')}\n${bytes.toString('utf8')}`);
    }
  }
  expect(found, `the secret leaked:\n${found.join('\n')}`).toEqual([]);
  return { files, checked };
}
