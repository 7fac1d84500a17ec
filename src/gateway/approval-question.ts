import { clean, jsonForTerminal, type Approval } from '../core/index.js';

/** Arguments longer than this (as JSON) are not put in a question: they could not be shown whole. */
export const MAX_SHOWN_ARGUMENTS = 8000;

/** A form-mode elicitation's params: what the client shows its user. */
export interface ApprovalQuestion {
  readonly message: string;
  readonly requestedSchema: {
    type: 'object';
    properties: { decision: { type: 'string'; title: string; enum: string[]; default: string } };
    required: string[];
  };
}

/**
 * A tool call's approval as a question to the MCP client's user (an elicitation on 2025, an
 * `input_required` round on 2026): approve or deny, with the service, the tool and the exact
 * arguments the daemon shows; undefined when the arguments are too long to show whole.
 */
export function approvalQuestion(approval: Approval): ApprovalQuestion | undefined {
  // Escaped as wispctl shows them: a bidi override or a zero-width character in the tool's
  // name or the model's arguments must not make the prompt read other than what will run.
  const shown = jsonForTerminal(approval.summary.arguments, 2);
  if (shown.length > MAX_SHOWN_ARGUMENTS) return undefined;
  const message = [
    'Wisp asks: may this tool call run?',
    `Service: ${clean(approval.summary.serviceName)}`,
    `Tool: ${jsonForTerminal(approval.summary.toolName)}`,
    ...(approval.summary.warnings ?? []).map((warning) => `Warning: ${clean(warning.message)}`),
    'Arguments, exactly as they will be sent:',
    shown,
    'The first answer wins, here or in Wisp.',
  ].join('\n');
  return {
    message,
    requestedSchema: {
      type: 'object',
      // Deny first, and the default: a client that preselects an option, or accepts an empty form, denies.
      properties: { decision: { type: 'string', title: 'Run this tool call?', enum: ['deny', 'approve'], default: 'deny' } },
      required: ['decision'],
    },
  };
}

/** The decision in a client's answer (untrusted): decline is deny; accept carries it; anything else (cancel, malformed) is none. */
export function decisionOf(answer: unknown): 'approve' | 'deny' | undefined {
  if (typeof answer !== 'object' || answer === null) return undefined;
  const { action, content } = answer as { action?: unknown; content?: unknown };
  if (action === 'decline') return 'deny';
  if (action !== 'accept' || typeof content !== 'object' || content === null) return undefined;
  const decision = (content as { decision?: unknown }).decision;
  return decision === 'approve' || decision === 'deny' ? decision : undefined;
}
