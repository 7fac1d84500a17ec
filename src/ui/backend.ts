import type { WispClient } from '../control/client.js';
import type { WispEvent } from '../core/index.js';

/**
 * What the panel serves the pages from: the daemon's socket (one WispClient), or the demo's
 * in-memory daemon (`wispctl ui --demo`, demo/). The pages cannot tell them apart except by
 * `demo`, which the panel announces so every page shows the demo banner.
 */
export interface PanelBackend {
  readonly demo: boolean;
  /** One method call; a refusal rejects with a WispError (its code goes to the page). */
  call(method: string, params: object): Promise<unknown>;
  onEvent(listener: (event: WispEvent) => void): () => void;
  /** Called once when the backend ends by itself (the daemon went away). */
  onClose(listener: (error?: Error) => void): void;
  close(): Promise<void>;
}

/** The daemon's socket as a backend. */
export function socketBackend(client: WispClient): PanelBackend {
  return {
    demo: false,
    // The page's method name was checked against the allow-list; the daemon checks the params.
    call: (method, params) => (client.call as (m: string, p: unknown) => Promise<unknown>)(method, params),
    onEvent: (listener) => client.onEvent(listener),
    onClose: (listener) => client.onClose(listener),
    close: () => client.close(),
  };
}
