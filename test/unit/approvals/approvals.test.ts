import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Approvals, type Approval, type ApprovalAnnouncement, type ToolCallBinding } from '../../../src/approvals/index.js';

const requester = { clientId: 'client-1', sessionId: null, taskId: null };
const summary = { serviceName: 's', toolName: 't', modelName: 'm', title: null, arguments: {}, annotations: null };
const binding = (over: Partial<ToolCallBinding> = {}): ToolCallBinding => ({
  serviceId: 'svc',
  generation: 1,
  toolListVersion: 1,
  toolName: 't',
  argumentsDigest: 'digest-a',
  ...over,
});

function setup(): { approvals: Approvals; heard: ApprovalAnnouncement[] } {
  const heard: ApprovalAnnouncement[] = [];
  return { approvals: new Approvals((a) => heard.push(a), () => new Date('2026-01-01T00:00:00Z')), heard };
}

describe('Approvals', () => {
  it('is consumed once by exactly its binding, and never again', () => {
    const { approvals } = setup();
    const a = approvals.create(requester, binding(), summary);
    approvals.respond(a.id, 'approve', 'client-2');
    expect(approvals.consume(a.id, binding()).state.status).toBe('consumed');
    expect(() => approvals.consume(a.id, binding())).toThrow(expect.objectContaining({ code: 'APPROVAL_STALE' }));
  });

  it('cannot be consumed before a human approves it', () => {
    const { approvals } = setup();
    const a = approvals.create(requester, binding(), summary);
    expect(() => approvals.consume(a.id, binding())).toThrow(expect.objectContaining({ code: 'APPROVAL_STALE' }));
    expect(approvals.get(a.id).state.status).toBe('pending');
  });

  it.each<[string, Partial<ToolCallBinding>]>([
    ['other arguments', { argumentsDigest: 'digest-b' }],
    ['another tool list', { toolListVersion: 2 }],
    ['another connection', { generation: 2 }],
    ['another tool', { toolName: 'u' }],
    ['another service', { serviceId: 'other' }],
  ])('refuses %s, and is then stale for good', (_name, change) => {
    const { approvals } = setup();
    const a = approvals.create(requester, binding(), summary);
    approvals.respond(a.id, 'approve', 'client-2');
    expect(() => approvals.consume(a.id, binding(change))).toThrow(expect.objectContaining({ code: 'APPROVAL_STALE' }));
    expect(approvals.get(a.id).state.status).toBe('stale');
    expect(() => approvals.consume(a.id, binding())).toThrow(expect.objectContaining({ code: 'APPROVAL_STALE' }));
  });

  it('lets the first answer win', () => {
    const { approvals, heard } = setup();
    const a = approvals.create(requester, binding(), summary);
    approvals.respond(a.id, 'deny', 'client-2');
    expect(() => approvals.respond(a.id, 'approve', 'client-3')).toThrow(expect.objectContaining({ code: 'APPROVAL_NOT_PENDING' }));
    expect(heard.map((h) => [h.kind, h.approval.state.status])).toEqual([
      ['approval.requested', 'pending'],
      ['approval.resolved', 'denied'],
    ]);
  });

  it('makes pending and approved-but-unused approvals stale when the tool list changes or the connection is replaced', () => {
    const { approvals } = setup();
    const pending = approvals.create(requester, binding(), summary);
    const approved = approvals.create(requester, binding(), summary);
    const used = approvals.create(requester, binding(), summary);
    approvals.respond(approved.id, 'approve', 'c');
    approvals.respond(used.id, 'approve', 'c');
    approvals.consume(used.id, binding());
    approvals.staleWhere((x) => x.binding.serviceId === 'svc' && x.binding.toolListVersion !== 2, 'the tool list changed');
    expect([pending, approved, used].map((x) => approvals.get(x.id).state.status)).toEqual(['stale', 'stale', 'consumed']);
  });

  it('cancels open approvals when their service is disabled, and wakes the waiting caller', async () => {
    const { approvals } = setup();
    const a = approvals.create(requester, binding(), summary);
    const waiting = approvals.wait(a.id, new AbortController().signal);
    approvals.cancelWhere((x) => x.binding.serviceId === 'svc', 's is stopping');
    expect((await waiting).state).toMatchObject({ status: 'cancelled', reason: 's is stopping' });
  });

  it('cancels when the asker goes away', async () => {
    const { approvals } = setup();
    const a = approvals.create(requester, binding(), summary);
    const controller = new AbortController();
    const waiting = approvals.wait(a.id, controller.signal);
    controller.abort();
    expect((await waiting).state).toMatchObject({ status: 'cancelled', reason: 'the asker went away' });
  });
});

