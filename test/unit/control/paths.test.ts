import { describe, expect, it } from 'vitest';
import { checkSocketPath, resolvePaths } from '../../../src/control/index.js';

describe('resolvePaths', () => {
  const home = '/home/ada';

  it('uses ~/Library/Application Support/Wisp on macOS', () => {
    expect(resolvePaths({ platform: 'darwin', homedir: '/Users/ada', env: {} })).toEqual({
      dataDir: '/Users/ada/Library/Application Support/Wisp',
      configDir: '/Users/ada/.config/wisp',
      runtimeDir: '/Users/ada/Library/Application Support/Wisp/run',
      socket: '/Users/ada/Library/Application Support/Wisp/run/wispd.sock',
    });
  });

  it('uses XDG_DATA_HOME and XDG_RUNTIME_DIR on Linux', () => {
    expect(resolvePaths({ platform: 'linux', homedir: home, env: { XDG_DATA_HOME: '/d', XDG_RUNTIME_DIR: '/run/user/1000', XDG_CONFIG_HOME: '/c' } })).toEqual({
      dataDir: '/d/wisp',
      configDir: '/c/wisp',
      runtimeDir: '/run/user/1000/wisp',
      socket: '/run/user/1000/wisp/wispd.sock',
    });
  });

  it('falls back to ~/.local/share/wisp and a run dir inside it', () => {
    expect(resolvePaths({ platform: 'linux', homedir: home, env: {} })).toEqual({
      dataDir: '/home/ada/.local/share/wisp',
      configDir: '/home/ada/.config/wisp',
      runtimeDir: '/home/ada/.local/share/wisp/run',
      socket: '/home/ada/.local/share/wisp/run/wispd.sock',
    });
  });

  it('treats WISP_HOME or --data-dir as a separate instance with its own socket', () => {
    const env = { WISP_HOME: '/w', XDG_RUNTIME_DIR: '/run/user/1000' };
    expect(resolvePaths({ platform: 'linux', homedir: home, env }).socket).toBe('/w/run/wispd.sock');
    expect(resolvePaths({ platform: 'linux', homedir: home, env, dataDir: '/flag' }).dataDir).toBe('/flag');
  });

  it('keeps the config sources of an overridden data dir inside it, unless WISP_CONFIG_HOME or --config-dir says otherwise', () => {
    expect(resolvePaths({ platform: 'linux', homedir: home, env: { WISP_HOME: '/w', XDG_CONFIG_HOME: '/c' } }).configDir).toBe('/w/config');
    expect(resolvePaths({ platform: 'linux', homedir: home, env: { WISP_HOME: '/w', WISP_CONFIG_HOME: '/cfg' } }).configDir).toBe('/cfg');
    expect(resolvePaths({ platform: 'linux', homedir: home, env: { WISP_CONFIG_HOME: '/cfg' }, configDir: '/flag' }).configDir).toBe('/flag');
  });

  it('lets --socket and WISP_SOCKET override the socket', () => {
    expect(resolvePaths({ platform: 'linux', homedir: home, env: { WISP_SOCKET: '/tmp/x/s.sock' } })).toMatchObject({ socket: '/tmp/x/s.sock', runtimeDir: '/tmp/x' });
    expect(resolvePaths({ platform: 'linux', homedir: home, env: { WISP_SOCKET: '/a.sock' }, socket: '/b.sock' }).socket).toBe('/b.sock');
  });
});

describe('checkSocketPath', () => {
  it('allows 107 bytes on Linux and 103 on macOS, and refuses one more', () => {
    expect(() => checkSocketPath(`/${'a'.repeat(106)}`, 'linux')).not.toThrow();
    expect(() => checkSocketPath(`/${'a'.repeat(107)}`, 'linux')).toThrow(expect.objectContaining({ code: 'PATH_TOO_LONG' }));
    expect(() => checkSocketPath(`/${'a'.repeat(102)}`, 'darwin')).not.toThrow();
    expect(() => checkSocketPath(`/${'a'.repeat(103)}`, 'darwin')).toThrow(expect.objectContaining({ code: 'PATH_TOO_LONG' }));
  });

  it('counts bytes, not characters', () => {
    expect(() => checkSocketPath(`/${'é'.repeat(54)}`, 'linux')).toThrow(expect.objectContaining({ code: 'PATH_TOO_LONG' }));
  });
});

describe('a --data-dir or WISP_HOME that is the default data dir', () => {
  const home = '/home/ada';
  const env = { XDG_RUNTIME_DIR: '/run/user/1000', XDG_CONFIG_HOME: '/c' };
  const none = resolvePaths({ platform: 'linux', homedir: home, env });

  it('resolves what no flag resolves (the socket under XDG_RUNTIME_DIR, the config dir)', () => {
    expect(none.socket).toBe('/run/user/1000/wisp/wispd.sock');
    expect(resolvePaths({ platform: 'linux', homedir: home, env, dataDir: '/home/ada/.local/share/wisp' })).toEqual(none);
    expect(resolvePaths({ platform: 'linux', homedir: home, env, dataDir: '/home/ada/.local/share/wisp/' })).toEqual(none);
    expect(resolvePaths({ platform: 'linux', homedir: home, env: { ...env, WISP_HOME: '/home/ada/.local/share//wisp' } })).toEqual(none);
    expect(resolvePaths({ platform: 'darwin', homedir: '/Users/ada', env: {}, dataDir: '/Users/ada/Library/Application Support/Wisp' })).toEqual(resolvePaths({ platform: 'darwin', homedir: '/Users/ada', env: {} }));
  });

  it('any other data dir is still a separate instance', () => {
    expect(resolvePaths({ platform: 'linux', homedir: home, env, dataDir: '/home/ada/.local/share/wisp2' }).socket).toBe('/home/ada/.local/share/wisp2/run/wispd.sock');
  });
});
