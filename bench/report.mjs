// bench/results/latest.md: the issue's targets (figure, target, measured, met) first, then the detail tables.

const MB = 1024;
/** Issue 14 measured the relay's daemon CPU per call at 19 us and set wispd's target at 50 us. */
const ISSUE_RELAY_CPU_US = 19;
const CPU_RATIO_TARGET = Math.round((50 / ISSUE_RELAY_CPU_US) * 10) / 10;
const spread = (s, digits = 2, scale = 1) => (s ? `${(s.median * scale).toFixed(digits)} (${(s.p25 * scale).toFixed(digits)}-${(s.p75 * scale).toFixed(digits)})` : 'n/a');
const ms = (s) => spread(s, 3);

/** For a part merged in from a run of its own (bench/merge.mjs): when and at what load it was measured. */
function separately(part) {
  const r = part.separateRun;
  if (!r) return [];
  const load = (l) => l.map((x) => x.toFixed(2)).join(', ');
  return [`- Measured in a run of its own (\`BENCH_ONLY\`, merged with \`bench/merge.mjs\`), not with the other sections: ${r.at}, ${r.runs} rounds, Node ${r.node}, load average ${load(r.loadAvgBefore)} before it and ${load(r.loadAvgAfter)} after.`];
}

/** The Targets table of issue 14: each row is a same-run figure (a median over rounds) against its target. */
export function targets(report) {
  const { toolCalls: calls, memory } = report;
  const rows = [];
  const ratioRow = (figure, s, op, limit) => rows.push({ figure, target: `${op === 'max' ? 'at most' : 'at least'} ${limit}x`, measured: s ? `${s.median.toFixed(2)}x (${s.p25.toFixed(2)}-${s.p75.toFixed(2)})` : 'n/a', met: s ? (op === 'max' ? s.median <= limit : s.median >= limit) : false });
  if (calls) {
    ratioRow('wispd / minimal relay, seq p50', calls.ratios.wispdRelay.p50, 'max', 1.3);
    ratioRow('wispd / minimal relay, seq p99', calls.ratios.wispdRelay.p99, 'max', 1.5);
    ratioRow('wispd / minimal relay, throughput at 16 in flight', calls.ratios.wispdRelay.rate, 'min', 0.6);
    ratioRow('wispd / mcp-hub, seq p50', calls.ratios.wispdHub.p50, 'max', 0.5);
    ratioRow('wispd / mcp-hub, throughput', calls.ratios.wispdHub.rate, 'min', 2);
    const cpu = calls.subjects.wispd.cpuUsPerCall;
    rows.push({ figure: 'daemon CPU per call at 16 in flight', target: 'at most 50 us', measured: cpu ? `${spread(cpu, 0)} us` : 'n/a (no /proc)', met: cpu ? cpu.median <= 50 : false });
    // The same target as a same-run ratio: the issue set 50 us where it measured the relay at 19 us
    // (2.6x); on a slower or busier machine the relay itself takes more than 50 us.
    ratioRow(`the same, against the relay's in the same run (the issue's 50 us over its relay's ${ISSUE_RELAY_CPU_US} us)`, calls.ratios.wispdRelay.cpu, 'max', CPU_RATIO_TARGET);
  }
  const byName = (name) => report.results?.find((r) => r.name === name)?.ratio;
  // Only the parts that ran (BENCH_ONLY) get a row.
  const cli = byName('wispctl status, wall time');
  if (cli) ratioRow('`wispctl status` / minimal node client', cli, 'max', 1.25);
  const cold = byName('cold start to socket ready, 16 services configured');
  if (cold) ratioRow('cold start (16 services) / bare node listener', cold, 'max', 3);
  if (memory) {
    const w = memory.wispd;
    const mb = (kb) => (kb / MB).toFixed(1);
    rows.push({
      figure: `RSS idle / 96 tools / after ${memory.calls.toLocaleString('en')} calls`,
      target: 'at most 65 / 75 / 80 MB',
      measured: `${mb(w.idleKb)} / ${mb(w.loadedKb)} / ${mb(w.afterCallsKb)} MB (mcp-hub ${mb(memory.mcpHub.idleKb)} / ${mb(memory.mcpHub.loadedKb)} / ${mb(memory.mcpHub.afterCallsKb)})`,
      met: w.idleKb <= 65 * MB && w.loadedKb <= 75 * MB && w.afterCallsKb <= 80 * MB,
    });
    rows.push({ figure: 'heap flat (after a full GC, block to block)', target: 'flat', measured: `${(memory.heap.growthAfterFirstBlock / 1048576).toFixed(2)} MB growth after the first block`, met: memory.heap.flat });
  }
  const box = report.sandbox;
  if (box) {
    // Issue 34's targets.
    ratioRow('activation sandboxed / unsandboxed (issue 34)', box.activation.ratio, 'max', 1.3);
    ratioRow('tool call seq p50 sandboxed / unsandboxed (issue 34)', box.calls.ratio.p50, 'max', 1.05);
    // Against a minimal relay with the same hops (two connections, one process between), as the
    // call figures are against bench/relay.mjs: what the proxy's own work costs. Straight to the
    // destination is one connection and no hop, a floor no proxy reaches; shown, not a target.
    ratioRow('request p50 through the egress proxy (forward) / a minimal relay with the same hops, loopback (issue 34)', box.egress.ratio.forwardOverRelay, 'max', 1.5);
    ratioRow('the same as a CONNECT tunnel / the relay tunnelling (issue 34)', box.egress.ratio.connectOverRelay, 'max', 1.5);
    const shown = (s) => (s ? `${s.median.toFixed(2)}x (${s.p25.toFixed(2)}-${s.p75.toFixed(2)})` : 'n/a');
    rows.push({ figure: 'the same two / straight to the destination (no hop)', target: 'none (shown: the hop is the floor)', measured: `forward ${shown(box.egress.ratio.forward)}, CONNECT ${shown(box.egress.ratio.connect)}`, met: undefined });
  }
  const eras = report.eras;
  if (eras) {
    // Issue 36: the era costs nothing measurable (activation pays one refused round trip on ~0.3 s).
    ratioRow('activation 2026 / the same server speaking 2025 (issue 36)', eras.activation.ratio, 'max', 1.1);
    ratioRow('tool call seq p50 2026 / 2025 (issue 36)', eras.calls.ratio.p50, 'max', 1.05);
  }
  return rows;
}

