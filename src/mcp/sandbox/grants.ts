import { promises as fs } from 'node:fs';
import { WispError } from '../../core/index.js';
import { defaultProfile, normalizeProfile, type SandboxProfile } from './profile.js';

/**
 * A profile as a client gives it, made fit to store: normalized (profile.ts), and every
 * file grant an existing path, so a typo is an error now rather than an empty directory
 * the server cannot explain. Absent: the default (sandboxed, no network).
 */
export async function checkedProfile(given: SandboxProfile | undefined): Promise<SandboxProfile> {
  const profile = normalizeProfile(given ?? defaultProfile());
  const all = [...profile.read.map((p) => ['read', p] as const), ...profile.write.map((p) => ['write', p] as const)];
  for (const [kind, grant] of all) {
    const stat = await fs.stat(grant).catch((error: unknown) => (error instanceof Error ? error : new Error(String(error))));
    if (stat instanceof Error) {
      const code = (stat as NodeJS.ErrnoException).code;
      const why = code === 'ENOENT' ? 'does not exist' : `cannot be reached (${code ?? stat.message})`;
      throw new WispError('INVALID_CONFIG', `sandbox ${kind} grant ${JSON.stringify(grant)} ${why}: create it first, or give the path that exists`, { field: `sandbox.${kind}` });
    }
  }
  return profile;
}
