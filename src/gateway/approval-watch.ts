import type { WispClient } from '../control/client.js';
import type { Approval, ToolInfo, WispEvent } from '../core/index.js';
import { approvalQuestion, decisionOf } from './approval-question.js';
import { fromServer } from './catalog.js';
import { spendIdZero, type Extra, type Shared } from './client-requests.js';
import { ElicitRelay, type ElicitModes } from './elicit-relay.js';
import type { DaemonLink } from './link.js';

export type { Extra, Shared } from './client-requests.js';

/** While a call waits, a progress notification this often (when the client asked for progress), so its timeout does not fire. */
export const PROGRESS_EVERY_MS = 5000;
/** How long an elicitation may stay open in the client; the approval itself stays open in Wisp after it. */
const ELICITATION_TIMEOUT_MS = 10 * 60_000;

/**
 * How a call's approval is offered to its client besides Wisp: not at all; as an elicitation
 * (a 2025 client, `--approve-in-client`); or handed to the call's 2026 round (rounds.ts), which
 * answers the request with it.
 */
export type ApprovalOffer = boolean | ((approval: Approval) => void);

/**
 * What one tools/call does while the daemon waits for its approval: it finds the approval
 * (approval.requested, asked by this connection, for this tool), sends progress
 * notifications when the client gave a progressToken, and with --approve-in-client offers
 * the approval to the client as an elicitation. The first answer wins at the daemon
 * (approvals.respond); the elicitation is withdrawn when the approval ends elsewhere.
 * Once the call runs, its server's own elicitations go to the client too (ElicitRelay).
 */
export class ApprovalWatch {
  private approvalId: string | null = null;
  private elicitation: AbortController | null = null;
  private progress = 0;
  /** The approval this call ran on (approved): the server's progress reports of that call are relayed. */
  private ran: string | null = null;
  /** Where the server's own progress starts in this token's count (set at its first report: each report is then offset + its progress). */
  private offset: number | null = null;
  private timer: NodeJS.Timeout | null;
  private readonly unsubscribe: () => void;
  /** The server's elicitations during this call, offered to the client when it declared their mode. */
  private readonly serverAsks: ElicitRelay;

  constructor(
    private readonly link: DaemonLink,
    private readonly client: WispClient,
    private readonly tool: ToolInfo,
    private readonly extra: Extra,
    private readonly shared: Shared,
    private readonly elicit: ApprovalOffer,
    modes: ElicitModes,
  ) {
    this.serverAsks = new ElicitRelay(client, () => link.me, tool, extra, shared, modes);
    this.unsubscribe = link.onEvent((event) => this.onEvent(event));
    this.timer = extra.progressToken !== undefined ? setInterval(() => this.notify(this.approvalId !== null ? 'waiting for approval in Wisp' : 'running'), PROGRESS_EVERY_MS) : null;
    this.timer?.unref();
  }

  /** The approval this call ran on, once approved: a server's log message during the call names it (notices.ts). */
  get approval(): string | null {
    return this.ran;
  }

  stop(): void {
    this.unsubscribe();
    if (this.timer !== null) clearInterval(this.timer);
    this.elicitation?.abort();
    this.serverAsks.stop();
    if (this.approvalId !== null) this.shared.claimed.delete(this.approvalId);
  }

  private onEvent(event: WispEvent): void {
    if (event.type === 'approval.requested') {
      const approval = event.approval;
      if (this.approvalId !== null || this.shared.claimed.has(approval.id) || !this.mine(approval)) return;
      this.approvalId = approval.id;
      this.shared.claimed.add(approval.id);
      this.notify(`waiting for approval in Wisp (approval ${approval.id})`);
      if (this.elicit === true) this.offer(approval).catch(() => undefined);
      else if (this.elicit !== false) this.elicit(approval);
    } else if (event.type === 'elicitation.requested' && this.ran !== null) {
      this.serverAsks.requested(event.elicitation);
    } else if (event.type === 'elicitation.resolved') {
      this.serverAsks.resolved(event.elicitation);
    } else if (event.type === 'tool.call.progress' && this.ran !== null && event.call.approvalId === this.ran) {
      this.relay(event.progress, event.total, event.message);
    } else if (event.type === 'approval.resolved' && event.approval.id === this.approvalId) {
      if (event.approval.state.status === 'approved') this.ran = event.approval.id;
      this.shared.claimed.delete(event.approval.id);
      this.approvalId = null;
      this.elicitation?.abort();
      this.elicitation = null;
      this.notify(`approval ${event.approval.state.status}`);
    }
  }

  private mine(approval: Approval): boolean {
    return (
      approval.kind === 'tool_call' &&
      approval.requester.clientId === this.link.me &&
      approval.summary.modelName === this.tool.modelName &&
      approval.binding.serviceId === this.tool.serviceId
    );
  }

  private notify(message: string): void {
    const progressToken = this.extra.progressToken;
    if (progressToken === undefined) return;
    this.progress += 1;
    this.extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress: this.progress, message } }).catch(() => undefined);
  }

  /**
   * The server's own progress report, on the client's token: its numbers after what this token
   * counted already (MCP wants them increasing), its message labelled as the server's. From the
   * first one on, the gateway's own "running" reports stop: the server's keep the client waiting.
   */
  private relay(progress: number, total: number | null, message: string | null): void {
    const progressToken = this.extra.progressToken;
    if (progressToken === undefined) return;
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    this.offset ??= this.progress;
    const value = this.offset + progress;
    if (value <= this.progress) return;
    this.progress = value;
    const params = {
      progressToken,
      progress: value,
      ...(total !== null ? { total: this.offset + total } : {}),
      ...(message !== null ? { message: fromServer(this.tool.serviceName, message) } : {}),
    };
    this.extra.sendNotification({ method: 'notifications/progress', params }).catch(() => undefined);
  }

  /** The approval as an elicitation: approve or deny, with the service, tool and the exact arguments the daemon shows. */
  private async offer(approval: Approval): Promise<void> {
    const question = approvalQuestion(approval);
    if (question === undefined) {
      this.notify('the arguments are too long to show here: answer the approval in Wisp');
      return;
    }
    const controller = new AbortController();
    this.elicitation = controller;
    spendIdZero(this.extra, this.shared);
    let answer;
    try {
      answer = await this.extra.elicit(question, { signal: controller.signal, timeout: ELICITATION_TIMEOUT_MS });
    } catch {
      return; // withdrawn (answered elsewhere, the call ended), timed out, or the client failed it: the approval waits in Wisp
    }
    const decision = decisionOf(answer);
    if (controller.signal.aborted || decision === undefined) return;
    // Another client may have answered first: then this answer is refused (APPROVAL_NOT_PENDING) and ignored.
    await this.client.call('approvals.respond', { id: approval.id, decision }).catch(() => undefined);
  }
}
