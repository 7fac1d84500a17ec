import { describe, expect, it } from 'vitest';
import { LightSignal, linkedSignal } from '../../../src/util/index.js';

/** LightSignal behaves as AbortSignal does for what the call path asks of it. */
describe('LightSignal', () => {
  /** The same steps on a LightSignal and on an AbortController's signal, and what each listener heard. */
  function both(steps: (signal: LightSignal | AbortSignal, abort: (reason?: unknown) => void, log: string[]) => void): [string[], string[]] {
    const light = new LightSignal();
    const lightLog: string[] = [];
    steps(light, (reason) => light.abort(reason), lightLog);
    const controller = new AbortController();
    const nodeLog: string[] = [];
    steps(controller.signal, (reason) => controller.abort(reason), nodeLog);
    return [lightLog, nodeLog];
  }

  it('runs each listener once, in the order added, not a removed one, not one added after the abort; the first reason wins', () => {
    const [light, node] = both((signal, abort, log) => {
      const a = (): void => void log.push(`a ${String(signal.reason)}`);
      const b = (): void => void log.push('b');
      const c = (): void => void log.push('c');
      signal.addEventListener('abort', a, { once: true });
      signal.addEventListener('abort', b, { once: true });
      signal.addEventListener('abort', c, { once: true });
      signal.removeEventListener('abort', b);
      log.push(`before ${String(signal.aborted)}`);
      abort('first');
      abort('second');
      signal.addEventListener('abort', () => log.push('late'), { once: true });
      log.push(`after ${String(signal.aborted)} ${String(signal.reason)}`);
      try {
        signal.throwIfAborted();
      } catch (error) {
        log.push(`threw ${String(error)}`);
      }
    });
    expect(light).toEqual(['before false', 'a first', 'c', 'after true first', 'threw first']);
    expect(light).toEqual(node);
  });

  it('aborts with an AbortError when given no reason, and throwIfAborted does nothing before', () => {
    const signal = new LightSignal();
    expect(() => signal.throwIfAborted()).not.toThrow();
    signal.abort(undefined);
    expect(signal.reason).toMatchObject({ name: 'AbortError' });
  });

  it('a listener that throws does not stop the others', async () => {
    const signal = new LightSignal();
    const heard: string[] = [];
    signal.addEventListener('abort', () => {
      throw new Error('listener failed');
    });
    signal.addEventListener('abort', () => heard.push('second'));
    const uncaught = new Promise<unknown>((resolve) => {
      const listeners = process.listeners('uncaughtException');
      process.removeAllListeners('uncaughtException');
      process.once('uncaughtException', (error) => {
        for (const listener of listeners) process.on('uncaughtException', listener);
        resolve(error);
      });
    });
    signal.abort('stop');
    expect(heard).toEqual(['second']);
    expect(await uncaught).toMatchObject({ message: 'listener failed' });
  });

  it('links: a linked AbortSignal aborts with its reason', () => {
    const signal = new LightSignal();
    const linked = linkedSignal(new AbortController().signal, signal);
    signal.abort('gone');
    expect(linked.signal.aborted).toBe(true);
    expect(linked.signal.reason).toBe('gone');
  });
});
