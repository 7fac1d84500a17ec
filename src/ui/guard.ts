import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * The panel's door checks. Loopback TCP is open to every user on the machine and to any
 * web page the browser runs, unlike the daemon's 0700 socket, so every request proves it
 * comes from the person who started `wispctl ui`: the one-time token, then the cookie it
 * was exchanged for; its Host names our own address (a DNS-rebound name is refused); a
 * request that changes anything carries our own Origin.
 */

/** A fresh secret: 32 random bytes, base64url. */
export function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** Constant-time comparison of two secrets (different lengths compare unequal). */
export function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Headers on every answer: no framing, no sniffing, no referrer, no inline code, no cache. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; font-src 'none'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Cache-Control': 'no-store',
};

/** Methods that only read: every other method must carry our own Origin. */
const SAFE_METHODS = new Set(['GET', 'HEAD']);

export interface Door {
  /** `127.0.0.1:PORT` and, when bound, `[::1]:PORT`: the only Host values accepted. */
  readonly hosts: ReadonlySet<string>;
  /** The cookie's name: per port, since browsers share cookies across ports of one host. */
  readonly cookieName: string;
}

/** Why a request is turned away, or null when it passed. */
export type Refusal = { readonly status: 401 | 403; readonly message: string } | null;

export function hostRefusal(req: IncomingMessage, door: Door): Refusal {
  const host = req.headers.host ?? '';
  return door.hosts.has(host) ? null : { status: 403, message: 'this panel answers only to its own loopback address (Host refused)' };
}

export function originRefusal(req: IncomingMessage): Refusal {
  if (SAFE_METHODS.has(req.method ?? '')) return null;
  const origin = req.headers.origin;
  // The Host was checked first, so it is one of ours; the Origin must be the same one.
  return origin !== undefined && origin === `http://${req.headers.host ?? ''}` ? null : { status: 403, message: 'a request that changes something must come from this panel\'s own page (Origin refused)' };
}

/** The value of one cookie, or undefined. */
export function readCookie(req: IncomingMessage, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq !== -1 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

export function sessionCookie(name: string, value: string): string {
  return `${name}=${value}; HttpOnly; SameSite=Strict; Path=/`;
}

/** Writes a short plain-text refusal (or any plain answer) with the security headers. */
export function plain(res: ServerResponse, status: number, message: string, extra: Record<string, string> = {}): void {
  res.writeHead(status, { ...SECURITY_HEADERS, 'Content-Type': 'text/plain; charset=utf-8', ...extra });
  res.end(`${message}\n`);
}
