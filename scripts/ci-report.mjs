#!/usr/bin/env node
// What .ci/run does with the suite's JSON reports (test-results/vitest.json for this
// machine's Node, vitest-node<version>.json for each further release scripts/test.sh runs):
//
//   node scripts/ci-report.mjs rerun     after a failed `npm test` whose tests ran: reruns
//                                        each report's failed test files once, on the Node
//                                        that failed them (reports rerun-<report>.json).
//                                        Exit 0 when every one passes now, 1 when any fails
//                                        again, 2 when the failure is not one of a test file
//                                        (an unhandled error, a release that could not be
//                                        fetched): nothing to rerun, the run fails.
//   node scripts/ci-report.mjs summary   the ten slowest test files, one `FLAKY: <file> >
//                                        <test>` line for each test that failed and then
//                                        passed on its rerun (also written to
//                                        test-results/flaky.txt, empty when none), a line
//                                        per further release, and the totals line.
//                                        Every skipped test gets a `SKIPPED:` line with
//                                        why: the reason .ci/expected-skips gives it, or
//                                        "not expected", which makes the exit status 1 (a
//                                        test that skips in silence tests nothing).
//
// A flaky test is a bug to fix: this only keeps one from hiding a broken one, and says so.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const results = path.join(root, 'test-results');

/** The suite's reports, this machine's Node first: [file name, release or null]. */
function reports() {
  if (!existsSync(results)) return [];
  const others = readdirSync(results)
    .filter((f) => /^vitest-node.+\.json$/.test(f))
    .sort();
  return [['vitest.json', null], ...others.map((f) => [f, f.slice('vitest-node'.length, -'.json'.length)])].filter(([f]) => existsSync(path.join(results, f)));
}

function read(file) {
  return JSON.parse(readFileSync(path.join(results, file), 'utf8'));
}

const relative = (name) => path.relative(root, name);

/** The test files a report failed, with the names of their failed tests (the file's own error when none failed). */
function failedFiles(report) {
  return report.testResults
    .filter((file) => file.status === 'failed')
    .map((file) => {
      const tests = file.assertionResults.filter((t) => t.status === 'failed').map((t) => [...t.ancestorTitles, t.title].join(' > '));
      const own = (file.message ?? '').split('\n')[0].trim();
      return { file: relative(file.name), tests: tests.length > 0 ? tests : [`(the file itself${own === '' ? '' : `: ${own}`})`] };
    });
}

/** `version bin-directory` of each further release scripts/test.sh runs on. */
function releaseBins() {
  const out = spawnSync(process.execPath, [path.join(root, 'scripts', 'npm12-runtime.mjs'), '--node'], { cwd: root, encoding: 'utf8' });
  if (out.status !== 0) return new Map();
  return new Map(
    out.stdout
      .trim()
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => line.split(' ')),
  );
}

function rerun() {
  const all = reports();
  if (all.length === 0) {
    console.log('ci-report: no test report: the run stopped before the tests, nothing to rerun');
    return 2;
  }
  const failing = all.map(([file, release]) => ({ file, release, failed: failedFiles(read(file)) })).filter((r) => r.failed.length > 0);
  if (failing.length === 0) {
    console.log('ci-report: the run failed but no test file did (an unhandled error, or a step after the tests): nothing to rerun, see above');
    return 2;
  }
  const bins = failing.some((r) => r.release !== null) ? releaseBins() : new Map();
  let status = 0;
  for (const { file, release, failed } of failing) {
    const files = failed.map((f) => f.file);
    console.log(`== rerunning ${files.length} failed test file${files.length === 1 ? '' : 's'} once${release === null ? '' : ` on node ${release}`}: ${files.join(' ')}`);
    const env = { ...process.env, WISP_TEST_REPORT: path.join('test-results', `rerun-${file}`) };
    if (release !== null) {
      const bin = bins.get(release);
      if (bin === undefined) {
        console.log(`ci-report: node ${release} is no longer at hand: its failures stand`);
        status = 1;
        continue;
      }
      env.WISP_TEST_NODE_BIN = bin;
    }
    const run = spawnSync('bash', [path.join(root, 'scripts', 'test.sh'), ...files], { cwd: root, env, stdio: 'inherit' });
    if (run.status !== 0) status = 1;
  }
  return status;
}

