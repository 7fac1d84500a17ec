import { describe, expect, it } from 'vitest';
import { Admission, DEFAULT_ADMISSION_LIMITS, type AdmissionLimits, type CallCounter } from '../../../src/control/admission.js';
import { LIMITS } from '../../../src/core/index.js';

/** Issue 33, LOW 7 and 8: the socket's caps on connections, held frame bytes and waiting calls, as rules. */

const small: AdmissionLimits = {
  maxConnections: 4,
  maxGatewayConnections: 3,
  maxConnectionsPerGateway: 2,
  maxHeldFrameBytes: 100,
  maxPendingCallsPerClient: 2,
  maxPendingCalls: 6,
  maxGatewayPendingCalls: 3,
};

/** A connection as the call caps see it, counting its own calls as the server does. */
function client(gateway: string | null = null): CallCounter & { pendingCalls: number } {
  return { pendingCalls: 0, gateway };
}

/** Starts calls for `c` until one is refused (or `n` ran); returns the limit that refused, or null. */
function fill(admission: Admission, c: CallCounter & { pendingCalls: number }, n: number): string | null {
  for (let i = 0; i < n; i++) {
    const refusal = admission.callRefusal(c);
    if (refusal !== null) return refusal.limit;
    admission.startCall(c);
    c.pendingCalls += 1;
  }
  return null;
}

describe('Admission', () => {
  it('defaults to the documented limits', () => {
    expect(DEFAULT_ADMISSION_LIMITS).toEqual({
      maxConnections: 128,
      maxGatewayConnections: 96,
      maxConnectionsPerGateway: 40,
      maxHeldFrameBytes: 8 * 1024 * 1024,
      maxPendingCallsPerClient: 64,
      maxPendingCalls: 1024,
      maxGatewayPendingCalls: 512,
    });
    expect(LIMITS.maxPendingCalls - LIMITS.maxGatewayPendingCalls).toBe(512);
  });

  it('refuses the connection past the cap, and admits one again once one closed', () => {
    const admission = new Admission(small);
    for (let i = 0; i < 4; i++) expect(admission.admitConnection()).toBeNull();
    expect(admission.admitConnection()).toMatchObject({ limit: 'maxConnections', max: 4 });
    expect(admission.load.connections).toBe(4);
    admission.releaseConnection();
    expect(admission.admitConnection()).toBeNull();
  });

  it('caps one gateway\'s connections and every gateway\'s together', () => {
    const admission = new Admission(small);
    expect(admission.joinGateway('a')).toBeNull();
    expect(admission.joinGateway('a')).toBeNull();
    expect(admission.joinGateway('a')).toMatchObject({ limit: 'maxConnectionsPerGateway', max: 2 });
    expect(admission.joinGateway('b')).toBeNull();
    expect(admission.joinGateway('c')).toMatchObject({ limit: 'maxGatewayConnections', max: 3 });
    expect(admission.load).toMatchObject({ gateways: 2, gatewayConnections: 3 });
    admission.leaveGateway('b');
    expect(admission.load).toMatchObject({ gateways: 1, gatewayConnections: 2 });
    expect(admission.joinGateway('c')).toBeNull();
  });

  it('holds unfinished frame bytes up to the shared budget, and counts back to zero', () => {
    const admission = new Admission(small);
    expect(admission.takeFrameBytes(60)).toBe(true);
    expect(admission.takeFrameBytes(40)).toBe(true);
    expect(admission.takeFrameBytes(1)).toBe(false);
    expect(admission.load.heldFrameBytes).toBe(100);
    expect(admission.heldFrameRefusal()).toMatchObject({ limit: 'maxHeldFrameBytes', max: 100 });
    admission.giveFrameBytes(60);
    admission.giveFrameBytes(40);
    expect(admission.load.heldFrameBytes).toBe(0);
  });

  it('counts every connection of one gateway as one client', () => {
    const admission = new Admission(small);
    const [one, two] = [client('g'), client('g')];
    admission.joinGateway('g');
    admission.joinGateway('g');
    expect(fill(admission, one, 1)).toBeNull();
    expect(fill(admission, two, 5)).toBe('maxPendingCallsPerClient');
    expect(two.pendingCalls).toBe(1);
    expect(admission.load.gatewayPendingCalls).toBe(2);
  });

  it('keeps the rest of the daemon\'s calls for clients that are not gateways', () => {
    const admission = new Admission(small);
    for (const id of ['a', 'b']) admission.joinGateway(id);
    expect(fill(admission, client('a'), 2)).toBeNull();
    // The gateways' share is 3: the second gateway gets one.
    expect(fill(admission, client('b'), 2)).toBe('maxGatewayPendingCalls');
    // The user's own clients still get theirs, up to the daemon's total.
    const mine = client();
    expect(fill(admission, mine, 2)).toBeNull();
    expect(fill(admission, client(), 5)).toBe('maxPendingCalls');
    expect(admission.load).toMatchObject({ pendingCalls: 6, gatewayPendingCalls: 3 });
  });

  it('lets a connection that claims another gateway\'s id take only from that gateway\'s share, never from the reserve', () => {
    const admission = new Admission(small);
    admission.joinGateway('victim');
    const victim = client('victim');
    // Another program claims the victim's id: its calls count as the victim's.
    admission.joinGateway('victim');
    expect(fill(admission, client('victim'), 5)).toBe('maxPendingCallsPerClient');
    expect(admission.callRefusal(victim)).toMatchObject({ limit: 'maxPendingCallsPerClient' });
    // Fresh ids for each connection buy nothing past the gateways' share.
    admission.joinGateway('fresh-1');
    expect(fill(admission, client('fresh-1'), 5)).toBe('maxGatewayPendingCalls');
    // And the user's clients keep what is kept for them: 6 - 3.
    expect(fill(admission, client(), 2)).toBeNull();
    expect(fill(admission, client(), 1)).toBeNull();
  });

  it('gives a gateway\'s calls back when they end, after its connections closed too, and then forgets it', () => {
    const admission = new Admission(small);
    admission.joinGateway('g');
    const c = client('g');
    expect(fill(admission, c, 2)).toBeNull();
    admission.leaveGateway('g');
    expect(admission.load).toMatchObject({ gateways: 1, gatewayConnections: 0, gatewayPendingCalls: 2 });
    admission.endCall(c);
    admission.endCall(c);
    expect(admission.load).toEqual({ connections: 0, heldFrameBytes: 0, pendingCalls: 0, gateways: 0, gatewayConnections: 0, gatewayPendingCalls: 0 });
  });

  it('caps a client that is not a gateway by its own calls', () => {
    const admission = new Admission(small);
    const c = client();
    expect(fill(admission, c, 3)).toBe('maxPendingCallsPerClient');
    admission.endCall(c);
    c.pendingCalls -= 1;
    expect(admission.callRefusal(c)).toBeNull();
  });
});
