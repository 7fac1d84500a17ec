// node bench/redaction.mjs (after npm run build): the cost of redaction itself, without a
// daemon. 20 held secrets (40 to 64 characters, as API keys and tokens are), and texts of
// 32 KB (the size a tool result is cut to) and of one small event: prose-like JSON with no
// secret (the common case), the same with the secrets in every encoding the redactor covers,
// one 32 KB base64 blob and one 32 KB percent-encoded text (the worst cases for the derived forms).
// Prints the median time of each, in microseconds, and how many secrets some text still shows
// in one of the encodings planted. BENCH_RUNS sets the rounds (default 200); REDACTOR_MODULE
// another build of src/secrets to compare with (a path to its index.js).
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const { Redactor } = await import(process.env.REDACTOR_MODULE ? pathToFileURL(path.resolve(process.env.REDACTOR_MODULE)).href : '../dist/secrets/index.js');

const runs = Number(process.env.BENCH_RUNS ?? 200);
let x = 0x9e3779b9;
const random = () => { x ^= x << 13; x ^= x >>> 17; x ^= x << 5; return (x >>> 0) / 2 ** 32; };
const pick = (alphabet, n) => Array.from({ length: n }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

const secrets = Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? `sk-${pick(ALNUM, 40 + i)}` : `tok/${pick(ALNUM, 20)}+${pick(ALNUM, 20 + i)}=`));
const redactor = new Redactor();
secrets.forEach((value, i) => redactor.hold(`h${i}`, `SECRET_${i}`, value));

const words = ['the', 'tool', 'returned', 'result', 'file', 'path', 'value', 'config', 'server', 'list', 'with', 'items', 'of', 'data'];
const prose = (chars) => {
  const parts = [];
  let n = 0;
  while (n < chars) {
    const line = JSON.stringify({ name: pick(words, 1), text: Array.from({ length: 12 }, () => pick(words, 1)).join(' '), id: pick(ALNUM, 8), n: Math.floor(random() * 1e6) });
    parts.push(line);
    n += line.length + 1;
  }
  return parts.join('\n').slice(0, chars);
};
const b64 = (s) => Buffer.from(s).toString('base64');
const lowerPercent = (s) => encodeURIComponent(s).replace(/%[0-9A-F]{2}/g, (t) => t.toLowerCase());
const encodings = (s, i) => [s, lowerPercent(s), b64(s), Buffer.from(s).toString("base64url"), `Basic ${b64(`user${i}:${s}`)}`];
const withSecrets = (() => {
  const planted = secrets.flatMap(encodings).join(' ... ');
  const filler = prose(32 * 1024 - planted.length);
  return `${filler.slice(0, filler.length / 2)}${planted}${filler.slice(filler.length / 2)}`;
})();
const flat = (s) => JSON.parse(JSON.stringify(s)); // as a server's text arrives: parsed, one flat string
const texts = {
  'prose, no secret (32 KB)': prose(32 * 1024),
  'prose with every secret in 5 encodings (32 KB)': withSecrets,
  'a base64 blob (32 KB)': Buffer.from(pick(ALNUM, 24 * 1024)).toString('base64').slice(0, 32 * 1024),
  'percent-encoded text (32 KB)': encodeURIComponent(prose(12 * 1024)).slice(0, 32 * 1024),
  'one small event (400 B)': prose(400),
};

const median = (xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const time = (fn) => {
  for (let i = 0; i < 100; i++) fn();
  const samples = [];
  for (let i = 0; i < runs; i++) {
    const t = process.hrtime.bigint();
    fn();
    samples.push(Number(process.hrtime.bigint() - t) / 1000);
  }
  return median(samples);
};

console.log(`redaction, 20 secrets, median of ${runs} runs (us)`);
for (const [name, built] of Object.entries(texts)) {
  const text = flat(built);
  const json = JSON.stringify({ text });
  const out = redactor.redact(text);
  const left = secrets.filter((s) => encodings(s, secrets.indexOf(s)).some((form) => out.includes(form))).length;
  console.log(`${name.padEnd(50)} redact ${time(() => redactor.redact(text)).toFixed(1).padStart(8)}   clean(JSON) ${time(() => redactor.clean(json)).toFixed(1).padStart(8)}${left > 0 ? `   (${left} secrets still shown in some form)` : ''}`);
}
// The worst case for a search that checks candidates: a periodic secret (a hostile token
// endpoint may choose one) and a periodic text, where every position is a candidate.
const periodic = new Redactor();
secrets.slice(1).forEach((value, i) => periodic.hold(`h${i}`, `SECRET_${i}`, value));
periodic.hold('p', 'PERIODIC', 'ab'.repeat(2000));
const periodicText = flat(`${'ab'.repeat(16 * 1024 - 1)}a`);
console.log(`${'periodic secret (4 KB) in a periodic text (32 KB)'.padEnd(50)} redact ${time(() => periodic.redact(periodicText)).toFixed(1).padStart(8)}   clean(JSON) ${time(() => periodic.clean(JSON.stringify(periodicText))).toFixed(1).padStart(8)}`);
const t = process.hrtime.bigint();
redactor.hold('h-new', 'NEW', 'a-new-secret-value-to-rebuild');
redactor.redact('x');
console.log(`rebuild after a change: ${(Number(process.hrtime.bigint() - t) / 1000).toFixed(0)} us`);
