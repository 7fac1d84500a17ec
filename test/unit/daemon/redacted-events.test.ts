import { describe, expect, it } from 'vitest';
import { RedactedEventHub } from '../../../src/daemon/redacted.js';
import { Redactor } from '../../../src/secrets/index.js';
import type { EmittedEvent } from '../../../src/control/index.js';

const SECRET = 'sk-live-0123456789abcdef';
const failed = (message: string) => ({ type: 'service.state' as const, service: { id: 's1', name: 'echo' }, connection: { status: 'failed' as const, generation: 1, code: 'SPAWN_FAILED' as const, message, at: '2026-01-01T00:00:00.000Z' } });

describe('RedactedEventHub', () => {
  it('redacts a value in an event even when the value is let go in the same turn, before the event was serialised', () => {
    const redactor = new Redactor();
    redactor.hold('service:s1/API_TOKEN', 'API_TOKEN', SECRET);
    const events = new RedactedEventHub(100, () => new Date('2026-01-01T00:00:00Z'), redactor);
    const heard: EmittedEvent[] = [];
    events.onEvent((_event, emitted) => heard.push(emitted));
    events.emit(failed(`exited: token ${SECRET} refused`));
    redactor.release('service:s1/API_TOKEN');
    events.emit(failed(`exited again: token ${SECRET} refused`));

    const replayed = events.replay(0, events.runId).events.map((e) => e.text);
    expect(replayed[0]).toContain('[REDACTED:API_TOKEN]');
    expect(replayed[0]).not.toContain(SECRET);
    // A subscriber's write of the first event, later in the turn, sends what was held.
    expect(heard[0]?.frame).toContain('[REDACTED:API_TOKEN]');
    expect(heard[0]?.frame).not.toContain(SECRET);
    // Emitted after the value was let go: no longer a secret.
    expect(replayed[1]).toContain(SECRET);
  });

  it('redacts the old value of a holder whose value is replaced in the same turn', () => {
    const redactor = new Redactor();
    redactor.hold('model', 'DEEPSEEK_API_KEY', SECRET);
    const events = new RedactedEventHub(100, () => new Date('2026-01-01T00:00:00Z'), redactor);
    events.emit(failed(`the key ${SECRET} was refused`));
    redactor.hold('model', 'DEEPSEEK_API_KEY', 'sk-live-another-value-999');
    const [held] = events.replay(0, events.runId).events;
    expect(held?.text).toContain('[REDACTED:DEEPSEEK_API_KEY]');
    expect(held?.text).not.toContain(SECRET);
  });
});
