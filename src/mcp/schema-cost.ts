import { LIMITS, WispError } from '../core/index.js';

/**
 * A static bound on what checking arguments against a server's schema can cost, computed
 * before the schema is compiled. Patterns already run in linear time (linear-regexp.ts),
 * but a small schema can still make ajv evaluate one value exponentially many times:
 * `$ref`s that fan out (ten refs to a definition that holds ten refs to the next, eight
 * levels deep: 10^8 evaluations), or a `$ref` cycle that never moves on to a child value.
 * ajv has no evaluation budget, so we bound the schema instead of the run (a worker with a
 * deadline would cost every call a thread round trip).
 *
 * The cost counts subschema evaluations along the arguments, as if every `$ref` were
 * inlined: keywords that apply to the same value (allOf, anyOf, $ref, if/then/else, ...)
 * add their subschemas' cost at the same depth, keywords that apply to child values
 * (properties, items, additionalProperties, ...) at the next depth. Arguments nest at most
 * LIMITS.maxArgumentDepth deep, so recursion through child values is bounded; a cycle
 * that stays on the same value is refused. Only references inside the schema are followed
 * (`#`, `#/json/pointer`, `#anchor`); anything else is refused, as no schema is ever fetched.
 */

/** Subschemas that apply to the same value. */
const SAME_ONE = ['not', 'if', 'then', 'else'] as const;
const SAME_LIST = ['allOf', 'anyOf', 'oneOf'] as const;
const SAME_MAP = ['dependentSchemas'] as const;
/** Subschemas that apply to child values (items, properties, property names). */
const CHILD_ONE = ['additionalItems', 'additionalProperties', 'contains', 'propertyNames', 'unevaluatedItems', 'unevaluatedProperties'] as const;
const CHILD_LIST = ['prefixItems'] as const;
const CHILD_MAP = ['properties', 'patternProperties'] as const;
const REF_KEYWORDS = ['$ref', '$dynamicRef', '$recursiveRef'] as const;

type Schema = Record<string, unknown>;

