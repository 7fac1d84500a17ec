/**
 * Renders docs/protocol.md and docs/errors.md from the protocol definition, so the
 * reference can never drift from the code (a test compares the files with this output).
 */
import type { TSchema } from '@sinclair/typebox';
import { ERROR_CATALOG, EXIT } from '../errors.js';
import { LIMITS } from '../limits.js';
import { events, methods } from './protocol.js';

function schemaJson(schema: TSchema): string {
  return JSON.stringify(schema, null, 2);
}

function block(title: string, schema: TSchema): string[] {
  return [`${title}:`, '', '```json', schemaJson(schema), '```', ''];
}

export function renderProtocolMarkdown(): string {
  const lines: string[] = [
    '# wispd control protocol',
    '',
    '<!-- Generated from src/core/wire/protocol.ts by `npm run docs`. Do not edit by hand. -->',
    '',
    'JSON-RPC 2.0 over a Unix domain socket, one JSON message per line (UTF-8, `\\n`-terminated).',
    `A line longer than ${LIMITS.maxControlFrameBytes} bytes is refused with \`FRAME_TOO_LARGE\` and that connection is closed.`,
    'Params are by name (an object). Batches are accepted. Responses may arrive in any order; match them by `id`.',
    'Every error carries a stable string code in `error.data.code` ([errors.md](errors.md)); application errors use JSON-RPC code -32000.',
    '`rpc.discover` returns this same definition as an OpenRPC document.',
    '',
    'Events are notifications `{"jsonrpc":"2.0","method":"event","params":{seq, type, at, ...}}`, sent only to',
    'connections that called `events.subscribe`. `seq` is monotonic within one daemon run (`runId`).',
    '',
    '## Methods',
    '',
  ];
  for (const [name, def] of Object.entries(methods)) {
    lines.push(`### \`${name}\``, '', def.summary, '');
    lines.push(...block('Params', def.params), ...block('Result', def.result));
    if (def.errors.length > 0) lines.push(`Errors: ${def.errors.map((code) => `\`${code}\``).join(', ')}`, '');
  }
  lines.push('## Events', '');
  for (const [type, schema] of Object.entries(events)) {
    lines.push(`### \`${type}\``, '', schema.description ?? '', '', ...block('Shape', schema));
  }
  lines.push('## Limits', '', '| limit | value |', '|---|---|');
  for (const [name, value] of Object.entries(LIMITS)) lines.push(`| \`${name}\` | ${value} |`);
  lines.push('');
  return lines.join('\n');
}

export function renderErrorsMarkdown(): string {
  const lines = [
    '# Error codes',
    '',
    '<!-- Generated from src/core/errors.ts by `npm run docs`. Do not edit by hand. -->',
    '',
    'Every error that crosses the control socket carries one of these codes in `error.data.code`.',
    'Codes are stable: new ones may be added, none is renamed or removed. `wispctl` exits with the status shown.',
    '',
    '| code | JSON-RPC code | wispctl exit | meaning |',
    '|---|---|---|---|',
  ];
  for (const [code, entry] of Object.entries(ERROR_CATALOG)) {
    lines.push(`| \`${code}\` | ${entry.rpcCode} | ${entry.exit} | ${entry.description.replace(/\|/g, '\\|')} |`);
  }
  lines.push('', '## wispctl exit statuses', '', '| status | meaning |', '|---|---|');
  const meaning: Record<keyof typeof EXIT, string> = {
    ok: 'success',
    failure: 'a failure not listed below',
    usage: 'bad usage or invalid input',
    noDaemon: 'no daemon answers on the socket',
    notFound: 'the named thing does not exist',
    conflict: 'conflict: name taken, edited meanwhile, already running',
    limit: 'a documented limit was reached',
    refused: 'refused: the daemon is stopping, or a directory is unsafe',
  };
  for (const [key, status] of Object.entries(EXIT)) lines.push(`| ${status} | ${meaning[key as keyof typeof EXIT]} |`);
  lines.push('');
  return lines.join('\n');
}
