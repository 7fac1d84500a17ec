// Model stream relay: a chunk leaves the mock DeepSeek server -> its model.delta event
// reaches a socket client, vs a client reading the mock's SSE directly.
import { createParser } from 'eventsource-parser';
import { request } from 'undici';
import { WispClient } from '../dist/control/client.js';
import { MockDeepSeek, textEvents } from '../fixtures/model/mock-deepseek.mjs';
import { envInt, exited, percentiles, startDaemon, stats } from './common.mjs';

/**
 * Model stream relay: a chunk leaves the mock server -> its model.delta event reaches a
 * socket client, vs a client reading the mock's SSE directly, both timed in this process.
 */
export async function modelStream(dataDir) {
  const PIECES = envInt('BENCH_PIECES', 400);
  const ROUNDS = 5;
  const mock = new MockDeepSeek();
  const url = await mock.start();
  const sentAt = new Map();
  mock.onWrite = (bytes, t) => {
    for (const line of bytes.toString('utf8').split('\n')) {
      if (!line.startsWith('data: {')) continue;
      const content = JSON.parse(line.slice(6)).choices?.[0]?.delta?.content;
      if (typeof content === 'string') sentAt.set(content, t);
    }
  };
  // Equal-width pieces, so textEvents cuts the text exactly into them and each is unique.
  const text = Array.from({ length: PIECES }, (_, i) => `p${String(i).padStart(5, '0')} `).join('');
  const script = () => ({ events: textEvents(text, { pieces: PIECES }) });
  const daemon = await startDaemon(dataDir);
  const child = daemon.child;
  const client = await WispClient.connect(daemon.socket);
  await client.call('model.setSettings', { baseUrl: url });
  await client.call('model.setKey', { value: 'bench-key', storage: 'session' });
  const { session } = await client.call('sessions.create', { title: 'bench' });
  const viaDaemon = [];
  const direct = [];
  const daemonRates = [];
  const directRates = [];
  for (let round = 0; round < ROUNDS; round++) {
    // Through the daemon.
    sentAt.clear();
    mock.enqueue(script());
    let first = 0;
    let count = 0;
    const finished = new Promise((resolve) => {
      const off = client.onEvent((event) => {
        if (event.type === 'model.delta' && event.kind === 'content') {
          const now = performance.now();
          if (count === 0) first = now;
          count += 1;
          viaDaemon.push(now - (sentAt.get(event.text) ?? now));
          if (count === PIECES) daemonRates.push((PIECES / (now - first)) * 1000);
        }
        if (event.type === 'task.state' && event.task.state.status !== 'running') {
          off();
          resolve();
        }
      });
    });
    await client.call('events.subscribe', {});
    await client.call('sessions.send', { id: session.id, text: 'go' });
    await finished;
    await client.call('events.unsubscribe');

    // Directly.
    sentAt.clear();
    mock.enqueue(script());
    const response = await request(`${url}/chat/completions`, { method: 'POST', body: JSON.stringify({ model: 'x', messages: [], stream: true }), headers: { 'content-type': 'application/json' } });
    let n = 0;
    let start = 0;
    const parser = createParser({
      onEvent(event) {
        if (event.data === '[DONE]') return;
        const content = JSON.parse(event.data).choices?.[0]?.delta?.content;
        if (typeof content !== 'string') return;
        const now = performance.now();
        if (n === 0) start = now;
        n += 1;
        direct.push(now - (sentAt.get(content) ?? now));
        if (n === PIECES) directRates.push((PIECES / (now - start)) * 1000);
      },
    });
    const decoder = new TextDecoder();
    for await (const bytes of response.body) parser.feed(decoder.decode(bytes, { stream: true }));
  }
  await client.call('daemon.shutdown');
  await exited(child);
  await mock.stop();
  const d = percentiles(viaDaemon);
  const b = percentiles(direct);
  return {
    name: 'model stream relay',
    note: `a content chunk written by the mock DeepSeek server -> its model.delta event at a socket client, vs a client reading the mock's SSE directly; ${ROUNDS} answers of ${PIECES} deltas each`,
    subject: d,
    baseline: b,
    ratio: { p50: d.p50 / b.p50, p99: d.p99 / b.p99 },
    throughput: { daemonPerSecond: stats(daemonRates).median, directPerSecond: stats(directRates).median, ratio: stats(daemonRates).median / stats(directRates).median },
  };
}

