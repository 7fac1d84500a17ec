import type { IncomingMessage, ServerResponse } from 'node:http';
import { WispError, type ErrorCode } from '../core/index.js';
import type { PanelBackend } from './backend.js';
import { SECURITY_HEADERS } from './guard.js';

/**
 * `POST /api/call {method, params}`: the pages' one way to the daemon. Only the methods the
 * pages use are forwarded; anything else (daemon.shutdown, model settings and keys, install
 * settings) is refused here, whatever the page asks.
 */
export const ALLOWED_METHODS: ReadonlySet<string> = new Set([
  'daemon.status',
  'services.list',
  'services.register',
  'services.registerRemote',
  'services.login',
  'services.update',
  'services.setEnv',
  'services.setHeaders',
  'services.carryOverEnv',
  'services.delete',
  'services.activate',
  'services.disable',
  'services.refreshTools',
  'services.logs',
  'services.sandboxPlan',
  'tools.list',
  'tools.call',
  'approvals.list',
  'approvals.respond',
  'installs.plan',
  'installs.start',
  'installs.list',
  'installs.get',
  'sources.list',
  'sources.reload',
  'sources.addProject',
  'sources.removeProject',
  'services.import',
  'sessions.list',
  'sessions.create',
  'sessions.get',
  'sessions.send',
  'sessions.cancel',
  'sessions.delete',
  'elicitations.list',
  'elicitations.respond',
  'tools.review',
  'tools.accept',
]);

/** Largest request body: the biggest thing a page sends is a registration (256 args). */
export const MAX_BODY_BYTES = 64 * 1024;

/** An answer of the API: JSON, never cached. */
export function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { ...SECURITY_HEADERS, 'Content-Type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
}

function refuse(res: ServerResponse, status: number, code: ErrorCode, message: string): void {
  json(res, status, { ok: false, error: { code, message } });
}

/** Reads a JSON body of at most MAX_BODY_BYTES; answers the refusal itself and resolves undefined. */
function readBody(req: IncomingMessage, res: ServerResponse): Promise<unknown> {
  return new Promise((resolve) => {
    const type = req.headers['content-type'] ?? '';
    // A form or a "simple" cross-site request cannot send this type without a preflight.
    if (!/^application\/json\s*(;|$)/i.test(type)) {
      refuse(res, 415, 'INVALID_REQUEST', 'the body must be application/json');
      resolve(undefined);
      return;
    }
    const declared = Number(req.headers['content-length'] ?? '0');
    const tooLarge = (): void => {
      res.setHeader('Connection', 'close');
      refuse(res, 413, 'LIMIT_EXCEEDED', `the body is over ${MAX_BODY_BYTES} bytes`);
      req.resume();
      resolve(undefined);
    };
    if (declared > MAX_BODY_BYTES) return tooLarge();
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    req.on('data', (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        done = true;
        tooLarge();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (done) return;
      done = true;
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      } catch {
        refuse(res, 400, 'PARSE_ERROR', 'the body is not JSON');
        resolve(undefined);
      }
    });
    req.on('error', () => resolve(undefined));
  });
}

/** What a page sees of a daemon error: its code, message, schema failures and install problems. */
function errorBody(error: unknown): { code: ErrorCode; message: string; errors?: unknown; problems?: unknown; result?: unknown } {
  if (error instanceof WispError) {
    const { errors, problems, result } = error.details;
    // TOOL_ERROR carries the error result (already redacted by the daemon): the page shows it as the model gets it.
    const toolResult = error.code === 'TOOL_ERROR' && typeof result === 'object' && result !== null ? { result } : {};
    return { code: error.code, message: error.message, ...(Array.isArray(errors) ? { errors } : {}), ...(Array.isArray(problems) ? { problems } : {}), ...toolResult };
  }
  return { code: 'INTERNAL_ERROR', message: error instanceof Error ? error.message : String(error) };
}

/** Handles one `POST /api/call` (the door checks have passed). */
export async function handleCall(req: IncomingMessage, res: ServerResponse, backend: PanelBackend): Promise<void> {
  const body = await readBody(req, res);
  if (body === undefined) return;
  const { method, params } = (typeof body === 'object' && body !== null ? body : {}) as { method?: unknown; params?: unknown };
  if (typeof method !== 'string' || (params !== undefined && (typeof params !== 'object' || params === null || Array.isArray(params)))) {
    refuse(res, 400, 'INVALID_REQUEST', 'expected {"method": string, "params"?: object}');
    return;
  }
  if (!ALLOWED_METHODS.has(method)) {
    refuse(res, 403, 'METHOD_NOT_FOUND', `the panel does not forward ${method.slice(0, 64)}`);
    return;
  }
  try {
    const result = await backend.call(method, params ?? {});
    json(res, 200, { ok: true, result });
  } catch (error) {
    json(res, 200, { ok: false, error: errorBody(error) });
  }
}
