import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WispClient } from '../../src/control/client.js';
import { human, stdioGateway, type GatewayClient } from '../helpers/gateway.js';
import { activate, registerScenario } from '../helpers/services.js';
import { killLeftovers, runWispctl, startWispd, tempDir, type RunningDaemon } from '../helpers/wispd.js';

/**
 * Issue 35, media by choice: the seed's rule (images, audio and binary resources become a
 * marker) stays the default; a service whose media setting is on passes them whole to the
 * clients of `wispctl mcp serve` (the official SDK Client, a real daemon, the scenario
 * fixture's conformance tools and resources), and to nobody else. Every call is approved by
 * a human at another socket connection.
 */
const home = tempDir();
let daemon: RunningDaemon;
let admin: WispClient;
let withMedia: GatewayClient;
let without: GatewayClient;
/** What the fixture sends (fixtures/servers/scenario-server.mjs, conformance-offers.mjs). */
let pixel = '';

const ctl = (args: string[]): ReturnType<typeof runWispctl> => runWispctl(['--socket', daemon.socket, ...args]);

beforeAll(async () => {
  daemon = await startWispd(home.path);
  admin = await daemon.connect();
  const approver = await daemon.connect();
  await human(approver, () => 'approve');
  // One service registered with --media by the CLI, one left as it is.
  const added = await ctl(['mcp', 'add', '--media', 'pictures', '--', process.execPath, (await registerScenario(admin, 'probe')).args[0] ?? '', '--conformance-tools']);
  expect(added.code).toBe(0);
  await admin.call('services.delete', { name: 'probe' });
  await registerScenario(admin, 'plain', ['--conformance-tools']);
  for (const name of ['pictures', 'plain']) expect((await activate(admin, name)).connection.status).toBe('active');
  withMedia = await stdioGateway(daemon.socket, ['--service', 'pictures']);
  without = await stdioGateway(daemon.socket, ['--service', 'plain']);
  const direct = await admin.call('tools.call', { serviceId: (await admin.call('services.get', { name: 'plain' })).service.id, toolName: 'test_image_content', arguments: {} });
  expect(direct.content).toEqual([{ type: 'omitted', originalType: 'image', mimeType: 'image/png', bytes: expect.any(Number), uri: null, name: null }]);
  const picturesId = (await admin.call('services.get', { name: 'pictures' })).service.id;
  const asked = await admin.call('tools.call', { serviceId: picturesId, toolName: 'test_image_content', arguments: {}, media: true });
  pixel = asked.content[0]?.type === 'image' ? asked.content[0].data : '';
  expect(pixel).not.toBe('');
}, 60_000);

afterAll(async () => {
  await withMedia.close();
  await without.close();
  await admin.call('daemon.shutdown').catch(() => undefined);
  await daemon.exited;
  killLeftovers();
  home.remove();
});

describe('media through wispctl mcp serve', () => {
  it('is shown before trust: mcp show and the trust prompt say whether media pass, and the setting is stored', async () => {
    const shown = await ctl(['mcp', 'show', 'pictures']);
    expect(shown.stdout).toMatch(/^media: {4}passed whole to MCP clients of wispctl mcp serve/m);
    expect((await ctl(['mcp', 'show', 'plain'])).stdout).toMatch(/^media: {4}markers \(images, audio and binary resources become their type and size/m);
    expect((await admin.call('services.get', { name: 'pictures' })).service.media).toBe(true);
    expect((await admin.call('services.get', { name: 'plain' })).service.media).toBe(false);
  });

  it('passes images and audio of a service with media on to the client, whole; a service without gets the marker', async () => {
    const image = await withMedia.client.callTool({ name: 'test_image_content', arguments: {} });
    expect(image.content).toEqual([{ type: 'image', mimeType: 'image/png', data: pixel }]);
    const audio = await withMedia.client.callTool({ name: 'test_audio_content', arguments: {} });
    expect(audio.content).toEqual([{ type: 'audio', mimeType: 'audio/wav', data: expect.stringMatching(/^UklGR/) }]);
    const mixed = await withMedia.client.callTool({ name: 'test_multiple_content_types', arguments: {} });
    expect((mixed.content as { type: string }[]).map((c) => c.type)).toEqual(['text', 'image', 'resource']);
    const marker = await without.client.callTool({ name: 'test_image_content', arguments: {} });
    expect(marker.content).toEqual([{ type: 'text', text: expect.stringMatching(/^\[omitted by Wisp: image image\/png, \d+ bytes\]$/) }]);
  });

  it('passes a binary resource and a prompt\'s image the same way, and only there', async () => {
    const read = await withMedia.client.readResource({ uri: 'test://static-binary' });
    expect(read.contents).toEqual([{ uri: 'test://static-binary', mimeType: 'image/png', blob: expect.stringMatching(/^iVBOR/) }]);
    const prompt = await withMedia.client.getPrompt({ name: 'test_prompt_with_image' });
    expect(prompt.messages.map((m) => m.content.type)).toContain('image');
    const plainRead = await without.client.readResource({ uri: 'test://static-binary' });
    expect(plainRead.contents).toEqual([{ uri: 'test://static-binary', mimeType: 'text/plain', text: expect.stringMatching(/^\[omitted by Wisp: resource image\/png, \d+ bytes\]$/) }]);
    const plainPrompt = await without.client.getPrompt({ name: 'test_prompt_with_image' });
    expect(plainPrompt.messages.map((m) => m.content.type)).not.toContain('image');
  });

  it('turning it off is an edit: the service is disabled, and once trusted again its media are markers', async () => {
    const edited = await ctl(['mcp', 'edit', 'pictures', '--no-media']);
    expect(edited.code).toBe(0);
    const { service } = await admin.call('services.get', { name: 'pictures' });
    expect(service).toMatchObject({ media: false, connection: { status: 'disabled' } });
    expect((await activate(admin, 'pictures')).connection.status).toBe('active');
    const asked = await admin.call('tools.call', { serviceId: service.id, toolName: 'test_image_content', arguments: {}, media: true });
    expect(asked.content[0]).toMatchObject({ type: 'omitted', originalType: 'image' });
  });
});