/**
 * .ci/expected-skips: `<test file> > <test name> :: <why>` a line (# starts a comment); the
 * name may end in `*` for every test whose name starts so.
 */
function expectedSkips() {
  const file = path.join(root, '.ci', 'expected-skips');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const [name, why = ''] = line.split(' :: ');
      return { name: name.trim(), why: why.trim() };
    });
}

function whySkipped(name, expected) {
  const found = expected.find((e) => (e.name.endsWith('*') ? name.startsWith(e.name.slice(0, -1)) : name === e.name));
  return found?.why;
}

function summary() {
  const all = reports();
  const expected = expectedSkips();
  const skipped = [];
  const flaky = [];
  let passed = 0;
  let failed = 0;
  const lines = [];
  for (const [file, release] of all) {
    const first = read(file);
    const rerunFile = `rerun-${file}`;
    const again = existsSync(path.join(results, rerunFile)) ? read(rerunFile) : null;
    // Per test file: its counts as rerun when it was, else as first run.
    const rerunOf = new Map((again?.testResults ?? []).map((f) => [relative(f.name), f]));
    let p = 0;
    let f = 0;
    for (const result of first.testResults) {
      const name = relative(result.name);
      const final = rerunOf.get(name) ?? result;
      p += final.assertionResults.filter((t) => t.status === 'passed').length;
      f += final.assertionResults.filter((t) => t.status === 'failed').length;
      for (const test of final.assertionResults.filter((t) => t.status === 'skipped' || t.status === 'pending' || t.status === 'todo')) {
        const full = `${name} > ${[...test.ancestorTitles, test.title].join(' > ')}`;
        skipped.push({ name: full, release, why: whySkipped(full, expected) });
      }
      if (result.status === 'failed' && final !== result && final.status === 'passed') {
        for (const test of failedFiles({ testResults: [result] })[0].tests) flaky.push(`${name} > ${test}${release === null ? '' : ` (node ${release})`}`);
      }
    }
    if (release !== null) lines.push(`node${release}: ${p} passed, ${f} failed`);
    passed += p;
    failed += f;
  }
  const main = all.find(([, release]) => release === null);
  if (main !== undefined) {
    const slowest = read(main[0])
      .testResults.map((r) => [r.endTime - r.startTime, relative(r.name)])
      .sort((a, b) => b[0] - a[0])
      .slice(0, 10);
    console.log('the ten slowest test files:');
    for (const [ms, name] of slowest) console.log(`  ${(ms / 1000).toFixed(1).padStart(6)} s  ${name}`);
  }
  mkdirSync(results, { recursive: true });
  writeFileSync(path.join(results, 'flaky.txt'), flaky.map((line) => `${line}\n`).join(''));
  for (const line of flaky) console.log(`FLAKY: ${line}`);
  if (flaky.length > 0) console.log(`(${flaky.length} flaky: failed, then passed on a rerun; each is a bug to fix. test-results/flaky.txt lists them)`);
  for (const skip of skipped) console.log(`SKIPPED: ${skip.name}${skip.release === null ? '' : ` (node ${skip.release})`}: ${skip.why ?? 'not expected (a test that skips in silence tests nothing; list it in .ci/expected-skips with why, or make it run)'}`);
  const unexpected = skipped.filter((skip) => skip.why === undefined).length;
  if (unexpected > 0) console.log(`${unexpected} test${unexpected === 1 ? '' : 's'} skipped that should have run: the run fails`);
  for (const line of lines) console.log(line);
  if (skipped.length > 0) console.log(`${skipped.length} skipped`);
  console.log(`${passed} passed, ${failed} failed`);
  return unexpected > 0 ? 1 : 0;
}

const mode = process.argv[2];
if (mode === 'rerun') process.exit(rerun());
else if (mode === 'summary') process.exit(summary());
else {
  console.error('usage: node scripts/ci-report.mjs rerun|summary');
  process.exit(2);
}
