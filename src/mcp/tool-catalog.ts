import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { LIMITS, WispError, isRemoteTransport, type PinStatus, type PinnedDefinition, type ServiceTransport, type ToolIcon } from '../core/index.js';
import { canonicalJson, sha256Hex } from '../util/index.js';
import { checkSchemaCost } from './schema-cost.js';
// From tool-pins.ts: the supervisor loads that at start, and this module loads ajv (not at start).
import { pinDigestOf } from './tool-pins.js';
import { modelToolName } from './tool-names.js';
import { toolIcons, toolMeta } from './tool-extras.js';
import { RegExpBudgetExceeded, RegExpMeter, linearRegExpEngine } from './linear-regexp.js';

export { modelToolName } from './tool-names.js';

/** Checks arguments against a tool's input schema; `errors` says why after a false. */
export interface ArgumentValidator {
  (data: unknown): boolean;
  errors?: ErrorObject[] | null | undefined;
}

/** One tool of one active connection, as shown to humans and to models. */
export interface CatalogTool {
  readonly serviceId: string;
  readonly serviceName: string;
  /** From a remote (http) server: its results reach the model labelled as untrusted remote output. */
  readonly remote: boolean;
  readonly generation: number;
  readonly toolListVersion: number;
  /** The server's own name for it: untrusted text, shown, never interpreted. */
  readonly name: string;
  readonly modelName: string;
  readonly title: string | null;
  readonly description: string;
  readonly inputSchema: Record<string, unknown>;
  /** Untrusted hints: shown, never obeyed. */
  readonly annotations: Record<string, unknown> | null;
  readonly validate: ArgumentValidator;
  /** The output schema when it compiled (results are checked against it: validateOutput); null otherwise. */
  readonly outputSchema: Record<string, unknown> | null;
  readonly validateOutput: ArgumentValidator | null;
  /** The server's icons that passed the checks of tool-extras.ts, and its _meta when small (untrusted, neither pinned). */
  readonly icons: readonly ToolIcon[];
  readonly meta: Record<string, unknown> | null;
  /** Digest of the whole definition as the server sent it: equal digests, the same tool in every detail. */
  readonly definitionDigest: string;
  /** What is pinned of it (name, title, description, schemas, annotations) and its digest. */
  readonly definition: PinnedDefinition;
  readonly pinDigest: string;
  /** Against the service's pins: only a trusted tool is offered to models and callable. */
  readonly pin: PinStatus;
  /**
   * Why it cannot be called at all (listed for humans with this reason, offered to no model
   * or MCP client, a call refused TOOL_UNAVAILABLE before anyone is asked); null when it can.
   */
  readonly unavailable: string | null;
}

/** Why Wisp cannot call a tool as the server defines it; null when it can (see CatalogTool.unavailable). */
export function unavailableReason(tool: Tool): string | null {
  const execution = (tool as { execution?: { taskSupport?: unknown } }).execution;
  if (execution?.taskSupport === 'required') {
    return 'it must be called as an MCP task (execution.taskSupport "required"), and Wisp does not run tasks yet: every plain call would fail';
  }
  return null;
}

/** The canonical pinned definition of a tool: absent fields as null, nothing else the server sent. */
export function pinnedDefinition(tool: Tool): PinnedDefinition {
  return {
    name: tool.name,
    title: tool.title ?? null,
    description: tool.description ?? null,
    inputSchema: tool.inputSchema,
    outputSchema: (tool.outputSchema as Record<string, unknown> | undefined) ?? null,
    annotations: (tool.annotations as Record<string, unknown> | undefined) ?? null,
  };
}


const DRAFT_07 = /^https?:\/\/json-schema\.org\/draft-07\/schema#?$/;
const DRAFT_2020 = /^https?:\/\/json-schema\.org\/draft\/2020-12\/schema#?$/;

/**
 * Compiles input schemas: JSON Schema 2020-12 unless `$schema` explicitly selects
 * draft-07. No schema is ever fetched: an unresolvable (external) $ref fails compilation.
 * One compiler pair per connection, so `$id`s of one server cannot collide with another's.
 * Patterns run in RE2 (linear time; see linear-regexp.ts), never in the backtracking engine.
 */
export class SchemaCompiler {
  private draft2020: Ajv2020 | undefined;
  private draft07: Ajv | undefined;
  private readonly meter = new RegExpMeter();

