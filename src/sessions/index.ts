export { Sessions, type SessionsOptions } from './sessions.js';
export type { SessionEvent } from './events.js';
export type { HostActions, HostApproval, HostTool, HostToolContext } from './host-tools.js';
export { TranscriptFiles, type TranscriptRecord } from './transcript.js';
