import path from 'node:path';
import { WispError, type ConnectionState, type Result, type Service, isRemoteTransport } from '../core/index.js';
import { HEADER_SECRET_PREFIX, OAUTH_ITEMS, expandLaunch, isWispGateway, launchDigest, savedLogin, selfGatewayError, type OAuthVault, type OutboundRules, type Sandboxes, type StoredService, type Supervisor } from '../mcp/index.js';
import { launchBinding, type Redactor, type SecretStore, type Secrets, type VariableRef } from '../secrets/index.js';
import { sandboxPlanView, sandboxState, serviceView } from './views.js';

export interface ServiceOpsOptions {
  readonly supervisor: Supervisor;
  readonly secrets: Secrets;
  readonly keychain: SecretStore;
  readonly redactor: Redactor;
  /** The daemon's own environment, for `${VAR}` templates of config sources. */
  readonly env: NodeJS.ProcessEnv;
  /** The outbound rules' test seam (DaemonOptions.outbound). */
  readonly outbound?: OutboundRules | undefined;
  /** The daemon's sandbox, and the PATH bare commands are found on: what a sandboxed launch would be given. */
  readonly sandbox: Sandboxes;
  readonly searchPath: string | undefined;
}

/** What several method groups and the host tools do with one service: activate it, show it, reach its OAuth items. */
export class ServiceOps {
  constructor(private readonly options: ServiceOpsOptions) {}

  /** The outbound rules' test seam, for logins and logouts (none in production). */
  get outbound(): OutboundRules | undefined {
    return this.options.outbound;
  }

  view(config: StoredService): Service {
    const { supervisor } = this.options;
    return serviceView(config, supervisor.state(config.id, config.createdAt), supervisor.heldTools(config.id).length);
  }

  /** What a sandboxed launch of this service would be given, worked out now as its activation will (the trust prompts show it). */
  async sandboxPlan(config: StoredService): Promise<Result<'services.sandboxPlan'>> {
    const sandbox = sandboxState(config);
    const profile = config.sandbox;
    if (sandbox.status !== 'on' || profile === undefined) return { sandbox, plan: null };
    const { preview, availability } = await this.options.sandbox.preview(this.launchOf(config), profile, this.options.searchPath);
    return { sandbox, plan: sandboxPlanView(preview, availability) };
  }

  /** Trust and activate, with the service's secrets read only now (after the supervisor's checks). */
  activate(config: StoredService, configVersion: number, signal: AbortSignal): Promise<ConnectionState> {
    const { supervisor, secrets } = this.options;
    // Refused here (ENV_NOT_ALLOWED) before anything runs when it would read the daemon's own variables.
    const launch = this.expanded(config);
    // Wisp's own gateway, however it was registered (mcp add, an older import, a wrapper): refused before anything runs.
    if (isWispGateway(config) || isWispGateway(launch.config)) throw selfGatewayError(config.name, 'activated');
    return supervisor.activate(launch.config, configVersion, signal, async () => {
      if (!isRemoteTransport(config.transport)) return { ...launch.env, ...(await secrets.read(config.id, launchBinding(config), config.env ?? [], config.name)) };
      // A remote service's secrets are its header values, handed to its transport only.
      const values = await secrets.read(config.id, launchBinding(config), secretRefs(config), config.name);
      return { ...launch.headers, ...Object.fromEntries(Object.entries(values).map(([name, value]) => [name.slice(HEADER_SECRET_PREFIX.length), value])) };
    }, () => savedLogin(config, this.vault(config), () => this.launchOf(config).url ?? config.url ?? '', this.options.outbound), launchDigest(config));
  }

  /**
   * The service as it is launched: `${VAR}` in command, args and url filled in from the
   * daemon's environment (config sources and imports only). The stored config keeps the
   * templates; the values live only in memory and in the child's argv.
   */
  launchOf(config: StoredService): StoredService {
    return this.expanded(config).config;
  }

