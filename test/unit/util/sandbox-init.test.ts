import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { BwrapInfo, killPid, pidExists } from '../../../src/util/index.js';

describe('BwrapInfo (bwrap --info-fd)', () => {
  it('gives the init pid once the field is whole, even when a chunk ends inside the number', () => {
    const info = new BwrapInfo();
    expect(info.add(Buffer.from('{\n    "child-pid": 12'))).toBeUndefined();
    expect(info.add(Buffer.from('345,\n    "cgroup-namespace": 4026531835'))).toBe(12345);
  });

  it('reads the info bwrap writes whole, with the pid as its last field', () => {
    expect(new BwrapInfo().add(Buffer.from('{\n    "child-pid": 77\n}\n'))).toBe(77);
  });

  it('takes nothing past its cap: a flood is not its info', () => {
    const info = new BwrapInfo();
    info.add(Buffer.from('x'.repeat(5000)));
    expect(info.add(Buffer.from('{"child-pid": 9}'))).toBeUndefined();
  });
});

describe('killPid', () => {
  it('kills a running process and takes one gone already without an error', async () => {
    const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    const pid = child.pid ?? 0;
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
    killPid(pid);
    expect(await exited).toBe('SIGKILL');
    expect(pidExists(pid)).toBe(false);
    expect(() => killPid(pid)).not.toThrow();
  });
});
