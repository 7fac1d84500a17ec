import { refusalText, type Task, type WispEvent } from '../../core/index.js';
import { clean, registeredTool, showArg, showJson } from '../render.js';
import { describeConnection } from './services.js';

/** Events and task states, one line each. */

/** One line per event; every field that is not the daemon's own number or enum is cleaned. */
export function describeEvent(event: WispEvent): string {
  const head = `${String(event.seq).padStart(5)}  ${clean(event.at)}  ${clean(event.type)}`;
  switch (event.type) {
    case 'service.registered':
    case 'service.updated':
      return `${head}  ${clean(event.service.name)} (v${event.service.configVersion})`;
    case 'service.deleted':
      return `${head}  ${clean(event.service.name)}`;
    case 'service.state':
      return `${head}  ${clean(event.service.name)} ${describeConnection(event.connection)}`;
    case 'service.tools':
      return `${head}  ${clean(event.service.name)} ${event.toolCount} tools (list v${event.toolListVersion})`;
    case 'approval.requested':
      return `${head}  ${clean(event.approval.id)} ${clean(event.approval.summary.serviceName)}/${showArg(registeredTool(event.approval))} ${showJson(event.approval.summary.arguments)}`;
    case 'approval.resolved':
      return `${head}  ${clean(event.approval.id)} ${clean(event.approval.state.status)}`;
    case 'elicitation.requested':
      return `${head}  ${clean(event.elicitation.id)} ${clean(event.elicitation.service.name)} ${clean(event.elicitation.mode)}${event.elicitation.host !== null ? ` ${clean(event.elicitation.host)}` : ''} (server's text: ${showJson(event.elicitation.message.slice(0, 200))})`;
    case 'elicitation.resolved':
      return `${head}  ${clean(event.elicitation.id)} ${clean(event.elicitation.status)}${event.elicitation.by !== null ? ` by ${clean(event.elicitation.by)}` : ''}`;
    case 'tool.call.started':
      return `${head}  ${clean(event.call.service.name)}/${showArg(event.call.toolName)} (${clean(event.call.callId)})`;
    case 'tool.call.progress':
      return `${head}  ${clean(event.call.service.name)}/${showArg(event.call.toolName)} ${event.progress}${event.total !== null ? `/${event.total}` : ''}${event.message !== null ? ` ${clean(event.message)}` : ''}`;
    case 'service.log':
      return `${head}  ${clean(event.service.name)} ${event.level}${event.logger !== null ? ` [${clean(event.logger)}]` : ''} ${event.data !== null ? clean(event.data.slice(0, 500)) : ''}${event.dropped > 0 ? ` (${event.dropped} dropped)` : ''}`;
    case 'service.offerings':
      return `${head}  ${clean(event.service.name)} ${event.uri !== null ? `${showArg(event.uri)} changed` : `its ${event.changed} list changed`}`;
    case 'tool.call.finished':
      return `${head}  ${clean(event.call.service.name)}/${showArg(event.call.toolName)} ok in ${event.durationMs} ms, after ${event.waitedMs} ms waiting${event.truncated ? ' (truncated)' : ''}`;
    case 'tool.call.failed':
      return `${head}  ${clean(event.call.service.name)}/${showArg(event.call.toolName)} ${clean(event.code)}: ${clean(event.message)}`;
    case 'tools.held':
      return `${head}  ${clean(event.serviceName)} holds ${[...event.added.map((n) => `${showArg(n)} (added)`), ...event.changed.map((n) => `${showArg(n)} (changed)`)].join(', ')}: wispctl mcp review ${showArg(event.serviceName)}`;
    case 'tools.accepted':
      return `${head}  ${clean(event.serviceName)} accepted ${event.accepted.map(showArg).join(', ')} (list v${event.toolListVersion})`;
    case 'service.login':
      return `${head}  ${clean(event.service.name)} waits for a login: ${clean(event.authorizationUrl)}`;
    case 'install.progress':
      return `${head}  ${clean(event.install.package)}@${clean(event.install.version)} ${event.index}/${event.total} ${clean(event.step)} ${clean(event.status)}`;
    case 'install.finished':
      return `${head}  ${clean(event.attempt.package)}@${clean(event.attempt.version)} ${clean(event.attempt.status)}${event.attempt.serviceName !== null ? ` -> ${clean(event.attempt.serviceName)}` : ''}${event.attempt.error !== null ? ` ${clean(event.attempt.error.code)}` : ''}`;
    case 'session.created':
      return `${head}  ${clean(event.session.id)} ${clean(event.session.title)}`;
    case 'session.deleted':
      return `${head}  ${clean(event.sessionId)}`;
    case 'task.state':
      return `${head}  ${clean(event.sessionId)} task ${clean(event.task.id)} ${describeTaskState(event.task.state)}`;
    case 'model.delta':
      return `${head}  ${clean(event.sessionId)} ${clean(event.kind)} ${showJson(event.text)}`;
    case 'model.turn':
      return `${head}  ${clean(event.sessionId)} round ${event.round} ${clean(event.finishReason ?? '-')}${event.toolCalls.length > 0 ? `, ${event.toolCalls.length} tool calls` : ''}${describeUsage(event.usage)}`;
    case 'network.refused':
      return `${head}  ${clean(refusalText(event))}`;
    case 'storage.warning':
      return `${head}  ${showArg(event.file)}: ${clean(event.problem)}${event.movedTo !== null ? ` (now at ${showArg(event.movedTo)})` : ''}`;
    case 'model.settings':
      return `${head}  ${clean(event.settings.model)} at ${clean(event.settings.baseUrl)}, tools deferred above ${event.settings.deferToolsAbove}`;
    case 'profile.changed':
      return `${head}  ${clean(event.name)}`;
    case 'daemon.stopping':
      return head;
    case 'daemon.recovered':
      return `${head}  ${event.servers.map((s) => `${clean(s.name)} pid ${s.pid} ${clean(s.outcome)}`).join(', ')}`;
  }
}

/** The prompt's tokens as the model API counted them, and how many of them its prompt cache served (DeepSeek's fields), when it said. */
function describeUsage(usage: Record<string, unknown> | null): string {
  const prompt = usage?.prompt_tokens;
  if (typeof prompt !== 'number') return '';
  const hit = usage?.prompt_cache_hit_tokens;
  return `, ${prompt} prompt tokens${typeof hit === 'number' ? ` (${hit} from the prompt cache)` : ''}`;
}

export function describeTaskState(state: Task['state']): string {
  switch (state.status) {
    case 'running':
    case 'awaiting_approval':
      return state.status;
    case 'completed':
      return `completed (${clean(state.finishReason)})`;
    case 'failed':
      return `failed ${clean(state.code)}: ${clean(state.message)}`;
    case 'cancelled':
    case 'interrupted':
      return `${state.status}: ${clean(state.reason)}`;
  }
}
