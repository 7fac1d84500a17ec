import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { ServiceLink } from './transports.js';

/**
 * A link over a transport that is neither a child process nor a remote server (an
 * in-process server): its close counts as the server's exit, stop closes it.
 */
export function transportLink(transport: Transport): ServiceLink {
  let stopped: Promise<void> | undefined;
  return {
    kind: 'local',
    transport,
    pid: null,
    failure: undefined,
    exitInfo: '',
    challengedScope: null,
    explain: () => undefined,
    sessionLost: () => false,
    authorizationServer: () => Promise.resolve(null),
    stop: () => (stopped ??= transport.close()),
  };
}
