import { describe, expect, it } from 'vitest';
import { refusalText } from '../../../src/core/index.js';

describe('a refused connection in words', () => {
  const service = { name: 'weather' };
  it('names the service, the destination and the command that grants it', () => {
    expect(refusalText({ service, host: 'api.example.com', port: 443, reason: 'not-granted', address: null, hint: 'wispctl mcp allow weather api.example.com' })).toBe(
      'weather tried to reach api.example.com:443: not granted — wispctl mcp allow weather api.example.com',
    );
  });
  it('brackets an IPv6 address, and says why a name that resolved near was refused (no hint: the proxy does not suggest granting it)', () => {
    expect(refusalText({ service, host: '::1', port: 8080, reason: 'not-granted', address: null, hint: null })).toBe('weather tried to reach [::1]:8080: not granted');
    expect(refusalText({ service, host: 'localhost', port: 80, reason: 'near-address', address: '127.0.0.1', hint: null })).toBe(
      'weather tried to reach localhost:80: the name resolved to 127.0.0.1 (loopback, link-local or private), which is reached only when granted by address',
    );
  });
});
