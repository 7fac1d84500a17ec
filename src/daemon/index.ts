export { Daemon, type DaemonOptions } from './daemon.js';
export { createLogger, type LoggerOptions } from './logger.js';
