import path from 'node:path';
import { LIMITS, WispError } from '../core/index.js';
import { jsonProblem, readSafe, schemaProblem, writeFileAtomic, type StorageProblem } from '../util/index.js';
import { checks } from '#generated/profiles-check.js';
import type { ProfileDocument, StoredProfile } from './profile-store-schema.js';

export type { StoredProfile } from './profile-store-schema.js';

/** The file, in the data dir. */
export const PROFILES_FILE = 'profiles.json';

/** profiles.json is at most this big: every profile at its largest, and room around them. */
const MAX_FILE_BYTES = 256 * 1024;

/**
 * profiles.json: the profiles (named sets of services, by id) that `wispctl mcp serve
 * --profile NAME` serves. Read at every request (a small file: parsed again only when its
 * text changed), so an edit by hand is what the next request sees and what the next change
 * starts from; every change is written atomically, one at a time, before it is answered. A
 * file that is not JSON, fails its schema or names a profile twice is left where it is,
 * intact, and never written over: until it is fixed (or removed), every read and change fails
 * with PROFILES_UNREADABLE, which names the file and the problem.
 */
export class ProfileStore {
  readonly file: string;
  private profiles: Map<string, StoredProfile> | null = null;
  private problem: string | null = null;
  /** The text last read or written (null: no file): read again, the same text is not parsed again. */
  private text: string | null | undefined = undefined;
  private writes: Promise<unknown> = Promise.resolve();

  constructor(dataDir: string) {
    this.file = path.join(dataDir, PROFILES_FILE);
  }

  /** Reads the file (none: no profiles). A bad one is reported (for the log and storage.warning), never thrown; UNSAFE_FILE is. */
  async load(): Promise<StorageProblem | null> {
    const problem = await this.read(true);
    return problem === null ? null : { file: this.file, problem: `${problem}: left as it is; every profile request fails with PROFILES_UNREADABLE until it is fixed or removed`, movedTo: null };
  }

  async list(): Promise<StoredProfile[]> {
    return [...(await this.ready()).values()];
  }

  /**
   * Applies `change` to the profile named (undefined: there is none) and writes the file:
   * the profile returned is stored (null: removed). Changes run one at a time, each on what
   * the last one left; nothing is kept in memory that was not written.
   */
  change(name: string, change: (current: StoredProfile | undefined) => StoredProfile | null): Promise<StoredProfile | null> {
    const run = this.writes.then(async () => {
      const profiles = await this.ready();
      const next = change(profiles.get(name));
      const updated = new Map(profiles);
      if (next === null) updated.delete(name);
      else updated.set(name, next);
      if (updated.size > LIMITS.maxProfiles) throw new WispError('LIMIT_EXCEEDED', `at most ${LIMITS.maxProfiles} profiles`, { limit: 'maxProfiles', max: LIMITS.maxProfiles });
      const document: ProfileDocument = { schemaVersion: 1, profiles: [...updated.values()] };
      const text = `${JSON.stringify(document, null, 2)}\n`;
      try {
        await writeFileAtomic(this.file, text);
      } catch (error) {
        throw new WispError('STORAGE_FAILED', `could not write ${this.file}: ${error instanceof Error ? error.message : String(error)}`);
      }
      this.profiles = updated;
      this.text = text;
      return next;
    });
    this.writes = run.catch(() => undefined);
    return run;
  }

  /** The profiles, or PROFILES_UNREADABLE while the file is bad (read again first). */
  private async ready(): Promise<Map<string, StoredProfile>> {
    await this.read();
    if (this.profiles === null) {
      throw new WispError('PROFILES_UNREADABLE', `${this.file} ${this.problem ?? 'could not be read'}: it was left as it is: fix it, or remove it to start again with no profiles`, {
        file: this.file,
        problem: this.problem,
      });
    }
    return this.profiles;
  }

  /** Reads the file into memory; returns what was wrong with it (then nothing is in memory). `atStart`: a file that is not ours (UNSAFE_FILE) stops the daemon; later it is refused like a bad one. */
  private async read(atStart = false): Promise<string | null> {
    let text: string;
    try {
      text = await readSafe(this.file, MAX_FILE_BYTES);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        this.text = null;
        return this.accept([]);
      }
      this.text = undefined;
      if (error instanceof WispError && error.code === 'UNSAFE_FILE') {
        if (atStart) throw error;
        return this.refuse(`is not safe to read (${error.message})`);
      }
      return this.refuse(error instanceof WispError && error.code === 'LIMIT_EXCEEDED' ? `is larger than ${MAX_FILE_BYTES} bytes` : `cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
    }
    if (text === this.text) return this.problem;
    this.text = text;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      return this.refuse(`is ${jsonProblem(error)}`);
    }
    if (!checks.profileDocument(parsed)) return this.refuse(schemaProblem(checks.profileDocument.errors));
    const names = new Set<string>();
    for (const profile of parsed.profiles) {
      if (names.has(profile.name)) return this.refuse(`names the profile ${profile.name} twice`);
      names.add(profile.name);
    }
    return this.accept(parsed.profiles);
  }

  private accept(profiles: readonly StoredProfile[]): null {
    this.profiles = new Map(profiles.map((profile) => [profile.name, profile]));
    this.problem = null;
    return null;
  }

  private refuse(problem: string): string {
    this.profiles = null;
    this.problem = problem;
    return problem;
  }
}

export function notFound(name: string): WispError {
  return new WispError('PROFILE_NOT_FOUND', `no profile named ${name} (wispctl mcp profile list shows them)`, { name });
}
