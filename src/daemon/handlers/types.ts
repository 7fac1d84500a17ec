import type { AdmissionLoad, CallContext, EventHub, WispPaths } from '../../control/index.js';
import type { MethodName, Params, Result } from '../../core/index.js';
import type { Approvals, AuditLog } from '../../approvals/index.js';
import type { InstallSettingsStore, Installer } from '../../install/index.js';
import type { Elicitations, LoadProblem, OfferPins, ProjectList, ResourceSubscriptions, ServerNotices, ServiceRegistry, ServiceStore, SourceSync, Supervisor, ToolCalls } from '../../mcp/index.js';
import type { ModelApiKey, ModelSettingsStore } from '../../model/index.js';
import type { Redactor, SecretStore, Secrets, ServiceSecrets } from '../../secrets/index.js';
import type { Sessions } from '../../sessions/index.js';
import type { SettingsFile } from '../../util/index.js';
import type { ProfileStore } from '../profile-store.js';
import type { ServerRecords } from '../server-records.js';
import type { ServiceOps } from '../service-ops.js';

export type Handler<M extends MethodName> = (params: Params<M>, ctx: CallContext) => Result<M> | Promise<Result<M>>;

/** One handler per method of the protocol: a method missing here, or one the protocol lacks, does not compile. */
export type Handlers = { [M in MethodName]: Handler<M> };

/**
 * Everything the composition root built. Each method group takes only the parts it needs
 * (a Pick of this), never the Daemon itself.
 */
export interface DaemonParts {
  readonly paths: WispPaths;
  readonly version: string;
  readonly redactor: Redactor;
  readonly now: () => Date;
  /** The daemon's own environment (DEEPSEEK_API_KEY, `${VAR}` of config sources); never handed to a server whole. */
  readonly env: NodeJS.ProcessEnv;
  readonly events: EventHub;
  readonly store: ServiceStore;
  readonly registry: ServiceRegistry;
  readonly serverRecords: ServerRecords;
  readonly supervisor: Supervisor;
  /** The pins of services' prompts and resource templates (offer-pins.ts). */
  readonly offerPins: OfferPins;
  readonly services: ServiceOps;
  readonly approvals: Approvals;
  readonly elicitations: Elicitations;
  /** What servers say of their own accord (logs, changes), and the resource subscriptions across clients. */
  readonly notices: ServerNotices;
  readonly subscriptions: ResourceSubscriptions;
  readonly audit: AuditLog;
  readonly toolCalls: ToolCalls;
  readonly keychain: SecretStore;
  readonly sessionSecrets: SecretStore;
  readonly secrets: Secrets;
  readonly serviceSecrets: ServiceSecrets;
  readonly settingsFile: SettingsFile;
  readonly modelSettings: ModelSettingsStore;
  readonly installSettings: InstallSettingsStore;
  readonly apiKey: ModelApiKey;
  readonly installer: Installer;
  readonly projects: ProjectList;
  /** profiles.json: the named sets of services a gateway serves (--profile). */
  readonly profiles: ProfileStore;
  readonly sourceSync: SourceSync;
  readonly sessions: Sessions;
}

/** What only the Daemon itself knows: its start, its socket server's counts, how to stop it. */
export interface DaemonControl {
  readonly startedAt: Date;
  readonly loadProblem: () => LoadProblem | null;
  readonly connections: () => { readonly clientCount: number; readonly subscriberCount: number; readonly load: AdmissionLoad };
  readonly stop: (reason: string) => void;
}
