import { randomUUID } from 'node:crypto';
import type { ErrorObject } from 'ajv';
import type { Approval, Approvals, Requester, ToolCallBinding } from '../approvals/index.js';
import { LIMITS, WispError, type ToolCallResult, type ToolWarning } from '../core/index.js';
import type { McpEvent } from './events.js';
import { canonicalJson, isoTime, nestsDeeperThan, sha256Hex, type CallSignal } from '../util/index.js';
import { Failure } from './failure.js';
import { checkStructured, normalizeResult } from './result.js';
import type { Supervisor } from './supervisor.js';
import { CallClock } from './call-clock.js';
import type { Elicitations } from './elicitations.js';
import type { CatalogTool } from './tool-catalog.js';

export interface CallRequest {
  /** A tool from a task's snapshot: the call is bound to it, and refused if the live tool changed since. */
  readonly tool?: CatalogTool | undefined;
  readonly modelName?: string | undefined;
  readonly serviceId?: string | undefined;
  readonly toolName?: string | undefined;
  /** The service's name, for messages (the supervisor knows only services it ran). */
  readonly serviceName?: string | undefined;
  readonly arguments: Record<string, unknown>;
  /** Whether the result's media pass whole, asked of the called tool's service (absent: markers, as for every model). */
  readonly media?: ((serviceId: string) => boolean) | undefined;
  readonly requester: Requester;
  readonly signal: CallSignal;
  /**
   * Aborts `signal`, when it belongs to this call alone (a socket request's): the call then
   * follows a stop of its service through it, and needs no signal of its own (an
   * AbortController costs about 4 us on Node 20). Without it, a linked one is made.
   */
  readonly abort?: ((reason: unknown) => void) | undefined;
  /** Told the approval's id once it is requested (a task shows it as awaiting_approval). */
  readonly onApprovalRequested?: ((approvalId: string) => void) | undefined;
}

/** How many times one call is asked about, when its tool list keeps changing under it. */
export const MAX_ASKS_PER_CALL = 4;

export interface ToolCallsOptions {
  readonly supervisor: Supervisor;
  readonly approvals: Approvals;
  /** Where a call's start and end are announced. */
  readonly publish: (event: McpEvent) => void;
  /**
   * Appends a record; resolves true once it is written, false when it could not be. A call
   * is sent only after its `started` record is written, and answered only after its outcome's.
   */
  readonly audit: (record: Record<string, unknown>) => Promise<boolean>;
  /** Replaces known secret values in every string of a result before anyone sees it. */
  readonly redact: <T>(value: T) => T;
  readonly now: () => Date;
  /** Told when a call to a server runs and ends: an elicitation belongs to the calls running on its service. */
  readonly elicitations?: Pick<Elicitations, 'callRunning'> | undefined;
}

/**
 * The one call pipeline, for front-ends (tools.call) and model sessions alike:
 * catalog check -> size and schema check (no approval for a bad call) -> approval, waited
 * for -> binding re-checked and the approval consumed -> the call, once -> normalised
 * result. Cancel and timeout close the connection; nothing is retried.
 *
 * Tool-list changes: while the service's list is changing (declared changed, the new one
 * not in yet) nothing is shown and no approval is spent; the call waits for the new list.
 * An approval is bound to the tool-list version it was shown at and never crosses to
 * another: when the tool is unchanged in every detail (same definition digest) the call is
 * asked about again at the new version; a changed or vanished tool makes it stale.
 */
/** A call's progress events are at most this often (a server may report thousands a second). */
const PROGRESS_EVERY_MS = 250;

export class ToolCalls {
  constructor(private readonly options: ToolCallsOptions) {}

