import { describe, expect, it } from 'vitest';
import { isWispGateway, selfGatewayError } from '../../../src/mcp/index.js';

describe('Wisp\'s own gateway, recognised in a launch', () => {
  it('is what mcp connect-client writes, and what people write by hand', () => {
    const gateways = [
      { command: '/usr/bin/node', args: ['/opt/wisp/bin/wispctl.js', '--socket', '/run/user/1000/wisp/wispd.sock', 'mcp', 'serve'] },
      { command: '/usr/bin/node', args: ['/opt/wisp/bin/wispctl.js', '--data-dir', '/d', '--socket', '/s', 'mcp', 'serve', '--services', 'a,b', '--approve-in-client'] },
      { command: 'wispctl', args: ['mcp', 'serve'] },
      { command: 'C:\\Users\\me\\AppData\\Roaming\\npm\\wispctl.cmd', args: ['mcp', 'serve'] },
      { command: 'npx', args: ['-y', '-p', 'wisp-host', 'wispctl', 'mcp', 'serve'] },
      { command: '/bin/sh', args: ['-c', 'exec wispctl --json mcp serve'] },
      { command: '/usr/bin/env', args: ['WISP_SOCKET=/s', '${HOME}/.local/bin/wispctl', 'mcp', 'serve'] },
      { transport: 'stdio', command: 'wispctl', args: ['mcp', 'serve', '--http'] },
    ];
    for (const line of gateways) expect(isWispGateway(line), JSON.stringify(line)).toBe(true);
  });

  it('is not any other server, nor wispctl doing something else, nor a remote service', () => {
    const others = [
      { command: '/usr/bin/node', args: ['/srv/server-filesystem/dist/index.js', '/home/me'] },
      { command: 'wispctl', args: ['status'] },
      { command: 'wispctl', args: ['mcp', 'list'] },
      { command: 'wispctld', args: ['mcp', 'serve'] },
      { command: 'node', args: ['serve.js', 'mcp', 'serve'] },
      { command: 'my-wispctl-wrapper', args: ['mcp', 'serve'] },
      { transport: 'http', command: 'wispctl', args: ['mcp', 'serve'] },
    ];
    for (const line of others) expect(isWispGateway(line), JSON.stringify(line)).toBe(false);
  });

  it('is refused with SELF_GATEWAY, naming the service and how to remove it', () => {
    expect(selfGatewayError('wisp', 'activated')).toMatchObject({ code: 'SELF_GATEWAY', message: expect.stringContaining('remove it with wispctl mcp remove wisp') });
  });
});
