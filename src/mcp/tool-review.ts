import { WispError, type ConnectionState, type HeldTool, type ToolWarning } from '../core/index.js';
import type { CatalogTool } from './tool-catalog.js';
import { pinDiff } from './tool-diff.js';
import type { ToolPins } from './tool-pins.js';

/** The held tools of one active service, each against its pin, at the tool-list version they came with. */
export interface HeldReview {
  readonly generation: number;
  readonly toolListVersion: number;
  readonly tools: HeldTool[];
}

/** Each held tool with what changed: every differing leaf, a word diff of its description, the new definition, its warnings. */
export function heldReview(
  state: Extract<ConnectionState, { status: 'active' }>,
  held: readonly CatalogTool[],
  pins: ToolPins,
  warnings: (tool: CatalogTool) => ToolWarning[],
): HeldReview {
  return {
    generation: state.generation,
    toolListVersion: state.toolListVersion,
    tools: held.map((tool): HeldTool => {
      return {
        name: tool.name,
        modelName: tool.modelName,
        ...pinDiff(pins.pinned(tool.serviceId, tool.name), tool.definition),
        digest: tool.pinDigest,
        definition: tool.definition,
        warnings: warnings(tool),
      };
    }),
  };
}

/** A held tool as the human reviewed it: its name and the digest of the definition shown. */
export interface ReviewedTool {
  readonly name: string;
  readonly digest: string;
}

/**
 * The held tools to accept, each checked against what was reviewed: a name not held is
 * TOOL_NOT_FOUND; a definition other than the one shown (its digest differs) makes the whole
 * accept APPROVAL_STALE, so nothing is accepted that nobody saw. A name given twice counts once.
 */
export function chooseReviewed(serviceName: string, held: readonly CatalogTool[], reviewed: readonly ReviewedTool[]): CatalogTool[] {
  const chosen = new Map<string, CatalogTool>();
  for (const wanted of reviewed) {
    const tool = held.find((candidate) => candidate.name === wanted.name);
    if (tool === undefined) throw new WispError('TOOL_NOT_FOUND', `${serviceName} has no held tool named ${JSON.stringify(wanted.name)}`);
    if (tool.pinDigest !== wanted.digest) {
      throw new WispError('APPROVAL_STALE', `${serviceName}'s tool ${JSON.stringify(wanted.name)} is not the definition reviewed (it changed since): review it again`, { tool: wanted.name });
    }
    chosen.set(tool.name, tool);
  }
  return [...chosen.values()];
}
