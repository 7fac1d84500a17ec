/** The OpenRPC document rpc.discover serves, built from the method and event tables. */
import type { TSchema } from '@sinclair/typebox';
import { ERROR_CATALOG, ERROR_CODES } from '../errors.js';
import { LIMITS } from '../limits.js';
import { events } from './events.js';
import { InstallAttempt, InstallPlanView } from './install-shapes.js';
import { methods } from './methods.js';
import { Approval, ConnectionState, ErrorCodeSchema, Service, ToolCallResult, ToolInfo } from './shapes.js';
import { DaemonStatus } from './status-shapes.js';

/** The OpenRPC document served by rpc.discover (and rendered into docs/protocol.md). */
export function openRpcDocument(version: string): { openrpc: string } & Record<string, unknown> {
  const json = (schema: TSchema): unknown => JSON.parse(JSON.stringify(schema));
  return {
    openrpc: '1.3.2',
    info: {
      title: 'wispd control protocol',
      version,
      description:
        'JSON-RPC 2.0 over a Unix domain socket, one JSON message per line (max 1 MB per line). ' +
        'Application errors use code -32000 with a stable string code in error.data.code.',
    },
    methods: Object.entries(methods).map(([name, def]) => ({
      name,
      summary: def.summary,
      paramStructure: 'by-name',
      params: Object.entries((def.params as { properties?: Record<string, TSchema> }).properties ?? {}).map(
        ([param, schema]) => ({
          name: param,
          required: ((def.params as { required?: string[] }).required ?? []).includes(param),
          schema: json(schema),
        }),
      ),
      result: { name: 'result', schema: json(def.result) },
      errors: def.errors.map((code) => ({
        code: ERROR_CATALOG[code].rpcCode,
        message: code,
        data: { code },
      })),
    })),
    components: {
      schemas: {
        Service: json(Service),
        ConnectionState: json(ConnectionState),
        ToolInfo: json(ToolInfo),
        Approval: json(Approval),
        ToolCallResult: json(ToolCallResult),
        DaemonStatus: json(DaemonStatus),
        InstallPlan: json(InstallPlanView),
        InstallAttempt: json(InstallAttempt),
        ErrorCode: json(ErrorCodeSchema),
      },
    },
    'x-events': Object.fromEntries(Object.entries(events).map(([type, schema]) => [type, json(schema)])),
    'x-errors': Object.fromEntries(
      ERROR_CODES.map((code) => [code, { rpcCode: ERROR_CATALOG[code].rpcCode, description: ERROR_CATALOG[code].description }]),
    ),
    'x-limits': LIMITS,
  };
}
