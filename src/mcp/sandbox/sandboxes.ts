import type { ContainedRun, ContainedRunRequest, ContainOptions } from './contained-run.js';
import type { LaunchPreview, SandboxAvailability, SandboxHost, SandboxHostOptions } from './host.js';
import type { SandboxProfile } from './profile.js';
import type { StoredService } from '../service-store.js';

/**
 * The daemon's sandbox, loaded with the first sandboxed launch or preview: the host module
 * reaches the launch helpers (and through them the MCP SDK), which a daemon start without
 * an active service never loads.
 */
export class Sandboxes {
  private host: Promise<SandboxHost> | undefined;

  constructor(private readonly options: SandboxHostOptions = {}) {}

  get(): Promise<SandboxHost> {
    this.host ??= import('./host.js').then(({ SandboxHost }) => new SandboxHost(this.options));
    return this.host;
  }

  /** What a launch of `config` (as launched) would be given now, and whether a sandbox can be had here. */
  async preview(config: StoredService, profile: SandboxProfile, searchPath: string | undefined): Promise<{ preview: LaunchPreview; availability: SandboxAvailability }> {
    const host = await this.get();
    const [preview, availability] = await Promise.all([host.preview(config, profile, host.childEnvironment(), searchPath), host.availability()]);
    return { preview, availability };
  }

  /** A command run contained, as installs run npm (contained-run.ts, loaded with its first use). */
  async contain(request: ContainedRunRequest, options: ContainOptions): Promise<ContainedRun> {
    const [host, { containRun }] = await Promise.all([this.get(), import('./contained-run.js')]);
    return containRun(host, request, options);
  }
}