function callTables(calls) {
  const names = Object.keys(calls.subjects);
  const label = { direct: 'direct SDK `callTool`', relay: 'minimal relay (bench/relay.mjs)', wispd: 'wispd `tools.call`', 'mcp-hub': 'mcp-hub 4.2.1 REST (no approval)' };
  const r = (s) => spread(s, 2);
  return [
    '## Tool calls',
    '',
    'Medians over rounds, with the 25th-75th percentile spread.',
    '',
    '| subject | seq p50 (ms) | seq p99 (ms) | calls/s at 16 in flight | daemon CPU per call (us) |',
    '|---|---|---|---|---|',
    ...names.map((n) => {
      const s = calls.subjects[n];
      return `| ${label[n] ?? n} | ${ms(s.p50)} | ${ms(s.p99)} | ${spread(s.rate, 0)} | ${s.cpuUsPerCall ? spread(s.cpuUsPerCall, 0) : 'n/a (in the bench process)'} |`;
    }),
    '',
    '| ratio (per round, then median) | seq p50 | seq p99 | throughput | CPU per call |',
    '|---|---|---|---|---|',
    `| wispd / minimal relay | ${r(calls.ratios.wispdRelay.p50)} | ${r(calls.ratios.wispdRelay.p99)} | ${r(calls.ratios.wispdRelay.rate)} | ${r(calls.ratios.wispdRelay.cpu)} |`,
    `| wispd / mcp-hub | ${r(calls.ratios.wispdHub.p50)} | ${r(calls.ratios.wispdHub.p99)} | ${r(calls.ratios.wispdHub.rate)} | ${r(calls.ratios.wispdHub.cpu)} |`,
    '',
    `- ${calls.note}.`,
    ...separately(calls),
    '',
  ];
}

