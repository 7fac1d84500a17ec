import type { SessionInfo, Task } from '../core/index.js';
import type { Turn } from '../model/index.js';

/**
 * What the sessions announce. The daemon's bridge (daemon/bridge.ts) turns each into its
 * wire event; a model turn is announced as the domain Turn and shaped for clients there.
 */
export type SessionEvent =
  | { readonly kind: 'session.created'; readonly session: SessionInfo }
  | { readonly kind: 'session.deleted'; readonly sessionId: string }
  | { readonly kind: 'task.changed'; readonly sessionId: string; readonly task: Task }
  | { readonly kind: 'model.streamed'; readonly sessionId: string; readonly taskId: string; readonly round: number; readonly part: 'content' | 'reasoning'; readonly text: string }
  | { readonly kind: 'model.turned'; readonly sessionId: string; readonly taskId: string; readonly round: number; readonly turn: Turn };