function isSchemaObject(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isSubschema(value: unknown): value is Schema | boolean {
  return typeof value === 'boolean' || isSchemaObject(value);
}

/** The subschemas of `node`, each with whether it applies to a child value. */
function subschemas(node: Schema): { schema: Schema | boolean; child: boolean }[] {
  const out: { schema: Schema | boolean; child: boolean }[] = [];
  const add = (value: unknown, child: boolean): void => {
    if (isSubschema(value)) out.push({ schema: value, child });
  };
  for (const key of SAME_ONE) add(node[key], false);
  for (const key of SAME_LIST) if (Array.isArray(node[key])) for (const item of node[key]) add(item, false);
  for (const key of SAME_MAP) if (isSchemaObject(node[key])) for (const item of Object.values(node[key])) add(item, false);
  // draft-07: `dependencies` maps to a schema or to a list of names.
  if (isSchemaObject(node.dependencies)) for (const item of Object.values(node.dependencies)) if (!Array.isArray(item)) add(item, false);
  for (const key of CHILD_ONE) add(node[key], true);
  for (const key of CHILD_LIST) if (Array.isArray(node[key])) for (const item of node[key]) add(item, true);
  for (const key of CHILD_MAP) if (isSchemaObject(node[key])) for (const item of Object.values(node[key])) add(item, true);
  // `items`: one schema, or (draft-07) a list of schemas.
  if (Array.isArray(node.items)) for (const item of node.items) add(item, true);
  else add(node.items, true);
  return out;
}

/** Every schema object in the document, with the resource (nearest `$id`) it belongs to, and the anchors. */
function index(root: Schema): { resourceOf: Map<Schema, Schema>; anchors: Map<string, Schema> } {
  const resourceOf = new Map<Schema, Schema>();
  const anchors = new Map<string, Schema>();
  const stack: { node: unknown; resource: Schema }[] = [{ node: root, resource: root }];
  for (let job = stack.pop(); job !== undefined; job = stack.pop()) {
    const { node } = job;
    if (Array.isArray(node)) {
      for (const item of node) stack.push({ node: item, resource: job.resource });
      continue;
    }
    if (!isSchemaObject(node) || resourceOf.has(node)) continue;
    let resource = job.resource;
    const id = node.$id;
    if (typeof id === 'string' && node !== root) {
      // draft-07 names an anchor with `$id: "#name"`; any other $id starts a new resource.
      if (id.startsWith('#')) anchors.set(id.slice(1), node);
      else resource = node;
    }
    if (typeof node.$anchor === 'string') anchors.set(node.$anchor, node);
    if (typeof node.$dynamicAnchor === 'string') anchors.set(node.$dynamicAnchor, node);
    resourceOf.set(node, resource);
    for (const value of Object.values(node)) if (typeof value === 'object' && value !== null) stack.push({ node: value, resource });
  }
  return { resourceOf, anchors };
}

function resolvePointer(resource: Schema, pointer: string): unknown {
  let at: unknown = resource;
  for (const raw of pointer.split('/').slice(1)) {
    let token: string;
    try {
      token = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    } catch {
      return undefined;
    }
    if (Array.isArray(at)) at = /^(0|[1-9]\d*)$/.test(token) ? at[Number(token)] : undefined;
    else if (isSchemaObject(at) && Object.hasOwn(at, token)) at = at[token];
    else return undefined;
  }
  return at;
}

/**
 * Throws SCHEMA_INVALID when checking a value against `root` could cost more than
 * LIMITS.maxSchemaCost evaluations, or when it follows a reference we do not.
 */
export function checkSchemaCost(toolName: string, root: Schema): void {
  const { resourceOf, anchors } = index(root);
  const refused = (why: string): WispError => new WispError('SCHEMA_INVALID', `tool ${JSON.stringify(toolName)} has an input schema that ${why}`, { tool: toolName });

  const target = (node: Schema, ref: string): Schema | boolean => {
    let found: unknown;
    if (ref === '#' || ref === '') found = resourceOf.get(node) ?? root;
    else if (ref.startsWith('#/')) found = resolvePointer(resourceOf.get(node) ?? root, ref.slice(1));
    else if (ref.startsWith('#')) found = anchors.get(ref.slice(1));
    else throw refused(`refers outside itself (${JSON.stringify(ref.slice(0, 100))}): only references inside the schema (#...) are followed`);
    if (!isSubschema(found)) throw refused(`has a reference that leads nowhere (${JSON.stringify(ref.slice(0, 100))})`);
    return found;
  };

  // cost(node, depth): evaluations of `node` and everything it applies, on a value with
  // `depth` levels of nesting left below it. Memoised; iterative over an explicit stack
  // so a deep schema cannot overflow ours.
  const memo = new Map<Schema, Map<number, number>>();
  const onStack = new Map<Schema, Set<number>>();
  const known = (node: Schema, depth: number): number | undefined => memo.get(node)?.get(depth);
  const edges = (node: Schema): { schema: Schema | boolean; child: boolean }[] => {
    const list = subschemas(node);
    for (const key of REF_KEYWORDS) {
      const ref = node[key];
      if (typeof ref === 'string') list.push({ schema: target(node, ref), child: false });
    }
    return list;
  };
  interface Frame {
    node: Schema;
    depth: number;
    pending: { schema: Schema | boolean; child: boolean }[];
    sum: number;
  }
  const limit = LIMITS.maxSchemaCost;
  const maxDepth = LIMITS.maxArgumentDepth;
  const stack: Frame[] = [];
  const enter = (node: Schema, depth: number): void => {
    const active = onStack.get(node) ?? new Set<number>();
    if (active.has(depth)) throw refused('has a reference cycle that never moves on to a nested value (it would never end)');
    active.add(depth);
    onStack.set(node, active);
    stack.push({ node, depth, pending: edges(node), sum: 1 });
  };
  enter(root, maxDepth);
  while (stack.length > 0) {
    const frame = stack[stack.length - 1] as Frame;
    const next = frame.pending.pop();
    if (next === undefined) {
      stack.pop();
      onStack.get(frame.node)?.delete(frame.depth);
      let byDepth = memo.get(frame.node);
      if (byDepth === undefined) memo.set(frame.node, (byDepth = new Map<number, number>()));
      byDepth.set(frame.depth, frame.sum);
      const parent = stack[stack.length - 1];
      if (parent !== undefined) parent.sum += frame.sum;
      if ((parent?.sum ?? frame.sum) > limit) throw refused(`would cost too much to check (more than ${limit} evaluations per value, counting every $ref inlined)`);
      continue;
    }
    const depth = next.child ? frame.depth - 1 : frame.depth;
    if (depth < 0) continue; // no value that deep: never evaluated
    if (typeof next.schema === 'boolean') {
      frame.sum += 1;
      continue;
    }
    const done = known(next.schema, depth);
    if (done !== undefined) {
      frame.sum += done;
      if (frame.sum > limit) throw refused(`would cost too much to check (more than ${limit} evaluations per value, counting every $ref inlined)`);
      continue;
    }
    enter(next.schema, depth);
  }
}