  async call(request: CallRequest): Promise<ToolCallResult> {
    // First of all (the schema check, digests and redaction recurse): a model's arguments come here unchecked.
    if (nestsDeeperThan(request.arguments, LIMITS.maxArgumentDepth)) {
      throw new WispError('INVALID_ARGUMENTS', `the arguments nest deeper than ${LIMITS.maxArgumentDepth} levels`, { limit: 'maxArgumentDepth', max: LIMITS.maxArgumentDepth });
    }
    let found = this.find(request);
    if (this.options.supervisor.changing(found)) {
      // The server declared its list changed: show nothing from the old one.
      await this.settle(found, request.signal);
      found = this.find(request);
    }
    const checked = this.check(request, found);
    const args = request.arguments;
    const argumentsDigest = sha256Hex(canonicalJson(args));
    const callId = randomUUID();
    const call: CallInProgress = {
      ref: {
        callId,
        service: { id: checked.serviceId, name: checked.serviceName },
        toolName: checked.name,
        modelName: checked.modelName,
        argumentsDigest,
        requester: request.requester,
      },
      started: Date.now(),
      approvalId: '',
    };
    const { tool, binding } = await this.approve(call, checked, request);

    // On record before it runs: a call whose record cannot be written is not sent. Before the
    // binding's last check, so that nothing the server says can come between it and the send.
    if (!(await this.options.audit(auditRecord(this.options.now(), call.ref, call.approvalId, 'started', timesOf(call))))) {
      this.options.approvals.cancelWhere((a) => a.id === call.approvalId, 'the audit log cannot be written');
      return this.fail(call, new WispError('STORAGE_FAILED', 'the audit log cannot be written (the disk may be full; see the daemon log): the call was not sent'));
    }
    // The binding is checked again at the moment of execution, against the live catalog.
    const current = this.options.supervisor.tool(tool.modelName);
    const now: ToolCallBinding = {
      serviceId: binding.serviceId,
      generation: current?.generation ?? -1,
      toolListVersion: current?.toolListVersion ?? -1,
      toolName: binding.toolName,
      argumentsDigest: binding.argumentsDigest,
    };
    try {
      this.options.approvals.consume(call.approvalId, now);
    } catch (error) {
      return this.fail(call, error instanceof WispError ? error : new WispError('APPROVAL_STALE', String(error)));
    }
    return this.execute(call, tool, args, request.signal, request.abort, request.media?.(tool.serviceId) === true);
  }

  /**
   * What is refused before anyone is asked (after nesting too deep and an unknown tool, in
   * `call`): arguments too large or not matching the schema. Synchronous: an await costs every call.
   */
  private check(request: CallRequest, tool: CatalogTool): CatalogTool {
    const args = request.arguments;
    const serialized = JSON.stringify(args);
    const size = Buffer.byteLength(serialized);
    if (size > LIMITS.maxCallArgumentBytes) {
      throw new WispError('LIMIT_EXCEEDED', `the arguments are ${size} bytes (at most ${LIMITS.maxCallArgumentBytes})`, {
        limit: 'maxCallArgumentBytes',
        max: LIMITS.maxCallArgumentBytes,
      });
    }
    if (!tool.validate(args)) {
      const errors = describe(tool.validate.errors);
      throw new WispError('INVALID_ARGUMENTS', `the arguments do not match the input schema of ${tool.name}: ${errors.map((e) => `${e.path} ${e.message}`).join('; ')}`, {
        errors,
      });
    }
    return tool;
  }

  /**
   * Asks until an approval holds for the tool list as it is now: asked again (at most
   * MAX_ASKS_PER_CALL times) while the tool stays the same in every detail and only its
   * list version moves. Resolves with the tool and binding approved; `call.approvalId` is that approval.
   */
  private async approve(call: CallInProgress, first: CatalogTool, request: CallRequest): Promise<{ tool: CatalogTool; binding: ToolCallBinding }> {
    const { supervisor, approvals } = this.options;
    let tool = first;
    for (let asked = 1; ; asked++) {
      const binding: ToolCallBinding = { serviceId: tool.serviceId, generation: tool.generation, toolListVersion: tool.toolListVersion, toolName: tool.name, argumentsDigest: call.ref.argumentsDigest };
      const approval = approvals.create(request.requester, binding, {
        serviceName: tool.serviceName,
        toolName: tool.name,
        modelName: tool.modelName,
        title: tool.title,
        arguments: request.arguments,
        annotations: tool.annotations,
        ...warningsOf(supervisor.warnings(tool)),
      });
      call.approvalId = approval.id;
      request.onApprovalRequested?.(approval.id);
      const refused = refusalOf(await approvals.wait(approval.id, request.signal), tool.name);
      if (refused !== undefined) return this.fail(call, refused);
      // No approval of a service whose tool list is changing is spent: wait for the new list
      // (its refresh's error, if it fails, is this call's).
      if (!supervisor.steady(tool)) {
        try {
          await this.settle(tool, request.signal);
        } catch (error) {
          return this.fail(call, error as WispError);
        }
      }
      const live = supervisor.tool(tool.modelName);
      const state = approvals.get(approval.id).state;
      if (state.status === 'approved' && live?.generation === tool.generation && live.toolListVersion === tool.toolListVersion) return { tool, binding };
      // The list changed while the call waited: this approval is spent on nothing.
      if (state.status === 'approved') approvals.staleWhere((a) => a.id === approval.id, `the tool list of ${tool.serviceName} changed`);
      const unchanged = live?.generation === tool.generation && live.definitionDigest === tool.definitionDigest;
      if (!unchanged || asked >= MAX_ASKS_PER_CALL) {
        const why = !unchanged ? `${tool.serviceName}/${tool.name} changed or went away` : `the tool list of ${tool.serviceName} kept changing`;
        return this.fail(call, new WispError('APPROVAL_STALE', `${why} while the call waited (its approval was for tool-list version ${tool.toolListVersion}); nothing was sent`, { approvalId: approval.id }));
      }
      // The same tool in every detail: asked about again, bound to the new version.
      tool = live;
    }
  }

