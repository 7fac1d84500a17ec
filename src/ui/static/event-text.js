// Events and the daemon's status in wispctl's words (src/cli/render/events.ts, daemon.ts).
// Plain strings only: the pages render them as text.
import { clean, jsonForTerminal, refusalText } from '../../core/index.js';
import { taskEndLine } from './chat-text.js';
import { describeConnection, registeredTool } from './format.js';

function call(c) {
  return `${c.service.name}/${c.toolName}`;
}

/** What happened, after the seq, time and type (describeEvent's tail): one line, every untrusted name and message in it escaped. */
export function eventDetail(e) {
  return clean(rawDetail(e));
}

function rawDetail(e) {
  switch (e.type) {
    case 'service.registered':
    case 'service.updated':
      return `${e.service.name} (v${e.service.configVersion})`;
    case 'service.deleted':
      return e.service.name;
    case 'service.state':
      return `${e.service.name} ${describeConnection(e.connection)}`;
    case 'service.tools':
      return `${e.service.name} ${e.toolCount} tools (list v${e.toolListVersion})`;
    case 'service.login':
      return `${e.service.name} waits for a login: ${e.authorizationUrl}`;
    case 'tools.held':
      return `${e.serviceName} tools held until reviewed (list v${e.toolListVersion}): ${[...e.added.map((t) => `added ${t}`), ...e.changed.map((t) => `changed ${t}`)].join(', ')}`;
    case 'tools.accepted':
      return `${e.serviceName} tools accepted (list v${e.toolListVersion}): ${e.accepted.join(', ')}`;
    case 'approval.requested':
      return `${e.approval.id} ${e.approval.summary.serviceName}/${registeredTool(e.approval)} ${jsonForTerminal(e.approval.summary.arguments)}`;
    case 'approval.resolved':
      return `${e.approval.id} ${e.approval.state.status}`;
    case 'elicitation.requested':
      return `${e.elicitation.id} ${e.elicitation.service.name} asks for input (${e.elicitation.mode}${e.elicitation.host !== null ? `: ${e.elicitation.host}` : ''})`;
    case 'elicitation.resolved':
      return `${e.elicitation.id} ${e.elicitation.status}${e.elicitation.by !== null ? ` by ${e.elicitation.by}` : ''}`;
    case 'tool.call.started':
      return `${call(e.call)} (${e.call.callId})`;
    case 'tool.call.progress':
      return `${call(e.call)} ${e.progress}${e.total !== null ? `/${e.total}` : ''}${e.message !== null ? ` ${e.message}` : ''}`;
    case 'service.log':
      return `${e.service.name} ${e.level}${e.logger !== null ? ` [${e.logger}]` : ''} ${e.data !== null ? e.data.slice(0, 500) : ''}${e.dropped > 0 ? ` (${e.dropped} dropped)` : ''}`;
    case 'service.offerings':
      return `${e.service.name} ${e.uri !== null ? `${e.uri} changed` : `its ${e.changed} list changed`}`;
    case 'tool.call.finished':
      return `${call(e.call)} ok in ${e.durationMs} ms, after ${e.waitedMs} ms waiting${e.truncated ? ' (truncated)' : ''}`;
    case 'tool.call.failed':
      return `${call(e.call)} ${e.code}: ${e.message}`;
    case 'session.created':
      return `${e.session.id} ${e.session.title}`;
    case 'session.deleted':
      return e.sessionId;
    case 'task.state':
      return `${e.sessionId} task ${e.task.id} ${e.task.state.status === 'completed' ? `completed (${e.task.state.finishReason})` : taskEndLine(e.task.state)}`;
    case 'model.delta':
      return `${e.sessionId} ${e.kind} ${jsonForTerminal(e.text)}`;
    case 'install.progress':
      return `${e.install.package}@${e.install.version} ${e.index}/${e.total} ${e.step} ${e.status}`;
    case 'install.finished':
      return `${e.attempt.package}@${e.attempt.version} ${e.attempt.status}${e.attempt.serviceName !== null ? ` -> ${e.attempt.serviceName}` : ''}${e.attempt.error !== null ? ` ${e.attempt.error.code}` : ''}`;
    case 'network.refused':
      return refusalText(e);
    case 'storage.warning':
      return `${e.file}: ${e.problem}${e.movedTo !== null ? ` (now at ${e.movedTo})` : ''}`;
    case 'daemon.recovered':
      return e.servers.map((s) => `${s.name} pid ${s.pid} ${s.outcome}`).join(', ');
    case 'daemon.stopping':
      return 'the daemon is stopping';
    default:
      // A type this app does not know yet (the panel's list grew): its type column says it.
      return '';
  }
}

/** 42s, 3m 5s, 2h 10m, 3d 4h: formatDuration's steps. */
export function formatDuration(ms) {
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${s % 60}s`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h ${m % 60}m`;
  return `${Math.floor(h / 24)}d ${h % 24}h`;
}

/** `wispctl status`, line by line (statusText). */
export function statusLines(status) {
  return lines(status).map(clean);
}

function lines(status) {
  return [
    `wispd ${status.version} running (pid ${status.pid}, up ${formatDuration(status.uptimeMs)})`,
    `socket:    ${status.paths.socket}`,
    `data dir:  ${status.paths.dataDir}`,
    `services:  ${status.counts.services} (${status.counts.enabledServices} enabled)`,
    `clients:   ${status.counts.clients} (${status.counts.subscribers} following events)`,
    ...(status.registryLoadError !== null
      ? [`warning:   mcp-servers.json was unreadable at start (${status.registryLoadError.message}); it was moved to ${status.registryLoadError.movedTo}`]
      : []),
  ];
}
