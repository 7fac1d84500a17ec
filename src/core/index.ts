/**
 * The core vocabulary: error catalog, limits, name patterns, the state unions and their
 * transitions, and the types of every wire and persisted shape. Pure: no node: modules, no
 * I/O, and nothing here builds a schema at load time (the schemas themselves are behind
 * the second door, core/wire/index.ts), so wispctl can load this door and start fast.
 */
export * from './errors.js';
export { LIMITS } from './limits.js';
export { PROTOCOL_VERSION, SERVICE_NAME_PATTERN, PROFILE_NAME_PATTERN, ENV_NAME_PATTERN, NET_GRANT_PATTERN, GRANT_PATH_PATTERN, PATTERN_WORDS, isRemoteTransport, type ServiceTransport } from './patterns.js';
export { assertNever } from './assert-never.js';
export { clean, cleanLines, jsonForTerminal, unseenIn, type Unseen } from './visible-text.js';
export { NestingMeter, nestsDeeperThan, textNestsDeeperThan } from './json-depth.js';
export { refusalText, type RefusalParts } from './network-text.js';
export { servicesSummary, phaseText, summaryText, heldText, heldSummaryText, failureTail, followLogHint, FAILURE_TAIL_LINES, type SummarizedService } from './service-summary.js';
export { ageText } from './age-text.js';
export { asOmitted, base64Size, type OmittedItem, type ResultItem } from './media-items.js';
export { transition, InvalidTransition, type ConnectionEvent } from './connection-state.js';
export { nextApprovalState, isOpen, ApprovalTransitionError, type ApprovalState, type ApprovalEvent } from './approval-state.js';
export { nextTaskState, isFinished, InvalidTaskTransition, type TaskEvent } from './task-state.js';
export {
  nextAttemptState,
  InvalidAttemptTransition,
  ATTEMPT_STARTED,
  STEPS,
  type AttemptState,
  type RunningAttemptState,
  type SucceededAttemptState,
  type EndedAttemptState,
  type AttemptEvent,
  type AttemptStatus,
  type EndStatus,
  type Step,
} from './attempt-state.js';
export type * from './wire/protocol.js';
export { parseJsonc, stripJsonComments } from './jsonc.js';