/** Issue 16: a call through `wispctl mcp serve` (approval answered at once) against a direct SDK call. */
function gatewayTable(g) {
  const r = (s) => spread(s, 2);
  const label = { direct: 'direct SDK `callTool` on the server', relay: 'SDK `callTool` on a minimal relay with the same hops (approved at once)', gateway: 'SDK `callTool` on `wispctl mcp serve` (approved at once)' };
  return [
    '## Calls through the MCP gateway',
    '',
    `| subject | seq p50 (ms) | seq p99 (ms) | calls/s at ${g.concurrency} in flight |`,
    '|---|---|---|---|',
    ...Object.entries(g.subjects).map(([n, s]) => `| ${label[n] ?? n} | ${ms(s.p50)} | ${ms(s.p99)} | ${spread(s.rate, 0)} |`),
    '',
    '| ratio (per round, then median) | seq p50 | seq p99 | throughput |',
    '|---|---|---|---|',
    `| gateway / direct | ${r(g.ratios.gatewayDirect.p50)} | ${r(g.ratios.gatewayDirect.p99)} | ${r(g.ratios.gatewayDirect.rate)} |`,
    ...(g.ratios.gatewayRelay !== undefined
      ? [
          `| gateway / the same hops' relay | ${r(g.ratios.gatewayRelay.p50)} | ${r(g.ratios.gatewayRelay.p99)} | ${r(g.ratios.gatewayRelay.rate)} |`,
          `| the relay / direct (what the hops and the approval cost) | ${r(g.ratios.relayDirect.p50)} | - | ${r(g.ratios.relayDirect.rate)} |`,
        ]
      : []),
    '',
    `- ${g.note}.`,
    ...separately(g),
    '',
  ];
}

/** Issue 34: what the sandbox and the egress proxy cost, each against its baseline in the same run. */
function sandboxTable(box) {
  const r = (s) => spread(s, 2);
  const { activation: a, calls: c, egress: e } = box;
  return [
    '## The sandbox and the egress proxy',
    '',
    '| measurement | subject median (p25-p75) ms | baseline median (p25-p75) ms | ratio median (p25-p75) |',
    '|---|---|---|---|',
    `| activation (64 tools), sandboxed / unsandboxed | ${spread(a.subject, 1)} | ${spread(a.baseline, 1)} | ${r(a.ratio)} |`,
    `| tool call seq p50, sandboxed / unsandboxed | ${ms(c.subjects.sandboxed.p50)} | ${ms(c.subjects.unsandboxed.p50)} | ${r(c.ratio.p50)} |`,
    `| tool call seq p99, sandboxed / unsandboxed | ${ms(c.subjects.sandboxed.p99)} | ${ms(c.subjects.unsandboxed.p99)} | ${r(c.ratio.p99)} |`,
    `| GET p50 via the egress proxy (forward) / direct | ${ms(e.subjects.forward.p50)} | ${ms(e.subjects.direct.p50)} | ${r(e.ratio.forward)} |`,
    `| GET p50 via a CONNECT tunnel / direct | ${ms(e.subjects.connect.p50)} | ${ms(e.subjects.direct.p50)} | ${r(e.ratio.connect)} |`,
    `| GET p50 via the egress proxy (forward) / the minimal relay (forward) | ${ms(e.subjects.forward.p50)} | ${ms(e.subjects['relay-forward'].p50)} | ${r(e.ratio.forwardOverRelay)} |`,
    `| GET p50 via a CONNECT tunnel / the minimal relay's tunnel | ${ms(e.subjects.connect.p50)} | ${ms(e.subjects['relay-connect'].p50)} | ${r(e.ratio.connectOverRelay)} |`,
    '',
    `- ${box.note}.`,
    ...separately(box),
    '',
  ];
}

