import net from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { killLeftovers, startWispd, tempDir } from '../helpers/wispd.js';

const home = tempDir();
afterAll(() => {
  killLeftovers();
  home.remove();
});

describe('a subscriber that never reads', () => {
  it('is dropped once its backlog passes the limit, with a logged reason; other clients are unaffected', async () => {
    const daemon = await startWispd(home.path);
    const writer = await daemon.connect();
    const follower = await daemon.connect();
    let followed = 0;
    follower.onEvent(() => (followed += 1));
    await follower.call('events.subscribe', {});

    // The slow one subscribes, then never reads again.
    const slow = net.createConnection(daemon.socket);
    await new Promise((resolve) => slow.once('connect', resolve));
    slow.on('error', () => undefined);
    const subscribed = new Promise((resolve) => slow.once('data', resolve));
    slow.write('{"jsonrpc":"2.0","id":1,"method":"events.subscribe","params":{}}\n');
    await subscribed;
    slow.pause();
    expect((await writer.call('daemon.status')).counts.subscribers).toBe(2);

    // Each update announces the whole service: about 1 MB per event with long arguments.
    const { service } = await writer.call('services.register', { name: 'big', command: '/bin/true' });
    const longArgs = Array.from({ length: 250 }, (_, i) => `${i}`.padEnd(4000, 'x'));
    for (let i = 0; i < 16; i++) await writer.call('services.update', { id: service.id, set: { args: [...longArgs.slice(1), String(i)] } });

    const status = await writer.call('daemon.status');
    expect(status.counts.subscribers).toBe(1);
    expect(daemon.output()).toContain('"code":"SLOW_CONSUMER"');
    // The follower that reads got every event.
    await follower.call('daemon.status');
    expect(followed).toBe(17);
    slow.destroy();
    await writer.call('daemon.shutdown');
    await daemon.exited;
  });
});
