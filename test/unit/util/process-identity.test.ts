import { describe, expect, it } from 'vitest';
import { namespaceRunning, pidNamespaceOf } from '../../../src/util/process-identity.js';

describe.runIf(process.platform === 'linux')('pid namespaces (a sandbox\'s stop waits for its namespace to empty)', () => {
  it('reads a process\'s namespace; its own is never "running" (never waited for), nor one no process is in', async () => {
    const own = pidNamespaceOf(process.pid);
    expect(own).toMatch(/^pid:\[[0-9]+\]$/);
    expect(await namespaceRunning(own ?? '')).toBe(false);
    expect(await namespaceRunning('pid:[1]')).toBe(false);
    expect(pidNamespaceOf(2 ** 22 + 7)).toBeUndefined();
  });
});
