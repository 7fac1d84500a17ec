import type { HostActions } from '../sessions/index.js';
import { assertRoomFor } from './installs.js';
import { installTitle, planShown, sandboxState, serviceReads } from './views.js';
import type { DaemonParts } from './handlers/types.js';

/** What the model's host tools do once a human approved: the daemon's own operations, never more. */
export function hostActions(parts: Pick<DaemonParts, 'registry' | 'supervisor' | 'services' | 'installer'>): HostActions {
  const { registry, supervisor, services, installer } = parts;
  return {
    listServices: () =>
      registry.list().map((config) => ({
        id: config.id,
        name: config.name,
        state: supervisor.state(config.id).status,
        env: (config.env ?? []).map((v) => v.name),
        tools: supervisor.tools(config.id).length,
        // How many, never what: a held tool's text has not been accepted by anyone.
        heldTools: supervisor.heldTools(config.id).length,
      })),
    describe: (ref) => {
      const config = registry.get(ref);
      return {
        id: config.id,
        name: config.name,
        transport: config.transport ?? 'stdio',
        command: config.command,
        args: [...config.args],
        cwd: config.cwd,
        env: [...(config.env ?? []), ...(config.envTemplates ?? [])].map((v) => v.name),
        url: config.url ?? null,
        headers: [...(config.headers ?? []), ...(config.headerTemplates ?? [])].map((h) => h.name),
        templates: Object.fromEntries([
          ...(config.envTemplates ?? []).map((t): [string, string] => [`env.${t.name}`, t.template]),
          ...(config.headerTemplates ?? []).map((t): [string, string] => [`headers.${t.name}`, t.template]),
        ]),
        fromEnvironment: serviceReads(config),
        sandbox: sandboxState(config),
        media: config.media === true,
        configVersion: config.configVersion,
      };
    },
    sandboxSees: async (id) => {
      const { plan } = await services.sandboxPlan(registry.get({ id }));
      if (plan === null) return null;
      return [
        ...plan.mounts.map((m) => `${m.access === 'tmpfs' ? 'empty (private)' : m.access === 'write' ? 'read-write' : 'read-only'} ${m.path} (${m.why})`),
        `network: ${plan.network === 'proxy' ? 'only the hosts granted, through the egress proxy' : plan.network === 'host' ? 'any host' : 'none'}`,
        ...plan.offered.map((o) => `NOT granted: ${o.field} names ${o.path}`),
        ...(plan.available ? [] : [`UNAVAILABLE: ${plan.reason ?? ''} (activation fails SANDBOX_UNAVAILABLE)`]),
      ];
    },
    register: async (input) => {
      const config = await registry.register(input);
      return { id: config.id, name: config.name, configVersion: config.configVersion };
    },
    activate: (id, configVersion, signal) => services.activate(registry.get({ id }), configVersion, signal),
    planInstall: async (input, signal) => {
      const { plan } = await installer.plan(input, signal);
      await installer.preflight(plan);
      assertRoomFor(registry, plan);
      return { digest: plan.digest, title: installTitle(plan), shown: planShown(plan) };
    },
    install: async (digest, signal) => {
      const { attempt, reused } = await installer.install(installer.getPlan(digest), signal);
      return {
        service: { id: attempt.serviceId ?? '', name: attempt.serviceName ?? '' },
        lockedPackages: attempt.lockedPackages,
        installScriptsNotRun: attempt.installScripts,
        reused,
      };
    },
  };
}
