export { Sessions, type SessionsOptions } from './sessions.js';
export { TranscriptFiles, type TranscriptRecord } from './transcript.js';
