import { describe, expect, it } from 'vitest';
import { addressProblem, authorize, connectTarget, forwardTarget, type EgressResolve } from '../../../src/mcp/sandbox/egress-destination.js';
import { askingDecider, canonicalHost, formatEgressGrant, grantsDecider, parseEgressGrant, type EgressDecision, type EgressGrant } from '../../../src/mcp/sandbox/egress-grants.js';

function grant(text: string): EgressGrant {
  const parsed = parseEgressGrant(text);
  if (!parsed.ok) throw new Error(parsed.reason);
  return parsed.grant;
}

describe('egress grants', () => {
  it.each([
    ['api.example.com', 'api.example.com', 'name', 'web'],
    ['API.Example.COM.', 'api.example.com', 'name', 'web'],
    ['api.example.com:8443', 'api.example.com', 'name', 8443],
    ['*.example.com', 'example.com', 'wildcard', 'web'],
    ['*.example.com:443', 'example.com', 'wildcard', 443],
    ['127.0.0.1:3000', '127.0.0.1', 'address', 3000],
    ['127.1:3000', '127.0.0.1', 'address', 3000],
    ['0x7f.1', '127.0.0.1', 'address', 'web'],
    ['2130706433', '127.0.0.1', 'address', 'web'],
    ['[::1]:8080', '::1', 'address', 8080],
    ['[0:0::1]', '::1', 'address', 'web'],
    ['::1', '::1', 'address', 'web'],
    ['[::ffff:127.0.0.1]:80', '::ffff:7f00:1', 'address', 80],
    ['under_score.example.com', 'under_score.example.com', 'name', 'web'],
  ])('%s is the grant of %s (%s) at %s', (text, host, kind, port) => {
    expect(grant(text)).toEqual({ host, kind, port });
  });

  it.each([
    ['', 'a host has 1'],
    ['*.com', 'two labels'],
    ['*.127.0.0.1', 'not an IP address'],
    ['api.example.com:0', 'port is a number'],
    ['api.example.com:65536', 'port is a number'],
    ['api.example.com:+1', 'port is a number'],
    ['api.example.com:', 'port is a number'],
    ['a b.example.com', 'only letters'],
    ['ex%41mple.com', 'only letters'],
    ['user@example.com', 'only letters'],
    ['example.com/path', 'only letters'],
    ['[fe80::1%eth0]:80', 'IPv6 zone'],
    ['[::1', 'not host[:port]'],
    ['[::1]x', 'not host[:port]'],
    ['foo.123', 'not a host name'],
    ['a..example.com', '1 to 63'],
    [`${'a'.repeat(64)}.example.com`, '1 to 63'],
    ['\u0000example.com', 'only letters'],
  ])('%j is refused: %s', (text, reason) => {
    const parsed = parseEgressGrant(text);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.reason).toContain(reason);
  });

  it('shows a grant as it would be typed again', () => {
    for (const text of ['api.example.com', '*.example.com:8443', '[::1]:3000', '10.0.0.5:22']) expect(formatEgressGrant(grant(text))).toBe(text);
  });

  it('a grant without a port covers 443 and 80; with one, only that port; a wildcard only names under its domain', async () => {
    const decide = grantsDecider(() => [grant('api.example.com'), grant('*.cdn.example.net'), grant('db.example.org:5432'), grant('127.0.0.1:3000')]);
    const signal = new AbortController().signal;
    const cases: [string, number, 'allow' | 'deny'][] = [
      ['api.example.com', 443, 'allow'],
      ['api.example.com', 80, 'allow'],
      ['api.example.com', 8443, 'deny'],
      ['other.example.com', 443, 'deny'],
      ['a.cdn.example.net', 443, 'allow'],
      ['a.b.cdn.example.net', 443, 'allow'],
      ['cdn.example.net', 443, 'deny'],
      ['evilcdn.example.net', 443, 'deny'],
      ['db.example.org', 5432, 'allow'],
      ['db.example.org', 443, 'deny'],
      ['127.0.0.1', 3000, 'allow'],
      ['::ffff:7f00:1', 3000, 'deny'],
      ['localhost', 3000, 'deny'],
      ['127.0.0.1', 3001, 'deny'],
    ];
    for (const [host, port, expected] of cases) expect([host, port, await decide(host, port, signal)]).toEqual([host, port, expected]);
  });

  it('reads the grant list on every request (a grant added takes effect at once)', async () => {
    const grants: EgressGrant[] = [];
    const decide = grantsDecider(() => grants);
    const signal = new AbortController().signal;
    expect(await decide('api.example.com', 443, signal)).toBe('deny');
    grants.push(grant('api.example.com'));
    expect(await decide('api.example.com', 443, signal)).toBe('allow');
  });

  it('canonical hosts: legacy IPv4 spellings are addresses, names are lowercase', () => {
    expect(canonicalHost('127.000.000.001')).toEqual({ kind: 'address', host: '127.0.0.1' });
    expect(canonicalHost('LOCALHOST.')).toEqual({ kind: 'name', host: 'localhost' });
    expect(canonicalHost('[::FFFF:7F00:1]')).toEqual({ kind: 'address', host: '::ffff:7f00:1' });
  });
});