  /**
   * Every template filled in (command, args, url, env and header values). The values of
   * secret variables are held by the redactor; public ones (HOME, PATH, ...) are not secrets
   * and are shown as they are.
   */
  private expanded(config: StoredService): ReturnType<typeof expandLaunch<StoredService>> {
    const launch = expandLaunch(config, this.options.env);
    for (const { name, value } of launch.secrets) this.options.redactor.hold(`daemon-env/${name}`, name, value);
    return launch;
  }

  /** A remote service's OAuth items in the keychain, bound to its URL: a token saved for another URL reads as absent. */
  vault(config: StoredService): OAuthVault {
    const { keychain, redactor } = this.options;
    const binding = launchBinding(config);
    return {
      get: async (name) => {
        const secret = await keychain.get(config.id, name);
        const value = secret !== null && secret.binding === binding ? secret.value : null;
        if (value !== null) holdOAuth(redactor, config.id, name, value);
        return value;
      },
      set: async (name, value) => {
        holdOAuth(redactor, config.id, name, value);
        await keychain.set(config.id, name, { value, binding });
      },
      delete: async (name) => {
        await keychain.delete(config.id, name);
        redactor.releaseAll(`oauth:${config.id}/${name}`);
      },
    };
  }
}

/** OAuth tokens and a client secret are secrets too: held in the redactor while the keychain has them. */
function holdOAuth(redactor: Redactor, serviceId: string, item: string, value: string): void {
  const holder = `oauth:${serviceId}/${item}`;
  if (item === OAUTH_ITEMS.clientSecret) redactor.hold(holder, 'OAUTH_CLIENT_SECRET', value);
  else if (item === OAUTH_ITEMS.privateKey) redactor.hold(holder, 'OAUTH_PRIVATE_KEY', value);
  else if (item === OAUTH_ITEMS.identityAssertion) redactor.hold(holder, 'OAUTH_IDENTITY_ASSERTION', value);
  else if (item === OAUTH_ITEMS.tokens || item === OAUTH_ITEMS.client) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(value);
    } catch {
      return;
    }
    if (typeof parsed !== 'object' || parsed === null) return;
    for (const field of ['access_token', 'refresh_token', 'id_token', 'client_secret']) {
      const v = (parsed as Record<string, unknown>)[field];
      if (typeof v === 'string') redactor.hold(`${holder}/${field}`, `OAUTH_${field.toUpperCase()}`, v);
    }
  }
}

/** Every secret a service has in the stores: its variables, and (http) its header values. */
export function secretRefs(config: StoredService): VariableRef[] {
  return [...(config.env ?? []), ...(config.headers ?? []).map((h) => ({ name: `${HEADER_SECRET_PREFIX}${h.name}`, storage: h.storage }))];
}

/** A service from a config file is edited in the file, not here. */
export function assertEditable(config: StoredService): void {
  if (config.origin?.kind === 'source') {
    throw new WispError('INVALID_CONFIG', `${config.name} comes from ${config.origin.file}: edit that file, then run wispctl mcp reload`, { field: 'origin' });
  }
}

/**
 * Nor is it removed here: the next reload would bring it back. Says how to remove it for
 * good: from the file, or (a project) by no longer reading that project.
 */
export function assertRemovable(config: StoredService): void {
  const origin = config.origin;
  if (origin?.kind !== 'source') return;
  const how =
    origin.source === 'project'
      ? `remove the entry from that file and run wispctl mcp reload, or stop reading the project: wispctl mcp sources remove-project ${path.dirname(origin.file)}`
      : origin.source === 'plugin'
        ? 'remove the entry from that file, or disable the plugin in settings.json (enabledPlugins), then run wispctl mcp reload'
        : 'remove the entry from that file, then run wispctl mcp reload';
  throw new WispError('INVALID_CONFIG', `${config.name} comes from ${origin.file} and would come back at the next reload: ${how}`, { field: 'origin' });
}
