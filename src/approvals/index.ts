export { Approvals, type Approval, type ApprovalAnnouncement, type ApprovalKind, type Binding, type Requester, type ToolCallBinding, type ToolCallSummary } from './approvals.js';
export { AuditLog } from './audit-log.js';