describe('egress targets and the address rule', () => {
  it('a CONNECT names host:port; a forwarded request an absolute http:// URL', () => {
    expect(connectTarget('api.example.com:443')).toEqual({ host: 'api.example.com', port: 443, byAddress: false });
    expect(connectTarget('[::1]:8080')).toEqual({ host: '::1', port: 8080, byAddress: true });
    expect(connectTarget('api.example.com')).toBeUndefined();
    expect(connectTarget('api.example.com:99999')).toBeUndefined();
    expect(forwardTarget('http://Example.com/a?b=1')).toEqual({ target: { host: 'example.com', port: 80, byAddress: false }, path: '/a?b=1', authority: 'example.com' });
    expect(forwardTarget('http://127.0.0.1:8080/')).toMatchObject({ target: { host: '127.0.0.1', port: 8080, byAddress: true } });
    expect(forwardTarget('https://example.com/')).toEqual({ problem: expect.stringContaining('CONNECT') });
    expect(forwardTarget('/relative')).toEqual({ problem: expect.stringContaining('absolute') });
  });

  it.each([
    ['8.8.8.8', false, undefined],
    ['2606:4700:4700::1111', false, undefined],
    ['127.0.0.1', false, 'a loopback address'],
    ['::1', false, 'a loopback address'],
    ['::ffff:127.0.0.1', false, 'a loopback address'],
    ['169.254.169.254', false, 'a link-local address'],
    ['fe80::1', false, 'a link-local address'],
    ['10.0.0.5', false, 'a private address'],
    ['100.64.1.1', false, 'a private address'],
    ['fd00::1', false, 'a private address'],
    ['127.0.0.1', true, undefined],
    ['10.0.0.5', true, undefined],
    ['0.0.0.0', true, 'unspecified'],
    ['0.1.2.3', true, 'unspecified'],
    ['::', true, 'unspecified'],
    ['::ffff:0.0.0.0', true, 'unspecified'],
    ['224.0.0.1', true, 'reserved'],
    ['255.255.255.255', true, 'reserved'],
    ['ff02::1', true, 'reserved'],
  ])('%s (granted by address: %s): %s', (address, byAddress, problem) => {
    const found = addressProblem(address, byAddress);
    if (problem === undefined) expect(found).toBeUndefined();
    else expect(found).toContain(problem);
  });

  it('decides before resolving: a name not granted is never looked up', async () => {
    const looked: string[] = [];
    const resolve: EgressResolve = (host) => {
      looked.push(host);
      return Promise.resolve(['93.184.216.34']);
    };
    const deny = (): Promise<'deny'> => Promise.resolve('deny');
    const signal = new AbortController().signal;
    const refused = await authorize({ host: 'secret-canary.attacker.example', port: 443, byAddress: false }, deny, resolve, signal);
    expect(refused).toMatchObject({ ok: false, reason: 'not-granted', status: 403 });
    expect(looked).toEqual([]);
  });

  it('a granted name is refused when any of its addresses is near, and a decider that throws denies', async () => {
    const allow = (): Promise<'allow'> => Promise.resolve('allow');
    const signal = new AbortController().signal;
    const resolve: EgressResolve = () => Promise.resolve(['93.184.216.34', '10.0.0.5']);
    expect(await authorize({ host: 'rebind.example.com', port: 443, byAddress: false }, allow, resolve, signal)).toMatchObject({ ok: false, reason: 'near-address', address: '10.0.0.5' });
    const broken = (): Promise<'allow'> => Promise.reject(new Error('the approval store is gone'));
    expect(await authorize({ host: 'api.example.com', port: 443, byAddress: false }, broken, resolve, signal)).toMatchObject({ ok: false, reason: 'not-granted' });
    const none: EgressResolve = () => Promise.reject(Object.assign(new Error('no such name'), { code: 'ENOTFOUND' }));
    expect(await authorize({ host: 'gone.example.com', port: 443, byAddress: false }, allow, none, signal)).toMatchObject({ ok: false, outcome: 'failed', status: 502, message: expect.stringContaining('ENOTFOUND') });
  });

  it('allow-resolved (an install\'s registry, the user\'s own setting) connects wherever the name resolves, never to an unspecified address', async () => {
    const registry = (): Promise<'allow-resolved'> => Promise.resolve('allow-resolved');
    const signal = new AbortController().signal;
    // What this project's CI machine answers for registry.npmjs.org (its TLS-intercepting proxy).
    const intercepted: EgressResolve = () => Promise.resolve(['203.0.113.80']);
    expect(await authorize({ host: 'registry.npmjs.org', port: 443, byAddress: false }, registry, intercepted, signal)).toEqual({ ok: true, addresses: ['203.0.113.80'] });
    // The same answer for a service's grant is refused.
    const allow = (): Promise<'allow'> => Promise.resolve('allow');
    expect(await authorize({ host: 'registry.npmjs.org', port: 443, byAddress: false }, allow, intercepted, signal)).toMatchObject({ ok: false, reason: 'near-address' });
    const unspecified: EgressResolve = () => Promise.resolve(['0.0.0.0']);
    expect(await authorize({ host: 'registry.example', port: 443, byAddress: false }, registry, unspecified, signal)).toMatchObject({ ok: false, reason: 'near-address', address: '0.0.0.0' });
  });
});

