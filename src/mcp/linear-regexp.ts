import type { RegExpEngine } from 'ajv/dist/types/index.js';
import { RE2JS } from 're2js';

/**
 * Regular expressions from servers' schemas (`pattern`, `patternProperties`) run in RE2
 * (re2js, a pure-JS port of RE2/J): matching time is linear in the input, whatever the
 * pattern. There is no fallback to the backtracking engine: a pattern RE2 cannot compile
 * (backreferences, lookaround) makes the schema invalid.
 *
 * Linear is not free: the cost of one test is about (input length) x (program size), and one
 * schema can apply many patterns, or one pattern many times (allOf, $ref), to the same
 * string. So each pattern's program is bounded, and so is the work of one validation: a
 * `RegExpMeter` is charged before every test and a validation that would exceed its budget
 * stops with `RegExpBudgetExceeded` (the arguments are refused, the daemon goes on).
 */

/** One pattern's compiled program, in RE2 instructions (`.{0,1000}` is about 2,000). */
export const MAX_PATTERN_PROGRAM = 4096;
/** Input characters x program instructions, summed over every test of one validation (about 0.1-1 s of work at worst). */
export const MAX_VALIDATION_REGEXP_COST = 8_000_000;

export class RegExpBudgetExceeded extends Error {
  constructor() {
    super(`the regular expressions of the schema would cost more than ${MAX_VALIDATION_REGEXP_COST} steps on these arguments`);
  }
}

/** Counts the regexp work of one validation. */
export class RegExpMeter {
  private spent = 0;

  reset(): void {
    this.spent = 0;
  }

  charge(cost: number): void {
    this.spent += cost;
    if (this.spent > MAX_VALIDATION_REGEXP_COST) throw new RegExpBudgetExceeded();
  }
}

/**
 * Backreferences (`\1`, `\k<name>`) and POSIX classes inside a class (`[[:alpha:]]`) are
 * refused here: RE2's translation would otherwise give them a different meaning silently.
 * Returns why the pattern is refused, or null.
 */
function unsupportedSyntax(pattern: string): string | null {
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i];
    if (ch === '\\') {
      const next = pattern[i + 1] ?? '';
      if (/[1-9]/.test(next) || next === 'k') return `backreferences (\\${next}) are not supported`;
      i++;
      continue;
    }
    if (inClass) {
      if (ch === '[' && pattern[i + 1] === ':') return 'POSIX character classes ([:name:]) are not supported';
      if (ch === ']') inClass = false;
    } else if (ch === '[') {
      inClass = true;
      if (pattern[i + 1] === ']') i++;
      else if (pattern[i + 1] === '^' && pattern[i + 2] === ']') i += 2;
    }
  }
  return null;
}

/**
 * Compiles one ECMAScript pattern for RE2. Throws (with the reason) if it is not a valid
 * ECMAScript pattern (JSON Schema's own rule), uses what RE2 cannot run in linear time, or
 * is too large.
 */
export function compileLinear(pattern: string, flags: string): RE2JS {
  // ECMAScript syntax first (parsing only: this RegExp is never run against anything).
  new RegExp(pattern, flags);
  const unsupported = unsupportedSyntax(pattern);
  if (unsupported !== null) throw new Error(unsupported);
  const compiled = RE2JS.compile(RE2JS.translateRegExp(pattern));
  const size = compiled.programSize();
  if (size > MAX_PATTERN_PROGRAM) throw new Error(`the pattern compiles to ${size} RE2 instructions (at most ${MAX_PATTERN_PROGRAM})`);
  return compiled;
}

/** An ajv `code.regExp` engine that compiles with RE2 and charges `meter` before each test. */
export function linearRegExpEngine(meter: RegExpMeter): RegExpEngine {
  const engine = (pattern: string, flags: string): { test(s: string): boolean; toString(): string } => {
    let compiled: RE2JS;
    try {
      compiled = compileLinear(pattern, flags);
    } catch (error) {
      throw new Error(`the pattern ${JSON.stringify(pattern)} cannot run in linear time: ${error instanceof Error ? error.message : String(error)}`);
    }
    const size = compiled.programSize();
    return {
      test(s: string): boolean {
        meter.charge((s.length + 1) * size);
        return compiled.test(s);
      },
      // ajv shares compiled patterns between keywords by this string: one per pattern and flags.
      toString: () => `/${pattern}/${flags}`,
    };
  };
  return Object.assign(engine, { code: 'wispLinearRegExp' });
}
