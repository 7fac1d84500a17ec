import { describe, expect, it } from 'vitest';
import { FakeSecretStore, MemorySecretStore, Redactor, Secrets, launchBinding } from '../../../src/secrets/index.js';

const service = 'a5f1c6d2-0000-4000-8000-000000000001';
const binding = launchBinding({ command: '/usr/bin/node', args: ['server.js'], cwd: null });
const edited = launchBinding({ command: '/usr/bin/node', args: ['other.js'], cwd: null });

function setup() {
  const keychain = new FakeSecretStore();
  const session = new MemorySecretStore();
  const redactor = new Redactor();
  return { keychain, session, redactor, secrets: new Secrets(keychain, session, redactor) };
}

describe('Secrets', () => {
  it('does not touch the keychain at all for a service without variables', async () => {
    const { keychain, secrets } = setup();
    expect(await secrets.read(service, binding, [])).toEqual({});
    await secrets.write(service, binding, []);
    await secrets.erase(service, []);
    expect(keychain.calls).toBe(0);
  });

  it('keeps keychain values per service and variable, bound to the launch, and hands them out at activation', async () => {
    const { keychain, secrets, redactor } = setup();
    await secrets.write(service, binding, [{ name: 'API_KEY', value: 'sk-123', storage: 'keychain' }]);
    expect(await keychain.get(service, 'API_KEY')).toEqual({ value: 'sk-123', binding });
    expect(await secrets.read(service, binding, [{ name: 'API_KEY', storage: 'keychain' }])).toEqual({ API_KEY: 'sk-123' });
    expect(redactor.redact('key=sk-123')).toBe('key=[REDACTED:API_KEY]');
  });

  it('never carries values to an edited command silently, only after an explicit carry-over', async () => {
    const { secrets } = setup();
    const vars = [{ name: 'TOKEN', storage: 'keychain' as const }];
    await secrets.write(service, binding, [{ name: 'TOKEN', value: 't', storage: 'keychain' }]);
    await expect(secrets.read(service, edited, vars)).rejects.toMatchObject({ code: 'SECRET_BINDING_CHANGED', details: { names: ['TOKEN'] } });
    await secrets.carryOver(service, edited, vars);
    expect(await secrets.read(service, edited, vars)).toEqual({ TOKEN: 't' });
    await expect(secrets.read(service, binding, vars)).rejects.toMatchObject({ code: 'SECRET_BINDING_CHANGED' });
  });

  it('forgets session values with the daemon, and says which ones to enter again', async () => {
    const first = setup();
    await first.secrets.write(service, binding, [{ name: 'ONLY_NOW', value: 'v', storage: 'session' }]);
    expect(first.keychain.calls).toBe(0);
    expect(await first.secrets.read(service, binding, [{ name: 'ONLY_NOW', storage: 'session' }])).toEqual({ ONLY_NOW: 'v' });
    const restarted = setup();
    await expect(restarted.secrets.read(service, binding, [{ name: 'ONLY_NOW', storage: 'session' }])).rejects.toMatchObject({
      code: 'SECRET_MISSING',
      details: { names: ['ONLY_NOW'] },
    });
  });

  it('fails with KEYCHAIN_UNAVAILABLE, pointing at session storage, and writes nothing anywhere else', async () => {
    const { keychain, session, secrets } = setup();
    keychain.unavailable = true;
    const error = await secrets.write(service, binding, [{ name: 'K', value: 'plain-text-never', storage: 'keychain' }]).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'KEYCHAIN_UNAVAILABLE', message: expect.stringContaining('session storage') });
    expect(await session.get(service, 'K')).toBeNull();
    keychain.unavailable = false;
    expect(keychain.dump()).not.toContain('plain-text-never');
  });

  it('writes all or nothing: a keychain that refuses halfway leaves the earlier entries as they were', async () => {
    const { keychain, secrets } = setup();
    await secrets.write(service, binding, [{ name: 'A', value: 'old-a', storage: 'keychain' }]);
    keychain.failSetNumber = 4; // the set of C below (A was the 1st; now A, B, then C)
    await expect(
      secrets.write(service, binding, [
        { name: 'A', value: 'new-a', storage: 'keychain' },
        { name: 'B', value: 'new-b', storage: 'keychain' },
        { name: 'C', value: 'new-c', storage: 'keychain' },
      ]),
    ).rejects.toMatchObject({ code: 'KEYCHAIN_UNAVAILABLE' });
    expect(await keychain.get(service, 'A')).toEqual({ value: 'old-a', binding });
    expect(await keychain.get(service, 'B')).toBeNull();
    expect(await keychain.get(service, 'C')).toBeNull();
  });

  it('erases keychain entries and in-memory values', async () => {
    const { keychain, session, secrets, redactor } = setup();
    await secrets.write(service, binding, [
      { name: 'A', value: 'alpha-value', storage: 'keychain' },
      { name: 'B', value: 'beta-value', storage: 'session' },
    ]);
    await secrets.erase(service, [
      { name: 'A', storage: 'keychain' },
      { name: 'B', storage: 'session' },
    ]);
    expect(await keychain.get(service, 'A')).toBeNull();
    expect(await session.get(service, 'B')).toBeNull();
    expect(redactor.redact('beta-value')).toBe('beta-value');
  });
});
