import { createInterface, type Interface } from 'node:readline/promises';
import type { WispClient } from '../control/client.js';
import type { Approval } from '../core/index.js';
import { approvalQuestion, clean } from './render.js';

/**
 * Asks y/N for one approval on the terminal and sends the answer. The question is withdrawn
 * as soon as the approval is resolved some other way (answered by another client, cancelled,
 * made stale by a tool-list change or a disable): an answer typed afterwards must never be
 * taken for a different approval, and no stale prompt is left open. `rl` is a shared
 * interface (chat); without one, a private interface on stdin/stderr is made and closed.
 */
export function promptApproval(client: WispClient, approval: Approval, err: (line: string) => void, rl?: Interface): void {
  const own = rl === undefined;
  const line = rl ?? createInterface({ input: process.stdin, output: process.stderr });
  const withdrawn = new AbortController();
  const off = client.onEvent((event) => {
    if (event.type !== 'approval.resolved' || event.approval.id !== approval.id) return;
    if (withdrawn.signal.aborted) return;
    withdrawn.abort();
    err(`\n(approval ${clean(approval.id)} is ${clean(event.approval.state.status)}: this question is withdrawn)`);
  });
  const done = (): void => {
    off();
    if (own) line.close();
  };
  line.question(approvalQuestion(approval), { signal: withdrawn.signal }).then(
    async (answer) => {
      withdrawn.abort();
      done();
      const decision = /^y(es)?$/i.test(answer.trim()) ? 'approve' : 'deny';
      await client.call('approvals.respond', { id: approval.id, decision }).catch((error: unknown) => err(clean(String(error))));
    },
    () => done(),
  );
}
