export { Sessions, type SessionsOptions } from './sessions.js';
export type { SessionEvent } from './events.js';
export { HOST_TOOLS, hostTool, type HostActions, type HostApproval, type HostTool, type HostToolContext } from './host-tools.js';
export { TranscriptFiles, type TranscriptRecord } from './transcript.js';
