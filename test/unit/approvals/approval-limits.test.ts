import { describe, expect, it } from 'vitest';
import { Approvals } from '../../../src/approvals/index.js';
import { LIMITS } from '../../../src/core/index.js';

const summary = { serviceName: 's', toolName: 't', modelName: 'm', title: null, arguments: {}, annotations: null };
const binding = { serviceId: 'svc', generation: 1, toolListVersion: 1, toolName: 't', argumentsDigest: 'd' };
const asker = (n: number) => ({ clientId: `client-${n}`, sessionId: null, taskId: null });

describe('Approvals limits (issue 12)', () => {
  it('caps open approvals per asking client and in total; answering one frees its place', () => {
    const approvals = new Approvals(() => undefined);
    const first = Array.from({ length: LIMITS.maxOpenApprovalsPerClient }, () => approvals.create(asker(0), binding, summary));
    expect(() => approvals.create(asker(0), binding, summary)).toThrow(expect.objectContaining({ code: 'LIMIT_EXCEEDED', details: { limit: 'maxOpenApprovalsPerClient', max: LIMITS.maxOpenApprovalsPerClient } }));
    approvals.respond(first[0]?.id ?? '', 'deny', 'human');
    approvals.create(asker(0), binding, summary);

    for (let n = 1; approvals.list('open').length < LIMITS.maxOpenApprovals; n++) {
      for (let i = 0; i < LIMITS.maxOpenApprovalsPerClient && approvals.list('open').length < LIMITS.maxOpenApprovals; i++) approvals.create(asker(n), binding, summary);
    }
    expect(() => approvals.create(asker(9999), binding, summary)).toThrow(expect.objectContaining({ code: 'LIMIT_EXCEEDED', details: { limit: 'maxOpenApprovals', max: LIMITS.maxOpenApprovals } }));
  });

  it('pages in creation order from a cursor that survives approvals resolving in between', () => {
    const approvals = new Approvals(() => undefined);
    const made = Array.from({ length: 5 }, () => approvals.create(asker(0), binding, summary));
    const firstPage = approvals.listAfter('open', 0).slice(0, 2);
    expect(firstPage.map((e) => e.approval.id)).toEqual(made.slice(0, 2).map((a) => a.id));
    approvals.respond(made[1]?.id ?? '', 'deny', 'human');
    approvals.respond(made[2]?.id ?? '', 'deny', 'human');
    const rest = approvals.listAfter('open', firstPage.at(-1)?.position ?? 0);
    expect(rest.map((e) => e.approval.id)).toEqual([made[3]?.id, made[4]?.id]);
    expect(approvals.listAfter('all', 0).map((e) => e.approval.id)).toEqual(made.map((a) => a.id));
  });
});
