export { Approvals, type Approval, type ApprovalAnnouncement, type ApprovalKind, type Binding, type Requester, type ToolCallBinding, type ToolCallSummary } from './approvals.js';
export { nextApprovalState, isOpen, ApprovalTransitionError, type ApprovalState, type ApprovalEvent } from './approval-state.js';
export { AuditLog } from './audit-log.js';