/** Issue 36: the same server spoken to in 2026-07-28 and in 2025, in one daemon. */
function erasTable(e) {
  const r = (s) => spread(s, 2);
  const { activation: a, calls: c, memory: m } = e;
  const mb = (kb) => (kb / MB).toFixed(1);
  const row = (label, k, digits) => `| ${label} | ${spread(c.subjects['2026'][k], digits)} | ${spread(c.subjects['2025'][k], digits)} | ${r(c.ratio[k])} | ${spread(c.subjects.scenario[k], digits)} |`;
  return [
    '## Both eras of MCP (2026-07-28 and 2025)',
    '',
    '| measurement | 2026 median (p25-p75) | 2025 median (p25-p75) | 2026 / 2025 | scenario-server, SDK 1.x (scale) |',
    '|---|---|---|---|---|',
    `| activation, 64 tools (ms) | ${spread(a.subject, 1)} | ${spread(a.baseline, 1)} | ${r(a.ratio)} | ${spread(a.scenario, 1)} |`,
    row('tool call seq p50 (ms)', 'p50', 3),
    row('tool call seq p95 (ms)', 'p95', 3),
    row('tool call seq p99 (ms)', 'p99', 3),
    row(`calls/s at ${e.concurrency} in flight`, 'rate', 0),
    row('daemon CPU per call (us)', 'cpuUsPerCall', 0),
    row('server CPU per call (us)', 'serverCpuUsPerCall', 0),
    ...(c.sdkRatio ? [`| no daemon: SDK \`callTool\` seq p50 (ms), successor Client / frozen Client on the same server | ${spread(c.subjects['sdk-2026'].p50, 3)} | ${spread(c.subjects['sdk-2025'].p50, 3)} | ${r(c.sdkRatio.p50)} | - |`] : []),
    `| daemon RSS idle / one service active / after ${m.calls} calls (MB) | ${mb(m['2026'].idleKb)} / ${mb(m['2026'].activeKb)} / ${mb(m['2026'].afterCallsKb)} | ${mb(m['2025'].idleKb)} / ${mb(m['2025'].activeKb)} / ${mb(m['2025'].afterCallsKb)} | ${(m['2026'].afterCallsKb / m['2025'].afterCallsKb).toFixed(2)} (after the calls) | - |`,
    '',
    `- ${e.note}.`,
    ...separately(e),
    '',
  ];
}

function runsText(runs) {
  const mb = (kb) => (kb / MB).toFixed(1);
  return runs.map((r) => [r.idleKb, r.loadedKb, r.afterCallsKb, r.afterIdleKb].map(mb).join(' / ')).join(', ');
}

