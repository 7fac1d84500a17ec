/** The DeepSeek chat-completions wire format (the parts we send and read). */

export interface ToolCallWire {
  readonly id: string;
  readonly type: 'function';
  readonly function: { readonly name: string; readonly arguments: string };
}

export type ChatMessage =
  | { readonly role: 'system' | 'user'; readonly content: string }
  | {
      readonly role: 'assistant';
      readonly content: string | null;
      /** Sent back in later requests: thinking mode with tools requires it. */
      readonly reasoning_content?: string;
      readonly tool_calls?: readonly ToolCallWire[];
    }
  | { readonly role: 'tool'; readonly tool_call_id: string; readonly content: string };

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
