/**
 * A refused connection in words, as wispctl and the web panel show the network.refused
 * event: "weather tried to reach api.example.com:443: not granted — wispctl mcp allow
 * weather api.example.com". The caller escapes the line (every part but the port is text
 * a server or a user chose).
 */
export interface RefusalParts {
  readonly service: { readonly name: string };
  readonly host: string;
  readonly port: number;
  readonly reason: 'not-granted' | 'near-address' | 'too-many-connections';
  readonly address: string | null;
  readonly hint: string | null;
}

export function refusalText(refusal: RefusalParts): string {
  const where = `${refusal.host.includes(':') ? `[${refusal.host}]` : refusal.host}:${refusal.port}`;
  const why =
    refusal.reason === 'not-granted'
      ? 'not granted'
      : refusal.reason === 'near-address'
        ? `the name resolved to ${refusal.address ?? 'an address'} (loopback, link-local or private), which is reached only when granted by address`
        : 'too many of its connections were open at once';
  return `${refusal.service.name} tried to reach ${where}: ${why}${refusal.hint !== null ? ` — ${refusal.hint}` : ''}`;
}