  /** The call, once; its result normalised. A timeout or cancel closes the connection. */
  private async execute(call: CallInProgress, tool: CatalogTool, args: Record<string, unknown>, signal: CallSignal, abort: ((reason: unknown) => void) | undefined, media: boolean): Promise<ToolCallResult> {
    const { supervisor } = this.options;
    const approvalId = call.approvalId;
    call.sent = Date.now();
    this.options.publish({ kind: 'call.started', call: wireRef(call.ref, approvalId) });
    let raw;
    // While it runs, what its server asks the user (elicitation) belongs to this call's requester,
    // and the call's time limit stops while such a request waits for the human.
    const clock = new CallClock();
    // The server's progress reports reach the caller (a gateway relays them to its client), at most one every PROGRESS_EVERY_MS.
    let reported = 0;
    clock.onReport = (report) => {
      const now = Date.now();
      if (now - reported < PROGRESS_EVERY_MS) return;
      reported = now;
      this.options.publish({ kind: 'call.progress', call: wireRef(call.ref, approvalId), ...report });
    };
    const running = this.options.elicitations?.callRunning(tool.serviceId, call.ref.requester, clock);
    try {
      raw = await supervisor.callTool(tool, args, signal, abort, clock);
      running?.();
    } catch (error) {
      running?.();
      const failure =
        error instanceof Failure
          ? new WispError(error.code, error.message, error.remote !== null ? { server: { ...error.remote } } : {})
          : error instanceof WispError
            ? error
            : new WispError('INTERNAL_ERROR', String(error));
      if (failure.code === 'TIMEOUT' || failure.code === 'CANCELLED') {
        // The seed's rule: a call cut short closes its connection. Said where the user sees the
        // service failed (CLI, panel, events), with the way back.
        const how = failure.code === 'TIMEOUT' ? 'timed out' : 'cancelled';
        supervisor.failConnection(tool.serviceId, tool.generation, failure.code, `a call to ${tool.name} was ${how}, so the connection was closed; start it again with: wispctl mcp restart ${tool.serviceName}`);
      }
      return this.fail(call, failure);
    }
    const result = checkStructured(normalizeResult(raw, this.options.redact, undefined, { media }), raw.isError === true ? null : tool.validateOutput);
    const { durationMs, waitedMs } = timesOf(call);
    const callId = call.ref.callId;
    if (raw.isError === true) {
      return this.fail(call, new WispError('TOOL_ERROR', `${tool.name} reported an error: ${result.text.slice(0, 200)}`, { result: { ...result, callId, approvalId, durationMs, waitedMs } }));
    }
    await this.options.audit(auditRecord(this.options.now(), call.ref, approvalId, 'ok', { durationMs, waitedMs }, result.truncated));
    this.options.publish({ kind: 'call.finished', call: wireRef(call.ref, approvalId), durationMs, waitedMs, truncated: result.truncated });
    return {
      callId,
      approvalId,
      content: result.content,
      structuredContent: result.structuredContent,
      structuredOmitted: result.structuredOmitted,
      text: result.text,
      truncated: result.truncated,
      originalLength: result.originalLength,
      durationMs,
      waitedMs,
    };
  }

