// node bench/merge.mjs FILE: puts the parts of a BENCH_ONLY run (FILE: what it printed, its JSON
// report first) into bench/results/latest.json and rewrites latest.md from it, leaving every
// other part as it was. Each merged part keeps the date, load and rounds of its own run
// (`separateRun`), and latest.md says so under its table: its figures and the others' were not
// taken in the same run, so they are not compared with each other.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { root } from './common.mjs';
import { markdown, targets } from './report.mjs';

/** The parts a BENCH_ONLY run can put in its report that this merge takes (each an object of its own). */
const PARTS = ['toolCalls', 'gateway', 'stream', 'memory', 'sandbox', 'eras'];

const file = process.argv[2];
if (file === undefined) {
  console.error('usage: node bench/merge.mjs FILE (the output of a BENCH_ONLY=... node bench/run.js)');
  process.exit(2);
}
const printed = readFileSync(file, 'utf8');
// run.js prints the JSON report (ending with a line "}") and then the markdown.
const end = printed.indexOf('\n}\n');
if (!printed.startsWith('{') || end === -1) {
  console.error(`bench/merge: ${file} does not start with a bench report (JSON)`);
  process.exit(2);
}
const part = JSON.parse(printed.slice(0, end + 2));
const latestJson = path.join(root, 'bench', 'results', 'latest.json');
const latest = JSON.parse(readFileSync(latestJson, 'utf8'));
const merged = PARTS.filter((name) => part[name] !== undefined);
if (merged.length === 0) {
  console.error(`bench/merge: ${file} has none of the parts ${PARTS.join(', ')}`);
  process.exit(2);
}
for (const name of merged) {
  const { at, node, platform, cpus, runs, loadAvgBefore, loadAvgAfter } = part;
  latest[name] = { ...part[name], separateRun: { at, node, platform, cpus, runs, loadAvgBefore, loadAvgAfter } };
}
latest.targets = targets(latest);
writeFileSync(latestJson, `${JSON.stringify(latest, null, 2)}\n`);
writeFileSync(path.join(root, 'bench', 'results', 'latest.md'), markdown(latest));
console.error(`bench/merge: ${merged.join(', ')} from ${file} (measured ${part.at}) merged into bench/results/latest.*`);
