import net from 'node:net';

/**
 * How near an address is to this machine: loopback (this machine), link-local (this link:
 * cloud metadata at 169.254.169.254 lives here), private (this network: RFC 1918, CGNAT,
 * unique-local IPv6), public (anything routed on the internet). `reserved` is never a
 * destination (multicast, documentation, benchmarking, the broadcast address...).
 */
export type AddressClass = 'loopback' | 'link-local' | 'private' | 'public' | 'reserved';

/** Farther from this machine is larger; a request may go no nearer than the service's own address. */
export const DISTANCE: Record<Exclude<AddressClass, 'reserved'>, number> = { loopback: 0, 'link-local': 1, private: 2, public: 3 };

type Range = readonly [prefix: readonly number[], bits: number, kind: AddressClass | 'v4-mapped' | 'v4-nat64' | 'v4-6to4'];

const V4: readonly Range[] = [
  [[0], 8, 'loopback'], // "this network": 0.0.0.0 reaches this machine
  [[10], 8, 'private'],
  [[100, 64], 10, 'private'], // carrier-grade NAT
  [[127], 8, 'loopback'],
  [[169, 254], 16, 'link-local'],
  [[172, 16], 12, 'private'],
  [[192, 0, 0], 24, 'reserved'],
  [[192, 0, 2], 24, 'reserved'],
  [[192, 88, 99], 24, 'reserved'],
  [[192, 168], 16, 'private'],
  [[198, 18], 15, 'reserved'],
  [[198, 51, 100], 24, 'reserved'],
  [[203, 0, 113], 24, 'reserved'],
  [[224], 4, 'reserved'], // multicast
  [[240], 4, 'reserved'], // reserved, and 255.255.255.255
];

const V6: readonly Range[] = [
  [[], 128, 'loopback'], // :: (unspecified: reaches this machine)
  [[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1], 128, 'loopback'],
  [[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff], 96, 'v4-mapped'],
  [[], 96, 'v4-mapped'], // ::a.b.c.d (IPv4-compatible, deprecated)
  [[0, 0x64, 0xff, 0x9b], 96, 'v4-nat64'],
  [[0, 0x64, 0xff, 0x9b, 0, 1], 48, 'private'], // local-use NAT64
  [[1, 0, 0, 0, 0, 0, 0, 0], 64, 'reserved'], // discard
  [[0x20, 0x01, 0x0d, 0xb8], 32, 'reserved'], // documentation
  [[0x20, 0x01], 23, 'reserved'], // IETF protocol assignments (Teredo among them)
  [[0x20, 0x02], 16, 'v4-6to4'],
  [[0xfc], 7, 'private'], // unique local
  [[0xfe, 0x80], 10, 'link-local'],
  [[0xfe, 0xc0], 10, 'private'], // site-local (deprecated)
  [[0xff], 8, 'reserved'], // multicast
];

/** The class of an IP address (v4 or v6, an IPv6 zone ignored); a text that is no IP address is `reserved`. */
export function addressClass(address: string): AddressClass {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = net.isIP(bare);
  if (family === 4) return classify(V4, v4Bytes(bare));
  if (family !== 6) return 'reserved';
  const bytes = v6Bytes(bare);
  const kind = match(V6, bytes);
  if (kind === 'v4-mapped' || kind === 'v4-nat64') return classify(V4, bytes.slice(12));
  if (kind === 'v4-6to4') return classify(V4, bytes.slice(2, 6));
  return kind ?? 'public';
}

function classify(ranges: readonly Range[], bytes: readonly number[]): AddressClass {
  const kind = match(ranges, bytes);
  return kind === undefined || kind.startsWith('v4-') ? 'public' : (kind as AddressClass);
}

function match(ranges: readonly Range[], bytes: readonly number[]): Range[2] | undefined {
  return ranges.find(([prefix, bits]) => within(bytes, prefix, bits))?.[2];
}

function within(bytes: readonly number[], prefix: readonly number[], bits: number): boolean {
  for (let bit = 0; bit < bits; bit += 8) {
    const left = Math.min(8, bits - bit);
    const mask = (0xff << (8 - left)) & 0xff;
    if (((bytes[bit / 8] ?? 0) & mask) !== ((prefix[bit / 8] ?? 0) & mask)) return false;
  }
  return true;
}

function v4Bytes(text: string): number[] {
  return text.split('.').map(Number);
}

/** The 16 bytes of a valid IPv6 address (net.isIP checked it): a dotted IPv4 tail made two groups, `::` expanded. */
function v6Bytes(text: string): number[] {
  const hex = text.replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, (_all, a: string, b: string, c: string, d: string) =>
    `${((Number(a) << 8) | Number(b)).toString(16)}:${((Number(c) << 8) | Number(d)).toString(16)}`,
  );
  const [left = '', right] = hex.split('::');
  const groups = (part: string): number[] => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  const l = groups(left);
  const r = right !== undefined ? groups(right) : [];
  const words = [...l, ...Array<number>(Math.max(0, 8 - l.length - r.length)).fill(0), ...r];
  return words.flatMap((w) => [w >> 8, w & 0xff]);
}
