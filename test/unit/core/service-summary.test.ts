import { describe, expect, it } from 'vitest';
import { heldSummaryText, heldText, phaseText, servicesSummary, summaryText, type ConnectionState, type SummarizedService } from '../../../src/core/index.js';

/** Issue 33: the status panel's line (seed 002's /mcp): connections, the startup phase and held tools, from the services' views. */
const at = '2026-01-01T00:00:00.000Z';
const states = {
  disabled: { status: 'disabled', since: at },
  activating: { status: 'activating', phase: 'initializing', generation: 1, pid: 10, since: at },
  active: { status: 'active', generation: 1, pid: 11, toolCount: 9, toolListVersion: 1, server: { name: 's', version: '1', protocolVersion: '2025-11-25' }, since: at },
  failed: { status: 'failed', generation: 1, code: 'SPAWN_FAILED', message: 'no such program', at },
  needs_auth: { status: 'needs_auth', generation: 1, authorizationServer: null, scope: null, message: 'log in', at },
  stopping: { status: 'stopping', generation: 1, pid: 12, since: at },
} satisfies Record<string, ConnectionState>;

function services(...list: [keyof typeof states, number?][]): SummarizedService[] {
  return list.map(([status, heldTools], i) => ({ name: `s${i}`, connection: states[status], ...(heldTools !== undefined ? { heldTools } : {}) }));
}

describe('servicesSummary', () => {
  it('with no services, or none started, is idle', () => {
    expect(servicesSummary([])).toEqual({ total: 0, connected: 0, phase: { status: 'idle' }, held: [] });
    expect(servicesSummary(services(['disabled'], ['stopping'])).phase).toEqual({ status: 'idle' });
    expect(summaryText(servicesSummary(services(['disabled'])))).toBe('0 of 1 connected; idle (no service started)');
  });

  it('while any is activating, is starting: how many of those started are active, and how many failed', () => {
    const summary = servicesSummary(services(['active'], ['active'], ['activating'], ['activating'], ['failed'], ['disabled']));
    expect(summary).toMatchObject({ total: 6, connected: 2, phase: { status: 'starting', active: 2, of: 5, failed: 1 } });
    expect(summaryText(summary)).toBe('2 of 6 connected; starting 2 of 5 (1 failed)');
    expect(phaseText(servicesSummary(services(['activating'], ['active'])).phase)).toBe('starting 1 of 2');
  });

  it('is ready when every service started is active, disabled ones aside', () => {
    const summary = servicesSummary(services(['active'], ['active'], ['disabled']));
    expect(summary.phase).toEqual({ status: 'ready' });
    expect(summaryText(summary)).toBe('2 of 3 connected; ready');
  });

  it('is some_failed when none is activating and some failed or wait for a login', () => {
    const failed = servicesSummary(services(['active'], ['failed'], ['needs_auth']));
    expect(failed.phase).toEqual({ status: 'some_failed', failed: 1, needsAuth: 1, of: 3 });
    expect(phaseText(failed.phase)).toBe('some failed (1 of 3; 1 waiting for a login: wispctl mcp login NAME)');
    expect(phaseText(servicesSummary(services(['active'], ['needs_auth'])).phase)).toBe('1 waiting for a login: wispctl mcp login NAME');
  });

  it('counts held tools of active services only, and names them with the review command', () => {
    const summary = servicesSummary(services(['active', 2], ['active', 0], ['disabled', 3], ['active']));
    expect(summary.held).toEqual([{ service: 's0', tools: 2 }]);
    expect(heldSummaryText(summary)).toBe('2 tools held for review: wispctl mcp review s0');
    expect(heldSummaryText(servicesSummary(services(['active', 1], ['active', 1])))).toBe('2 tools held for review: wispctl mcp review s0, wispctl mcp review s1');
    expect(heldSummaryText(servicesSummary(services(['active'])))).toBeNull();
  });

  it('escapes the service name it quotes', () => {
    expect(heldText(1, 'x\u001b[31m\u202e')).toBe('1 held for review: wispctl mcp review x\\x1b[31m\\u202e');
  });
});
