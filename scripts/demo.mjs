// npm run demo: the whole flow as a new user would see it, with no API key and nothing
// touched outside a temp dir: a mock DeepSeek server, a real wispd, a real MCP server, a
// session in which the model calls a tool, an approval, the answer and the transcript.
import { spawn } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { WispClient } from '../dist/control/client.js';
import { MockDeepSeek, textEvents, toolCallEvents } from '../fixtures/model/mock-deepseek.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const say = (text) => process.stdout.write(`${text}\n`);
const dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'wisp-demo-')));
const mock = new MockDeepSeek({ enforceReasoningPassback: true });
let daemon;
try {
  const url = await mock.start();
  say(`1. A mock DeepSeek API listens on ${url} (no key, no network needed).`);
  daemon = spawn(process.execPath, [path.join(root, 'bin', 'wispd.js'), '--data-dir', dir, '--no-log-pretty', '--ready-fd', '3'], {
    stdio: ['ignore', 'ignore', 'inherit', 'pipe'],
    env: { PATH: process.env.PATH, HOME: process.env.HOME, DEEPSEEK_API_KEY: 'demo-key' },
  });
  const { socket } = JSON.parse(await new Promise((resolve) => daemon.stdio[3].once('data', (b) => resolve(b.toString()))));
  say(`2. wispd runs (data in ${dir}, socket ${socket}).`);
  const client = await WispClient.connect(socket);
  await client.call('model.setSettings', { baseUrl: url, model: 'deepseek-chat' });

  const { service } = await client.call('services.register', {
    name: 'demo-tools',
    command: process.execPath,
    args: [path.join(root, 'fixtures', 'servers', 'scenario-server.mjs')],
  });
  say(`3. Registered "${service.name}" (disabled): ${service.command} ${service.args.join(' ')}`);
  const { service: active } = await client.call('services.activate', { id: service.id, configVersion: service.configVersion });
  const { tools } = await client.call('tools.list', { serviceId: service.id });
  say(`4. Trusted and activated it: ${active.connection.status}, tools: ${tools.map((t) => `${t.name} (${t.modelName})`).join(', ')}`);
  const echo = tools.find((t) => t.name === 'echo');

  mock.enqueue(
    { events: toolCallEvents([{ id: 'call_1', name: echo.modelName, arguments: JSON.stringify({ text: 'Hello from Wisp Host!' }) }], { reasoning: 'The user wants the echo tool.' }) },
    { events: textEvents('The echo tool replied: "Hello from Wisp Host!"', { reasoning: 'Report what the tool said.' }) },
  );
  const { session } = await client.call('sessions.create', { title: 'demo' });
  let answer = '';
  const done = new Promise((resolve) => {
    client.onEvent((event) => {
      if (event.type === 'model.delta' && event.kind === 'content') answer += event.text;
      if (event.type === 'approval.requested') {
        say(`6. Approval requested: ${event.approval.summary.serviceName}/${event.approval.summary.toolName} ${JSON.stringify(event.approval.summary.arguments)} -> approving.`);
        void client.call('approvals.respond', { id: event.approval.id, decision: 'approve' });
      }
      if (event.type === 'tool.call.finished') say(`7. The call ran in ${event.durationMs} ms; the result goes back to the model.`);
      if (event.type === 'task.state' && !['running', 'awaiting_approval'].includes(event.task.state.status)) resolve(event.task);
    });
  });
  await client.call('events.subscribe', {});
  say('5. The user asks: "Say hello with the echo tool."');
  await client.call('sessions.send', { id: session.id, text: 'Say hello with the echo tool.' });
  const task = await done;
  say(`8. The model answers: ${answer}`);
  say(`   (task ${task.state.status} after ${task.rounds} model rounds)`);
  const { messages } = await client.call('sessions.get', { id: session.id });
  say('\nTranscript:');
  for (const m of messages) {
    const calls = (m.tool_calls ?? []).map((c) => ` -> ${c.function.name}(${c.function.arguments})`).join('');
    say(`  ${m.role.padEnd(9)} ${m.content ?? ''}${calls}`);
  }
  say(`\nThe mock received ${mock.requests.length} requests; the second carried the tool result and the model's reasoning back.`);
  await client.call('daemon.shutdown');
  await new Promise((resolve) => daemon.once('exit', resolve));
} finally {
  daemon?.kill('SIGKILL');
  await mock.stop();
  rmSync(dir, { recursive: true, force: true });
}
