import type { ClientCapabilities, ElicitRequest } from '@modelcontextprotocol/server';
import type { WispClient } from '../control/client.js';
import { WispError, type Elicitation, type ToolInfo } from '../core/index.js';
import { fromServer } from './catalog.js';
import { spendIdZero, type Extra, type Shared } from './client-requests.js';

/** A server's text is offered up to this many characters (the daemon keeps 4096 already). */
export const MAX_RELAYED_MESSAGE_CHARS = 4096;
/** A requested schema longer than this (as JSON) is not offered: it stays for Wisp's own UIs. */
export const MAX_RELAYED_SCHEMA_CHARS = 64 * 1024;
/** How long a relayed elicitation may stay open in the client; it stays open in Wisp after it. */
const ELICITATION_TIMEOUT_MS = 10 * 60_000;

/** Which elicitation modes the MCP client declared (form: `elicitation: {}` or `{form}`; url: `{url}`). */
export interface ElicitModes {
  readonly form: boolean;
  readonly url: boolean;
}

/** No elicitation mode: a 2026-07-28 client, which no request can be sent to. */
export const NO_ELICITATION: ElicitModes = { form: false, url: false };

export function elicitModes(capabilities: ClientCapabilities | undefined): ElicitModes {
  // The client's declaration is untrusted (a 2026 client's comes in every request's envelope): anything but an object declares nothing.
  const declared = capabilities?.elicitation as Record<string, unknown> | null | undefined;
  if (typeof declared !== 'object' || declared === null || Array.isArray(declared)) return { form: false, url: false };
  // An empty capability is form mode (the 2025-06-18 shape; the SDK turns it into {form: {}}).
  return { form: declared.form !== undefined || Object.keys(declared).length === 0, url: declared.url !== undefined };
}

/**
 * One gateway call's relay of its server's elicitations (elicitation/create during the call,
 * as the daemon's elicitation.requested announces them) to the MCP client, when the client
 * declared that mode. Only requests of this call's own service whose every owner is this
 * connection's own call (no session, no task, no other client: the server never chooses
 * whom it reaches); the message labelled as the server's, the schema as the daemon checked
 * it. The first answer wins at the daemon (elicitations.respond): the client's request is
 * withdrawn when the elicitation ends elsewhere (a Wisp UI answered, the call ended).
 */
export class ElicitRelay {
  private readonly open = new Map<string, AbortController>();

  constructor(
    private readonly client: WispClient,
    private readonly me: () => string | null,
    private readonly tool: ToolInfo,
    private readonly extra: Extra,
    private readonly shared: Shared,
    private readonly modes: ElicitModes,
  ) {}

  /** elicitation.requested while this call runs on its server (approved and sent). */
  requested(elicitation: Elicitation): void {
    if (this.shared.claimed.has(elicitation.id) || !this.mine(elicitation)) return;
    const params = this.params(elicitation);
    if (params === null) return;
    this.shared.claimed.add(elicitation.id);
    const controller = new AbortController();
    this.open.set(elicitation.id, controller);
    void this.offer(elicitation, params, controller.signal).finally(() => {
      this.open.delete(elicitation.id);
      this.shared.claimed.delete(elicitation.id);
    });
  }

  /** elicitation.resolved: answered (here or elsewhere) or cancelled; the client's request, if still open, is withdrawn. */
  resolved(elicitation: Elicitation): void {
    this.open.get(elicitation.id)?.abort();
  }

  stop(): void {
    for (const controller of this.open.values()) controller.abort();
  }

  private mine(elicitation: Elicitation): boolean {
    const me = this.me();
    return (
      me !== null &&
      elicitation.status === 'pending' &&
      elicitation.service.id === this.tool.serviceId &&
      elicitation.owners.length > 0 &&
      elicitation.owners.every((owner) => owner.clientId === me && owner.sessionId === null && owner.taskId === null) &&
      (elicitation.mode === 'url' ? this.modes.url : this.modes.form)
    );
  }

  /** The request the client is sent, or null when it cannot be offered whole (it then waits in Wisp's UIs). */
  private params(elicitation: Elicitation): ElicitRequest['params'] | null {
    const message = fromServer(this.tool.serviceName, elicitation.message.slice(0, MAX_RELAYED_MESSAGE_CHARS));
    if (elicitation.mode === 'url') {
      if (elicitation.url === null) return null;
      return { mode: 'url', message, url: elicitation.url, elicitationId: elicitation.id };
    }
    const schema = elicitation.requestedSchema;
    if (schema === null || JSON.stringify(schema).length > MAX_RELAYED_SCHEMA_CHARS) return null;
    // Form mode without `mode` (the field is newer than 2025-06-18 clients); the schema as the daemon checked it (flat, capped, compiled).
    return { message, requestedSchema: schema as Extract<ElicitRequest['params'], { requestedSchema: unknown }>['requestedSchema'] };
  }

  private async offer(elicitation: Elicitation, params: ElicitRequest['params'], signal: AbortSignal): Promise<void> {
    spendIdZero(this.extra, this.shared);
    let answer;
    try {
      answer = await this.extra.elicit(params, { signal, timeout: ELICITATION_TIMEOUT_MS });
    } catch {
      return; // withdrawn (answered elsewhere, the call ended), timed out, or the client failed it: it waits in Wisp
    }
    if (signal.aborted) return;
    const accept = answer.action === 'accept';
    const content = accept && elicitation.mode === 'form' ? { content: answer.content ?? {} } : {};
    try {
      await this.client.call('elicitations.respond', { id: elicitation.id, action: answer.action, ...content });
    } catch (error) {
      // Answered elsewhere first (ELICITATION_NOT_PENDING): ignored. Content that does not fit
      // the schema: the client's human answered, unusably; the server hears cancel, not silence.
      if (error instanceof WispError && error.code === 'ELICITATION_INVALID') {
        await this.client.call('elicitations.respond', { id: elicitation.id, action: 'cancel' }).catch(() => undefined);
      }
    }
  }
}
