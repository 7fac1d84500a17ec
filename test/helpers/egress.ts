import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import type net from 'node:net';
import type { EgressAuditRecord, EgressRefusal } from '../../src/mcp/sandbox/egress-proxy.js';
import { parseEgressGrant, type EgressGrant } from '../../src/mcp/sandbox/egress-grants.js';
import { needs } from './skips.js';

export function grants(...texts: string[]): EgressGrant[] {
  return texts.map((text) => {
    const parsed = parseEgressGrant(text);
    if (!parsed.ok) throw new Error(parsed.reason);
    return parsed.grant;
  });
}

/** The audit records and refusals of one egress proxy, with a way to wait for them. */
export class EgressRecorder {
  readonly audits: EgressAuditRecord[] = [];
  readonly refusals: EgressRefusal[] = [];
  private waiters: (() => void)[] = [];
  readonly onAudit = (record: EgressAuditRecord): void => {
    this.audits.push(record);
    this.wake();
  };
  readonly onRefused = (refusal: EgressRefusal): void => {
    this.refusals.push(refusal);
    this.wake();
  };
  /** The `count`th audit record, once it has come. */
  async audit(count: number): Promise<EgressAuditRecord> {
    while (this.audits.length < count) await new Promise<void>((resolve) => this.waiters.push(resolve));
    return this.audits[count - 1] as EgressAuditRecord;
  }
  private wake(): void {
    const waiting = this.waiters;
    this.waiters = [];
    for (const resolve of waiting) resolve();
  }
}

export function listening(server: net.Server, host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve) => server.listen(0, host, () => resolve((server.address() as net.AddressInfo).port)));
}

/**
 * bubblewrap, where the daemon would look for it, when it can make the namespaces the
 * sandbox needs here (user namespaces may be disabled). Undefined: the sandbox tests skip,
 * unless WISP_REQUIRE_SANDBOX=1 (CI), where that is a failure.
 */
export function usableBwrap(): string | undefined {
  const found = ['/usr/bin/bwrap', '/usr/local/bin/bwrap', '/bin/bwrap'].find((file) => existsSync(file));
  const works = found !== undefined && spawnSync(found, ['--unshare-all', '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', 'true'], { stdio: 'ignore', timeout: 10_000 }).status === 0;
  if (!works && process.env.WISP_REQUIRE_SANDBOX === '1') {
    throw new Error(`WISP_REQUIRE_SANDBOX=1 but ${found === undefined ? 'no bwrap was found (apt-get install bubblewrap)' : `${found} cannot make the sandbox's namespaces (user namespaces disabled?)`}`);
  }
  return needs(works, 'bubblewrap cannot make the namespaces here (apt-get install bubblewrap): the egress tests') ? found : undefined;
}
