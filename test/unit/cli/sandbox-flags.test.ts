import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { addProfile, editedProfile, grantPath } from '../../../src/cli/commands/mcp-sandbox.js';
import type { Service } from '../../../src/core/index.js';

const dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'wisp-flags-')));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const flags = (extra: Record<string, unknown> = {}) => ({ allowRead: [], allowWrite: [], allowNet: [], sandbox: true, ...extra });
const service = (sandbox: Service['sandbox']): Service => ({ name: 'svc', sandbox }) as Service;

describe('the sandbox flags of wispctl', () => {
  it('make a relative path absolute against the current directory, and refuse one that does not exist or holds a NUL', () => {
    const cwd = process.cwd();
    try {
      process.chdir(dir);
      expect(grantPath('.', '--allow-read')).toBe(dir);
      expect(() => grantPath('missing', '--allow-read')).toThrow(`--allow-read missing: ${path.join(dir, 'missing')} does not exist`);
    } finally {
      process.chdir(cwd);
    }
    expect(() => grantPath('/a\0b', '--allow-write')).toThrow('--allow-write: a path must not contain NUL or a line break');
  });

  it('give mcp add the default, grants, host grants, or no sandbox', () => {
    expect(addProfile(flags())).toEqual({ enabled: true, read: [], write: [], net: { mode: 'none' } });
    expect(addProfile(flags({ allowRead: [dir], allowNet: ['API.example.com'] }))).toEqual({ enabled: true, read: [dir], write: [], net: { mode: 'hosts', hosts: ['api.example.com'] } });
    expect(addProfile(flags({ net: 'ask', allowNet: ['a.example'] }))).toEqual({ enabled: true, read: [], write: [], net: { mode: 'ask', hosts: ['a.example'] } });
    expect(addProfile(flags({ net: 'all' }))).toEqual({ enabled: true, read: [], write: [], net: { mode: 'all' } });
    expect(addProfile(flags({ sandbox: false }))).toEqual({ enabled: false, read: [], write: [], net: { mode: 'none' } });
    expect(() => addProfile(flags({ sandbox: false, allowWrite: [dir] }))).toThrow('--no-sandbox gives the server every file and host you have');
    expect(() => addProfile(flags({ net: 'none', allowNet: ['a.example'] }))).toThrow('--allow-net with --net none means nothing');
  });

  it('edit a profile: turn a legacy one on, revoke, turn it off', () => {
    expect(editedProfile(service({ status: 'legacy' }), { ...flags(), on: true, revoke: [], revokeNet: [] })).toEqual({ enabled: true, read: [], write: [], net: { mode: 'none' } });
    expect(() => editedProfile(service({ status: 'legacy' }), { ...flags({ allowRead: [dir] }), revoke: [], revokeNet: [] })).toThrow('svc is not sandboxed (legacy): turn it on with --on');
    const on = service({ status: 'on', read: [dir], write: [], net: { mode: 'hosts', hosts: ['a.example', 'b.example'] } });
    expect(editedProfile(on, { ...flags(), revoke: [dir], revokeNet: ['a.example'] })).toEqual({ enabled: true, read: [], write: [], net: { mode: 'hosts', hosts: ['b.example'] } });
    expect(editedProfile(on, { ...flags(), revoke: [], revokeNet: ['a.example', 'b.example'] }).net).toEqual({ mode: 'none' });
    expect(editedProfile(on, { ...flags(), off: true, revoke: [], revokeNet: [] })).toEqual({ enabled: false, read: [dir], write: [], net: { mode: 'hosts', hosts: ['a.example', 'b.example'] } });
    expect(() => editedProfile(on, { ...flags(), on: true, off: true, revoke: [], revokeNet: [] })).toThrow('give --on or --off, not both');
  });
});
