import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { ErrorCode } from '../core/index.js';

/** Why a transport closed or refused to go on by itself (a limit tripped, garbage on stdout, the process exited). */
export interface TransportFailure {
  readonly code: ErrorCode;
  readonly message: string;
}

/**
 * A throw out of handling one message from the server (the SDK's code or ours): the
 * connection fails with this, never the daemon.
 */
export function unhandledMessage(error: unknown, redact: ((text: string) => string) | undefined): TransportFailure {
  const reason = error instanceof Error ? error.message : String(error);
  return { code: 'PROTOCOL_ERROR', message: `the server's message could not be handled: ${(redact?.(reason) ?? reason).slice(0, 200)}` };
}

/**
 * Outermost around the handling of each message on `transport` (the SDK's and the call
 * channel's, installed after both): a throw goes to `onThrow` (the connection fails with it).
 * Over stdio it would otherwise escape the stdout handler and end the daemon (the stdio
 * transport catches it too, for the messages of initialize); the remote transports would
 * swallow it into onerror and leave the connection half-working.
 */
export function guardMessages(transport: Transport, onThrow: (error: unknown) => void): void {
  const handle = transport.onmessage;
  transport.onmessage = (message, extra) => {
    try {
      handle?.(message, extra);
    } catch (error) {
      onThrow(error);
    }
  };
}

/** What ended a connection, an activation or a call on the MCP layer, in the catalog's terms. */
export class Failure extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    /** The server answered with a JSON-RPC error: its code and (redacted) message. */
    readonly remote: { readonly code: number; readonly message: string } | null = null,
  ) {
    super(message);
  }

  /** The same failure told with another message (what it happened to, say); the server's own answer is not repeated. */
  restated(message: string): Failure {
    return new Failure(this.code, message);
  }
}

/**
 * The server wants a login (or more scope): the service waits in needs_auth instead of
 * failing. A type of its own, so the state it leads to is decided by type, not by a code.
 */
export class AuthRequired extends Failure {
  constructor(
    message: string,
    /** Where the server says to log in, when known. */
    readonly authorizationServer: string | null = null,
    /** The scope the server asked for (WWW-Authenticate), when known. */
    readonly scope: string | null = null,
  ) {
    super('NEEDS_AUTH', message);
  }

  override restated(message: string): AuthRequired {
    return new AuthRequired(message, this.authorizationServer, this.scope);
  }
}

/** A failure with `code`; NEEDS_AUTH always as AuthRequired, so no code reaches a caller untyped. */
export function failureOf(code: ErrorCode, message: string): Failure {
  return code === 'NEEDS_AUTH' ? new AuthRequired(message) : new Failure(code, message);
}
