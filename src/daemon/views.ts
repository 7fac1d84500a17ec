import { LIMITS, type Params, type Result, type Approval as ApprovalView, type ApprovalOutcome, type ConnectionState, type Service, type ToolInfo, type HeldTool } from '../core/index.js';
import type { Approval, Approvals } from '../approvals/index.js';
import { environmentReads, type CatalogTool, type HeldReview, type LaunchPreview, type SandboxAvailability, type StoredService } from '../mcp/index.js';
import type { InstallPlan, Runtime } from '../install/index.js';
import type { ModelSettings } from '../model/index.js';

/**
 * Domain objects as clients see them on the wire: every mapping in one place, each a copy
 * (a reply never shares an array or object with the daemon's own state).
 */

/** `heldTools`: how many of its tools are held for review now (the supervisor's count; 0 unless active). */
export function serviceView(config: StoredService, connection: ConnectionState, heldTools: number): Service {
  return {
    id: config.id,
    name: config.name,
    transport: config.transport ?? 'stdio',
    command: config.command,
    url: config.url ?? null,
    headers: (config.headers ?? []).map((h) => ({ name: h.name, storage: h.storage })),
    oauth: config.oauth != null ? { ...config.oauth } : null,
    args: [...config.args],
    cwd: config.cwd,
    timeoutMs: config.timeoutMs ?? null,
    env: (config.env ?? []).map((v) => ({ name: v.name, storage: v.storage, ...(v.plain === true ? { plain: true } : {}) })),
    fromEnvironment: [...(config.fromEnvironment ?? [])],
    envTemplates: (config.envTemplates ?? []).map((t) => ({ name: t.name, template: t.template })),
    headerTemplates: (config.headerTemplates ?? []).map((t) => ({ name: t.name, template: t.template })),
    environmentReads: serviceReads(config),
    sandbox: sandboxState(config),
    media: config.media === true,
    origin: config.origin ?? { kind: 'manual' },
    enabled: connection.status === 'activating' || connection.status === 'active',
    heldTools: connection.status === 'active' ? heldTools : 0,
    configVersion: config.configVersion,
    connection,
    createdAt: config.createdAt,
    updatedAt: config.updatedAt,
  };
}

/** A service's sandbox as clients see it: on with its grants, off, legacy (registered before sandboxes), or remote. */
export function sandboxState(config: StoredService): Service['sandbox'] {
  if (config.transport === 'http' || config.transport === 'sse') return { status: 'remote' };
  const profile = config.sandbox;
  if (profile === undefined) return { status: 'legacy' };
  if (!profile.enabled) return { status: 'off' };
  const allowed = profile.net.mode === 'hosts' || profile.net.mode === 'ask' ? (config.netGrants ?? []) : [];
  return { status: 'on', read: [...profile.read], write: [...profile.write], net: structuredClone(profile.net), ...(allowed.length > 0 ? { allowed: [...allowed] } : {}) };
}

/** A sandboxed launch's plan as a trust prompt shows it (services.sandboxPlan). */
export function sandboxPlanView(preview: LaunchPreview, availability: SandboxAvailability): Result<'services.sandboxPlan'>['plan'] {
  const { plan } = preview;
  return {
    available: availability.available,
    reason: availability.available ? null : availability.reason,
    command: preview.command,
    mounts: plan.mounts.map((m) => ({ path: m.path, access: m.access, why: m.why })),
    home: plan.home,
    chdir: plan.chdir,
    network: plan.network,
    offered: plan.offered.map((o) => ({ field: o.field, path: o.path })),
    warnings: [...preview.warnings],
    taskLimit: availability.available && availability.kind === 'bwrap' && availability.prlimit !== null ? LIMITS.maxSandboxTasks : null,
  };
}

/** Every `${VAR}` a launch of this service reads, with the file it is written in. */
export function serviceReads(config: StoredService): Service['environmentReads'] {
  const origin = config.origin;
  const file = origin?.kind === 'source' || origin?.kind === 'import' ? origin.file : null;
  return environmentReads(config).map((read) => ({ ...read, file }));
}

export function approvalView(approval: Approval): ApprovalView {
  return {
    id: approval.id,
    kind: approval.kind,
    requester: { ...approval.requester },
    binding: { ...approval.binding },
    summary: { ...approval.summary },
    createdAt: approval.createdAt,
    state: { ...approval.state },
  };
}

/** What became of an approval: its view without the summary (see the approval.resolved event). */
export function approvalOutcome(approval: Approval): ApprovalOutcome {
  return {
    id: approval.id,
    kind: approval.kind,
    requester: { ...approval.requester },
    binding: { ...approval.binding },
    createdAt: approval.createdAt,
    state: { ...approval.state },
  };
}

