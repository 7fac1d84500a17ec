/**
 * A test that skips says why: `needs(ok, why)` returns `ok`, and when it is false writes
 * `skipped: <why>` to stderr once per reason, so a run that skipped something shows what it
 * did not test and what to install. CI fails on any skip .ci/expected-skips does not name
 * (scripts/ci-report.mjs), so a reason here is never a licence to skip there.
 */
const said = new Set<string>();

export function needs(ok: boolean, why: string): boolean {
  if (!ok && !said.has(why)) {
    said.add(why);
    process.stderr.write(`skipped: ${why}\n`);
  }
  return ok;
}