function memoryTable(memory) {
  const mb = (kb) => (kb / MB).toFixed(1);
  const w = memory.wispd;
  const h = memory.mcpHub;
  return [
    '## Memory (RSS)',
    '',
    `| state | wispd (MB) | mcp-hub (MB) | wispd / mcp-hub | wispd / bare Node (${mb(memory.bareNodeKb)} MB) |`,
    '|---|---|---|---|---|',
    ...[['idle', 'idleKb'], ['16 services, 96 active tools', 'loadedKb'], [`after ${memory.calls} calls`, 'afterCallsKb'], ...(w.afterIdleKb !== undefined ? [[`the same, idle ${memory.idleMs / 1000} s later`, 'afterIdleKb']] : [])].map(
      ([state, k]) => `| ${state} | ${mb(w[k])} | ${mb(h[k])} | ${(w[k] / h[k]).toFixed(2)} | ${(w[k] / memory.bareNodeKb).toFixed(2)} |`,
    ),
    '',
    `- ${memory.note}.`,
    ...(w.runs !== undefined ? [`- Each run, idle / 96 tools / after the calls / 12 s later (MB): wispd ${runsText(w.runs)}; mcp-hub ${runsText(h.runs)}.`] : []),
    ...separately(memory),
    `- Heap after a full GC, in a daemon run in-process with \`--expose-gc\` (bench/heap-check.mjs), after each block of ${memory.heap.block} approved calls: ${memory.heap.heapUsedAfterGc.map((b) => (b / 1048576).toFixed(1)).join(' / ')} MB. The first block fills the bounded histories (events, resolved approvals); "flat" means the heap grows by at most 0.5 MB over the blocks after it (here ${(memory.heap.growthAfterFirstBlock / 1048576).toFixed(2)} MB): RSS growth beyond that is V8 keeping the heap it grew while calls were in flight, not a leak.`,
    '',
  ];
}

export function markdown(report) {
  const f = (n) => n.toFixed(1);
  const rows = targets(report);
  const lines = [
    '# Benchmark results',
    '',
    `Measured ${report.at} on ${report.platform}, ${report.cpus} CPUs, Node ${report.node}; ${report.runs} interleaved rounds. Reproduce with \`npm run bench\`.`,
    `Load average (1, 5, 15 min) ${report.loadAvgBefore.map((x) => x.toFixed(2)).join(', ')} before the run, ${report.loadAvgAfter.map((x) => x.toFixed(2)).join(', ')} after it (that one includes the bench's own processes).`,
    'Every figure is taken in the same run as its baseline; ratios are taken per round, then the median (with the 25th-75th percentile spread).',
    '',
    '## Targets (issue 14)',
    '',
    '| figure | target | measured median (p25-p75) | met |',
    '|---|---|---|---|',
    ...rows.map((t) => `| ${t.figure} | ${t.target} | ${t.measured} | ${t.met === undefined ? '-' : t.met ? 'yes' : 'no'} |`),
    '',
  ];
  if (report.toolCalls) lines.push(...callTables(report.toolCalls));
  if (report.gateway) lines.push(...gatewayTable(report.gateway));
  if (report.results) {
    lines.push(
      '## Start-up, CLI, activation, installs',
      '',
      '| measurement | subject median (p25-p75) ms | baseline median (p25-p75) ms | ratio median (p25-p75) |',
      '|---|---|---|---|',
      ...report.results.map((r) => `| ${r.name} | ${spread(r.subject, 1)} | ${spread(r.baseline, 1)} | ${spread(r.ratio, 2)} |`),
      '',
      ...report.results.map((r) => `- **${r.name}**: ${r.note}.`),
      '',
    );
  }
  if (report.sandbox) lines.push(...sandboxTable(report.sandbox));
  if (report.eras) lines.push(...erasTable(report.eras));
  if (report.stream) {
    const s = report.stream;
    lines.push(
      '## Model stream relay',
      '',
      '| measurement | through the daemon | direct | ratio |',
      '|---|---|---|---|',
      `| chunk written -> delta received, p50 (ms) | ${s.subject.p50.toFixed(2)} | ${s.baseline.p50.toFixed(2)} | ${s.ratio.p50.toFixed(2)} |`,
      `| chunk written -> delta received, p99 (ms) | ${s.subject.p99.toFixed(2)} | ${s.baseline.p99.toFixed(2)} | ${s.ratio.p99.toFixed(2)} |`,
      `| deltas per second | ${f(s.throughput.daemonPerSecond)} | ${f(s.throughput.directPerSecond)} | ${s.throughput.ratio.toFixed(2)} |`,
      '',
      `- ${s.note}.`,
      ...separately(s),
      '',
    );
  }
  if (report.memory) lines.push(...memoryTable(report.memory));
  return lines.join('\n');
}