describe('the ask decider', () => {
  interface Asked {
    readonly host: string;
    readonly port: number;
    readonly signal: AbortSignal;
    readonly answer: (decision: EgressDecision) => void;
  }
  function setup(granted: EgressGrant[] = []): { decide: ReturnType<typeof askingDecider>; asked: Asked[] } {
    const asked: Asked[] = [];
    const decide = askingDecider(
      () => granted,
      (host, port, signal) => new Promise((answer) => asked.push({ host, port, signal, answer })),
    );
    return { decide, asked };
  }

  it('asks nothing for a granted host, and once for connections to the same host and port while the question is open', async () => {
    const { decide, asked } = setup([grant('api.example.com')]);
    const live = new AbortController().signal;
    expect(await decide('api.example.com', 443, live)).toBe('allow');
    expect(asked).toEqual([]);
    const first = decide('other.example.com', 443, live);
    const second = decide('other.example.com', 443, live);
    const elsewhere = decide('other.example.com', 8443, live);
    await expect.poll(() => asked.length).toBe(2);
    expect(asked.map((question) => [question.host, question.port])).toEqual([
      ['other.example.com', 443],
      ['other.example.com', 8443],
    ]);
    asked[0]?.answer('allow');
    asked[1]?.answer('deny');
    expect(await Promise.all([first, second, elsewhere])).toEqual(['allow', 'allow', 'deny']);
    // Answered once: the next connection asks again (an "always" answer is a grant the caller records).
    void decide('other.example.com', 443, live);
    await expect.poll(() => asked.length).toBe(3);
  });

  it('withdraws the question when every connection waiting on it has gone, and denies those', async () => {
    const { decide, asked } = setup();
    const one = new AbortController();
    const two = new AbortController();
    const first = decide('api.example.com', 443, one.signal);
    const second = decide('api.example.com', 443, two.signal);
    await expect.poll(() => asked.length).toBe(1);
    one.abort();
    expect(await first).toBe('deny');
    expect(asked[0]?.signal.aborted).toBe(false);
    two.abort();
    expect(await second).toBe('deny');
    expect(asked[0]?.signal.aborted).toBe(true);
    void decide('api.example.com', 443, new AbortController().signal);
    await expect.poll(() => asked.length).toBe(2);
  });

  it('denies when asking fails', async () => {
    const decide = askingDecider(() => [], () => Promise.reject(new Error('no client attached')));
    expect(await decide('api.example.com', 443, new AbortController().signal)).toBe('deny');
  });
});