  /** A call that ends in an error: on record first, then announced, then thrown. */
  private async fail(call: CallInProgress, error: WispError): Promise<never> {
    const { durationMs, waitedMs } = timesOf(call);
    await this.options.audit(auditRecord(this.options.now(), call.ref, call.approvalId, error.code, { durationMs, waitedMs }));
    this.options.publish({ kind: 'call.failed', call: wireRef(call.ref, call.approvalId), code: error.code, message: error.message, durationMs, waitedMs });
    throw error;
  }

  /** Waits out a tool-list change of the tool's service; what ended it badly, as a WispError. */
  private async settle(tool: CatalogTool, signal: CallSignal): Promise<void> {
    try {
      await this.options.supervisor.settled(tool, signal);
    } catch (error) {
      throw error instanceof Failure || error instanceof WispError ? new WispError(error.code, error.message) : new WispError('INTERNAL_ERROR', String(error));
    }
  }

  private find(request: CallRequest): CatalogTool {
    const { supervisor } = this.options;
    let tool: CatalogTool | undefined;
    if (request.tool !== undefined) {
      const live = supervisor.tool(request.tool.modelName);
      if (live === undefined) {
        const unavailable = supervisor.unavailableTool(request.tool.modelName);
        if (unavailable !== undefined) throw notCallable(unavailable);
        if (supervisor.heldTool(request.tool.modelName) !== undefined) throw notTrusted(request.tool);
        throw new WispError('TOOL_NOT_FOUND', `${request.tool.serviceName}/${request.tool.name} is no longer active`);
      }
      // The tool the model was shown, unchanged in every detail (a new list version alone does not change it).
      if (live.generation !== request.tool.generation || live.definitionDigest !== request.tool.definitionDigest) {
        throw new WispError('APPROVAL_STALE', `${request.tool.serviceName}/${request.tool.name} changed since this task started; ask again in a new request`);
      }
      return live;
    }
    if (request.modelName !== undefined) {
      if (request.serviceId !== undefined || request.toolName !== undefined) {
        throw new WispError('INVALID_PARAMS', 'give modelName, or serviceId and toolName, not both');
      }
      tool = supervisor.tool(request.modelName);
    } else if (request.serviceId !== undefined && request.toolName !== undefined) {
      tool = supervisor.toolOf(request.serviceId, request.toolName);
    } else {
      throw new WispError('INVALID_PARAMS', 'give modelName, or serviceId and toolName');
    }
    if (tool === undefined) {
      // A tool that cannot be called (it requires MCP tasks) is refused before anything is asked, held or not.
      const unavailable = supervisor.unavailableTool(request.modelName, request.serviceId, request.toolName);
      if (unavailable !== undefined) throw notCallable(unavailable);
      // A held tool is refused before anything is asked: no human is shown a definition nobody accepted.
      const held = supervisor.heldTool(request.modelName, request.serviceId, request.toolName);
      if (held !== undefined) throw notTrusted(held);
      throw toolNotFound(request, supervisor);
    }
    return tool;
  }
}

function notCallable(tool: Pick<CatalogTool, 'serviceName' | 'name' | 'unavailable'>): WispError {
  return new WispError('TOOL_UNAVAILABLE', `${tool.serviceName}/${tool.name} cannot be called: ${tool.unavailable ?? 'unavailable'}. Nothing was asked or sent.`, {
    service: tool.serviceName,
    tool: tool.name,
  });
}

function notTrusted(tool: Pick<CatalogTool, 'serviceName' | 'name'>): WispError {
  return new WispError(
    'TOOL_NOT_TRUSTED',
    `${tool.serviceName}/${tool.name} changed or appeared since its service's tools were trusted, and is held: review and accept it first (wispctl mcp review ${tool.serviceName})`,
    { service: tool.serviceName, tool: tool.name },
  );
}

