/** The DeepSeek chat-completions wire format (the parts we send and read). */
import type { ChatMessage, ToolCallWire } from '../core/index.js';

/** A transcript message and a tool call in it: defined once, in core/wire (the transcript persists them as sent). */
export type { ChatMessage, ToolCallWire };

/** What a request carries: the system prompt (never stored), then the transcript's messages. */
export type ModelMessage = { readonly role: 'system'; readonly content: string } | ChatMessage;

export interface ToolDefinition {
  readonly type: 'function';
  readonly function: { readonly name: string; readonly description: string; readonly parameters: Record<string, unknown> };
}

/** stop, length, tool_calls, content_filter, insufficient_system_resource, aborted (and whatever comes next). */
export type FinishReason = string;

export interface Usage {
  readonly prompt_tokens?: number;
  readonly completion_tokens?: number;
  readonly total_tokens?: number;
  readonly prompt_cache_hit_tokens?: number;
  readonly prompt_cache_miss_tokens?: number;
}

/** One assistant turn, assembled from the stream. Tool arguments are the raw JSON text. */
export interface Turn {
  readonly content: string;
  readonly reasoning: string | null;
  readonly toolCalls: ToolCallWire[];
  readonly finishReason: FinishReason | null;
  readonly usage: Usage | null;
}
