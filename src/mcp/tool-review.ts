import type { ConnectionState, HeldTool, ToolWarning } from '../core/index.js';
import type { CatalogTool } from './tool-catalog.js';
import { fieldChanges, wordDiff } from './tool-diff.js';
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
      const pin = pins.pinned(tool.serviceId, tool.name);
      const before = pin?.definition;
      const descriptionChanged = before !== undefined && before.description !== tool.definition.description;
      return {
        name: tool.name,
        modelName: tool.modelName,
        pin: pin === undefined ? 'added' : 'changed',
        digest: tool.pinDigest,
        pinnedDigest: pin?.digest ?? null,
        changes: before === undefined ? [] : fieldChanges(before, tool.definition),
        descriptionDiff: descriptionChanged ? wordDiff(before.description ?? '', tool.definition.description ?? '') : null,
        definition: tool.definition,
        warnings: warnings(tool),
      };
    }),
  };
}