  compile(toolName: string, schema: Record<string, unknown>): ArgumentValidator {
    const size = Buffer.byteLength(JSON.stringify(schema));
    if (size > LIMITS.maxInputSchemaBytes) {
      throw new WispError('LIMIT_EXCEEDED', `tool ${JSON.stringify(toolName)} has an input schema of ${size} bytes (at most ${LIMITS.maxInputSchemaBytes})`, {
        limit: 'maxInputSchemaBytes',
        max: LIMITS.maxInputSchemaBytes,
        tool: toolName,
      });
    }
    const dialect = schema.$schema;
    let ajv: Ajv | Ajv2020;
    if (dialect === undefined || (typeof dialect === 'string' && DRAFT_2020.test(dialect))) {
      ajv = this.draft2020 ??= new Ajv2020({ strict: false, allErrors: true, validateFormats: false, code: { regExp: linearRegExpEngine(this.meter) } });
    } else if (typeof dialect === 'string' && DRAFT_07.test(dialect)) {
      ajv = this.draft07 ??= new Ajv({ strict: false, allErrors: true, validateFormats: false, code: { regExp: linearRegExpEngine(this.meter) } });
    } else {
      throw new WispError('SCHEMA_INVALID', `tool ${JSON.stringify(toolName)} uses an unsupported $schema ${JSON.stringify(dialect)} (2020-12 or draft-07 only)`, {
        tool: toolName,
      });
    }
    checkSchemaCost(toolName, schema);
    let validate: ValidateFunction;
    try {
      validate = ajv.compile(schema);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new WispError('SCHEMA_INVALID', `tool ${JSON.stringify(toolName)} has an input schema that does not compile: ${reason}`, {
        tool: toolName,
      });
    }
    return this.metered(validate);
  }

  /** Each validation gets the regexp budget afresh; one that would exceed it is refused as invalid arguments. */
  private metered(validate: ValidateFunction): ArgumentValidator {
    const meter = this.meter;
    const checked: ArgumentValidator = (data: unknown): boolean => {
      meter.reset();
      try {
        const ok = validate(data);
        checked.errors = validate.errors;
        return ok;
      } catch (error) {
        if (!(error instanceof RegExpBudgetExceeded)) throw error;
        checked.errors = [{ instancePath: '', schemaPath: '#', keyword: 'pattern', params: {}, message: error.message }];
        return false;
      }
    };
    return checked;
  }
}

/**
 * The check of a tool's results, from its output schema, by the input schemas' rules (size,
 * cost, dialects, RE2 patterns); null when it has none, or one that fails those rules: such
 * a schema is not offered to anyone (nothing would check it), and the tool stays usable.
 */
function outputValidator(compiler: SchemaCompiler, tool: Tool): ArgumentValidator | null {
  const schema = tool.outputSchema as Record<string, unknown> | undefined;
  if (schema === undefined) return null;
  try {
    return compiler.compile(tool.name, schema);
  } catch (error) {
    if (error instanceof WispError) return null;
    throw error;
  }
}

/** Checks a discovered tool list against the limits and compiles every input schema. */
export function buildCatalog(
  service: { id: string; name: string; transport?: ServiceTransport | undefined },
  generation: number,
  toolListVersion: number,
  tools: readonly Tool[],
): CatalogTool[] {
  if (tools.length > LIMITS.maxToolsPerService) {
    throw new WispError('LIMIT_EXCEEDED', `${service.name} offers ${tools.length} tools (at most ${LIMITS.maxToolsPerService} per service)`, {
      limit: 'maxToolsPerService',
      max: LIMITS.maxToolsPerService,
    });
  }
  const seen = new Set<string>();
  const compiler = new SchemaCompiler();
  // Output schemas apart: an $id of one can never make an input schema fail to compile.
  const outputs = new SchemaCompiler();
  return tools.map((tool) => {
    if (seen.has(tool.name)) throw new WispError('PROTOCOL_ERROR', `${service.name} lists the tool ${JSON.stringify(tool.name)} twice`);
    seen.add(tool.name);
    const inputSchema = tool.inputSchema as Record<string, unknown>;
    // The input schema's own limit and checks first: their errors say more.
    const validate = compiler.compile(tool.name, inputSchema);
    const definition = pinnedDefinition(tool);
    const output = outputValidator(outputs, tool);
    const bytes = Buffer.byteLength(JSON.stringify(definition));
    if (bytes > LIMITS.maxToolDefinitionBytes) {
      throw new WispError('LIMIT_EXCEEDED', `tool ${JSON.stringify(tool.name)} has a definition of ${bytes} bytes (at most ${LIMITS.maxToolDefinitionBytes})`, {
        limit: 'maxToolDefinitionBytes',
        max: LIMITS.maxToolDefinitionBytes,
        tool: tool.name,
      });
    }
    return {
      serviceId: service.id,
      serviceName: service.name,
      remote: isRemoteTransport(service.transport),
      generation,
      toolListVersion,
      name: tool.name,
      modelName: modelToolName(service.id, tool.name),
      title: tool.title ?? null,
      description: tool.description ?? '',
      inputSchema,
      annotations: (tool.annotations as Record<string, unknown> | undefined) ?? null,
      validate,
      outputSchema: output === null ? null : (tool.outputSchema as Record<string, unknown>),
      validateOutput: output,
      icons: toolIcons(tool),
      meta: toolMeta(tool),
      definitionDigest: sha256Hex(canonicalJson(tool)),
      definition,
      pinDigest: pinDigestOf(definition),
      // Until the supervisor has compared it with the service's pins, a tool is held.
      pin: 'added' as const,
      unavailable: unavailableReason(tool),
    };
  });
}