/** Why no tool answers to a request, with the command that helps: the service may merely be inactive. */
function toolNotFound(request: CallRequest, supervisor: Supervisor): WispError {
  const tool = JSON.stringify(request.toolName ?? request.modelName ?? '');
  if (request.serviceId === undefined) return new WispError('TOOL_NOT_FOUND', `no active tool is named ${tool} (wispctl mcp tools lists the active tools)`);
  const name = request.serviceName ?? request.serviceId;
  const { status } = supervisor.state(request.serviceId);
  // Logged out, or its login lost: what it needs is a login, not an activation.
  if (status === 'needs_auth') return new WispError('NEEDS_AUTH', `${name} needs a login: wispctl mcp login ${name}`);
  if (status !== 'active') return new WispError('TOOL_NOT_FOUND', `${name} is not active (${status}): activate it with wispctl mcp activate ${name}`);
  return new WispError('TOOL_NOT_FOUND', `${name} has no tool named ${tool} (wispctl mcp tools ${name} lists its tools)`);
}

/** What is said of a call in its events and audit record. */
interface CallRef {
  readonly callId: string;
  readonly service: { readonly id: string; readonly name: string };
  readonly toolName: string;
  readonly modelName: string;
  readonly argumentsDigest: string;
  readonly requester: Requester;
}

/** How long a call ran (from sending it to its answer) and how long it waited before (mostly for its approval). */
interface CallTimes {
  readonly durationMs: number;
  readonly waitedMs: number;
}

function timesOf(call: CallInProgress): CallTimes {
  const now = Date.now();
  return call.sent === undefined ? { durationMs: 0, waitedMs: now - call.started } : { durationMs: now - call.sent, waitedMs: call.sent - call.started };
}

/** One call under way: what it is, when it started, when it was sent, and the approval it is on (the latest asked). */
interface CallInProgress {
  readonly ref: CallRef;
  readonly started: number;
  /** When it was handed to its server; undefined until then. */
  sent?: number;
  approvalId: string;
}

/** What an answered approval means for the call: undefined to go on (approved, or stale: asked again), else the error it ends with. */
function refusalOf(answered: Approval, toolName: string): WispError | undefined {
  switch (answered.state.status) {
    case 'approved':
    case 'stale':
      return undefined;
    case 'denied':
      return new WispError('APPROVAL_DENIED', `the call to ${toolName} was denied`, { approvalId: answered.id });
    case 'cancelled':
      return new WispError('CANCELLED', `the approval was cancelled: ${answered.state.reason}`, { approvalId: answered.id });
    case 'pending':
    case 'consumed':
      return new WispError('INTERNAL_ERROR', `approval ${answered.id} came back ${answered.state.status}`);
  }
}

/*
 * The objects below are written out field by field: on Node 20, an object spread with extra
 * properties ({ ...ref, approvalId }) costs about a microsecond each, several per call.
 */

/** A call as events show it. */
function wireRef(ref: CallRef, approvalId: string) {
  return {
    callId: ref.callId,
    approvalId,
    service: ref.service,
    toolName: ref.toolName,
    modelName: ref.modelName,
    argumentsDigest: ref.argumentsDigest,
    requester: ref.requester,
  };
}

/** A call's audit record: who, what and how it ended; never argument values or results. */
function auditRecord(at: Date, ref: CallRef, approvalId: string, outcome: string, times: CallTimes, truncated?: boolean): Record<string, unknown> {
  const record: Record<string, unknown> = {
    at: isoTime(at),
    record: 'tool.call',
    callId: ref.callId,
    approvalId,
    serviceId: ref.service.id,
    service: ref.service.name,
    tool: ref.toolName,
    argumentsDigest: ref.argumentsDigest,
    client: ref.requester.clientId,
    session: ref.requester.sessionId,
    outcome,
    durationMs: times.durationMs,
    waitedMs: times.waitedMs,
  };
  if (truncated !== undefined) record.truncated = truncated;
  return record;
}

/** Warnings go into an approval's summary only when there are some. */
function warningsOf(warnings: ToolWarning[]): { warnings?: ToolWarning[] } {
  return warnings.length > 0 ? { warnings } : {};
}

function describe(errors: ErrorObject[] | null | undefined): { path: string; message: string }[] {
  return (errors ?? []).map((e) => ({ path: e.instancePath === '' ? '/' : e.instancePath, message: e.message ?? 'invalid' }));
}
