import { describe, expect, it } from 'vitest';
import { WispError } from '../../../src/core/index.js';
import { parseArgsJson, parseNonNegative, parsePackageSpec, ref } from '../../../src/cli/args.js';
import { Interruption, PromptCancelled } from '../../../src/cli/prompt.js';

/** A promise settled from outside, to order events by hand. */
function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void; reject: (error: unknown) => void } {
  let resolve: (value: T) => void = () => undefined;
  let reject: (error: unknown) => void = () => undefined;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('Interruption: how a command ends when its prompt is cancelled', () => {
  it('without an interruption, guard gives the work\'s value or its error', async () => {
    const interruption = new Interruption();
    await expect(interruption.guard(Promise.resolve(42))).resolves.toBe(42);
    const error = new WispError('TOOL_ERROR', 'the tool failed');
    await expect(interruption.guard(Promise.reject(error))).rejects.toBe(error);
    expect(interruption.interrupted).toBe(false);
  });

  it('once interrupted, guard ends with PromptCancelled only after the daemon-side cancel is done', async () => {
    const interruption = new Interruption();
    const work = deferred<string>();
    const cancel = deferred<null>();
    let outcome: unknown = 'pending';
    const guarded = interruption.guard(work.promise).catch((error: unknown) => (outcome = error));
    interruption.interrupt(cancel.promise);
    expect(interruption.interrupted).toBe(true);
    // The work fails because of the cancel (APPROVAL_DENIED): that is the cancel's echo, not the outcome.
    work.reject(new WispError('APPROVAL_DENIED', 'denied'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(outcome).toBe('pending');
    cancel.resolve(null);
    await guarded;
    expect(outcome).toBeInstanceOf(PromptCancelled);
    expect((outcome as PromptCancelled).how).toBe('interrupt');
  });

  it('a failed daemon-side cancel still ends the command as cancelled', async () => {
    const interruption = new Interruption();
    interruption.interrupt(Promise.reject(new WispError('APPROVAL_NOT_PENDING', 'already answered')));
    await expect(interruption.guard(new Promise<never>(() => undefined))).rejects.toBeInstanceOf(PromptCancelled);
  });

  it('an interruption that comes after the work is done changes nothing', async () => {
    const interruption = new Interruption();
    await expect(interruption.guard(Promise.resolve('done'))).resolves.toBe('done');
    interruption.interrupt(Promise.resolve());
    expect(interruption.interrupted).toBe(true);
  });
});

describe('command-line arguments', () => {
  it('ref: a UUID is an id, anything else a name', () => {
    expect(ref('0f8fad5b-d9cb-469f-a165-70867728950e')).toEqual({ id: '0f8fad5b-d9cb-469f-a165-70867728950e' });
    expect(ref('files')).toEqual({ name: 'files' });
  });

  it('parsePackageSpec splits at the last @, scoped names included', () => {
    expect(parsePackageSpec('@scope/name@1.2.3')).toEqual({ package: '@scope/name', version: '1.2.3' });
    expect(parsePackageSpec('name@1.2.3')).toEqual({ package: 'name', version: '1.2.3' });
    expect(() => parsePackageSpec('@scope/name')).toThrow(/exact version/);
  });

  it('--args-json is an array of strings, never given with trailing arguments too', () => {
    expect(parseArgsJson('["a","b c"]', [])).toEqual(['a', 'b c']);
    expect(() => parseArgsJson('["a"]', ['b'])).toThrow(/not both/);
    expect(() => parseArgsJson('[1]', [])).toThrow(/array of strings/);
    expect(() => parseArgsJson('[', [])).toThrow(/not valid JSON/);
  });

  it('numbers are non-negative integers', () => {
    expect(parseNonNegative('0', '--since')).toBe(0);
    expect(() => parseNonNegative('-1', '--since')).toThrow('--since must be a non-negative integer');
    expect(() => parseNonNegative('1.5', '--since')).toThrow('--since must be a non-negative integer');
  });
});