export function toolInfo(tool: CatalogTool): ToolInfo {
  return {
    serviceId: tool.serviceId,
    serviceName: tool.serviceName,
    name: tool.name,
    modelName: tool.modelName,
    title: tool.title,
    description: tool.description,
    inputSchema: tool.inputSchema,
    annotations: tool.annotations,
    outputSchema: tool.outputSchema,
    icons: [...tool.icons],
    meta: tool.meta,
    generation: tool.generation,
    toolListVersion: tool.toolListVersion,
    pin: tool.pin,
    unavailable: tool.unavailable,
  };
}

/** One page of tools.list: bounded in bytes, so its reply always fits a frame (at least one tool per page). */
export function toolsPage(tools: readonly CatalogTool[], cursor: string | undefined): Result<'tools.list'> {
  const start = cursor === undefined ? 0 : Number(cursor);
  const page: ToolInfo[] = [];
  let bytes = 0;
  let next = start;
  for (; next < tools.length; next++) {
    const info = toolInfo(tools[next] as CatalogTool);
    const size = Buffer.byteLength(JSON.stringify(info));
    if (page.length > 0 && bytes + size > LIMITS.maxPageBytes) break;
    page.push(info);
    bytes += size;
  }
  return { tools: page, nextCursor: next < tools.length ? String(next) : null };
}

/** One page of tools.review: bounded in bytes like tools.list (at least one tool per page). */
export function reviewPage(service: { id: string; name: string }, review: HeldReview, cursor: string | undefined): Result<'tools.review'> {
  const start = cursor === undefined ? 0 : Number(cursor);
  const page: HeldTool[] = [];
  let bytes = 0;
  let next = start;
  for (; next < review.tools.length; next++) {
    const tool = review.tools[next] as HeldTool;
    const size = Buffer.byteLength(JSON.stringify(tool));
    if (page.length > 0 && bytes + size > LIMITS.maxPageBytes) break;
    page.push(tool);
    bytes += size;
  }
  return { service, generation: review.generation, toolListVersion: review.toolListVersion, tools: page, nextCursor: next < review.tools.length ? String(next) : null };
}

/** One page of approvals.list: bounded in count and in bytes, so its reply always fits a frame. */
export function approvalsPage(approvals: Approvals, params: Params<'approvals.list'>): Result<'approvals.list'> {
  const limit = Math.min(params.limit ?? LIMITS.maxApprovalsPage, LIMITS.maxApprovalsPage);
  const candidates = approvals.listAfter(params.all === true ? 'all' : 'open', params.cursor === undefined ? 0 : Number(params.cursor));
  const page: ApprovalView[] = [];
  let bytes = 0;
  let last = 0;
  for (const { approval, position } of candidates) {
    if (page.length >= limit) break;
    const view = approvalView(approval);
    const size = Buffer.byteLength(JSON.stringify(view));
    if (page.length > 0 && bytes + size > LIMITS.maxPageBytes) break;
    page.push(view);
    bytes += size;
    last = position;
  }
  return { approvals: page, nextCursor: page.length < candidates.length ? String(last) : null };
}

export function installTitle(plan: InstallPlan): string {
  return `Install ${plan.package}@${plan.version} from ${plan.registry} into ${plan.directory} and register it DISABLED and sandboxed (no network; no install scripts run)`;
}

type PlanShown = Omit<Result<'installs.plan'>['plan'], 'digest' | 'runtime'>;

/** What a human sees before approving an install. */
export function planShown(plan: InstallPlan): PlanShown {
  return {
    package: plan.package,
    version: plan.version,
    bin: plan.bin,
    args: [...plan.args],
    registry: plan.registry,
    directory: plan.directory,
    will: [...plan.will],
    wont: [...plan.wont],
  };
}

export function planView(plan: InstallPlan, runtime: Runtime): Result<'installs.plan'>['plan'] {
  return {
    digest: plan.digest,
    ...planShown(plan),
    runtime: { node: runtime.node, nodeVersion: runtime.nodeVersion, npmVersion: runtime.npmVersion },
  };
}

export function modelSettingsView(settings: ModelSettings, key: Result<'model.getSettings'>['settings']['key']): Result<'model.getSettings'>['settings'] {
  return {
    baseUrl: settings.baseUrl,
    model: settings.model,
    firstByteTimeoutMs: settings.firstByteTimeoutMs,
    idleTimeoutMs: settings.idleTimeoutMs,
    maxRetries: settings.maxRetries,
    deferToolsAbove: settings.deferToolsAbove,
    key,
  };
}

/** A connection's client id: `client-N`, and the name it gave itself (client.identify) when it did. */
export function clientId(connection: { readonly id: number; readonly clientName: string | null }): string {
  return connection.clientName === null ? `client-${connection.id}` : `client-${connection.id} (${connection.clientName})`;
}