type Step =
  | { op: 'request'; args: 'a' | 'b' }
  | { op: 'approve' | 'deny'; pick: number }
  | { op: 'call'; pick: number; args: 'a' | 'b' }
  | { op: 'refresh' | 'reconnect' | 'disable' };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ op: fc.constant('request' as const), args: fc.constantFrom('a' as const, 'b' as const) }),
  fc.record({ op: fc.constantFrom('approve' as const, 'deny' as const), pick: fc.nat() }),
  fc.record({ op: fc.constant('call' as const), pick: fc.nat(), args: fc.constantFrom('a' as const, 'b' as const) }),
  fc.record({ op: fc.constantFrom('refresh' as const, 'reconnect' as const, 'disable' as const) }),
);

describe('Approvals, property-based', () => {
  it('never lets a call run without a matching unconsumed approval, and never runs an approval twice', () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 60 }), (steps) => {
        const { approvals } = setup();
        // The world a call executes in, as the daemon tracks it.
        const world = { generation: 1, toolListVersion: 1, active: true };
        const ids: string[] = [];
        const executed: { approvalId: string; binding: ToolCallBinding; approvedBefore: Approval }[] = [];
        const current = (args: 'a' | 'b'): ToolCallBinding =>
          binding({ generation: world.generation, toolListVersion: world.toolListVersion, argumentsDigest: `digest-${args}` });

        for (const s of steps) {
          const id = ids.length === 0 ? undefined : ids[('pick' in s ? s.pick : 0) % ids.length];
          switch (s.op) {
            case 'request':
              if (world.active) ids.push(approvals.create(requester, current(s.args), summary).id);
              break;
            case 'approve':
            case 'deny':
              if (id !== undefined && approvals.get(id).state.status === 'pending') approvals.respond(id, s.op, 'human');
              break;
            case 'call': {
              if (id === undefined || !world.active) break;
              const before = approvals.get(id);
              try {
                approvals.consume(id, current(s.args));
                executed.push({ approvalId: id, binding: current(s.args), approvedBefore: before });
              } catch {
                // refused: nothing ran
              }
              break;
            }
            case 'refresh':
              world.toolListVersion += 1;
              approvals.staleWhere((a) => a.binding.toolListVersion !== world.toolListVersion, 'tool list changed');
              break;
            case 'reconnect':
              // Leaving `active` cancels; the new generation starts with a fresh tool list.
              approvals.cancelWhere(() => true, 'reconnecting');
              world.generation += 1;
              world.toolListVersion = 1;
              break;
            case 'disable':
              world.active = false;
              approvals.cancelWhere(() => true, 'disabled');
              break;
          }
        }
        // No approval ran twice.
        expect(new Set(executed.map((e) => e.approvalId)).size).toBe(executed.length);
        for (const e of executed) {
          // It was approved (by a human) and bound to exactly what ran.
          expect(e.approvedBefore.state.status).toBe('approved');
          expect(e.approvedBefore.binding).toEqual(e.binding);
          expect(approvals.get(e.approvalId).state.status).toBe('consumed');
        }
      }),
      { numRuns: 500 },
    );
  });
});
