import type { Result, ToolWarning } from '../../core/index.js';
import { clean, cleanBlock, showArg, showJson } from '../render.js';

type Review = Result<'tools.review'>;
type HeldTool = Review['tools'][number];
type HeldOffer = Result<'offers.review'>['held'][number];

/** Hidden-text warnings, one line each, marked so they cannot be missed. */
export function warningLines(warnings: readonly ToolWarning[] | undefined, indent = '  '): string[] {
  return (warnings ?? []).map((w) => `${indent}WARNING: ${clean(w.message)}`);
}

/** A JSON value from the server, on one line, or "(absent)". */
function value(v: unknown, present: boolean): string {
  return present ? showJson(v) : '(absent)';
}

/**
 * A word diff on a terminal: removed runs as [-...-], added runs as {+...+} (git's plain
 * word diff), every part cleaned, so a hidden character shows as its escape.
 */
export function wordDiffText(parts: NonNullable<HeldTool['descriptionDiff']>): string {
  return parts.map((p) => (p.op === 'same' ? cleanBlock(p.text, '    ') : p.op === 'removed' ? `[-${cleanBlock(p.text, '    ')}-]` : `{+${cleanBlock(p.text, '    ')}+}`)).join('');
}

function heldToolText(tool: HeldTool): string[] {
  const head = `${showArg(tool.name)}: ${tool.pin === 'added' ? 'ADDED since the service was trusted' : 'CHANGED since it was trusted'}`;
  const lines = [head, ...warningLines(tool.warnings)];
  if (tool.pin === 'added') {
    lines.push(`  definition (from the server, untrusted):`);
    if (tool.definition.title !== null) lines.push(`    title:        ${clean(tool.definition.title)}`);
    lines.push(`    description:  ${cleanBlock(tool.definition.description ?? '', '                  ')}`);
    lines.push(`    inputSchema:  ${showJson(tool.definition.inputSchema)}`);
    if (tool.definition.outputSchema !== null) lines.push(`    outputSchema: ${showJson(tool.definition.outputSchema)}`);
    if (tool.definition.annotations !== null) lines.push(`    annotations:  ${showJson(tool.definition.annotations)}`);
    return lines;
  }
  if (tool.descriptionDiff !== null) lines.push('  description ([-removed-] {+added+}):', `    ${wordDiffText(tool.descriptionDiff)}`);
  for (const change of tool.changes) {
    if (change.path === '/description' && tool.descriptionDiff !== null) continue;
    lines.push(`  ${clean(change.path)}: ${value(change.before, 'before' in change)} -> ${value(change.after, 'after' in change)}`);
  }
  return lines;
}

/** What `wispctl mcp review` shows: each held tool and what changed, all of it through the sanitizer. */
export function reviewText(review: Review, tools: readonly HeldTool[]): string {
  if (tools.length === 0) return `${clean(review.service.name)} has no held tools`;
  return [
    `${clean(review.service.name)}: ${tools.length} held tool${tools.length === 1 ? '' : 's'} (tool list v${review.toolListVersion}); they are not callable and no model sees them until accepted`,
    '',
    ...tools.flatMap((tool) => [...heldToolText(tool), '']),
  ].join('\n');
}

export function reviewQuestion(review: Review, count: number): string {
  return `Accept ${count === 1 ? 'this tool' : `these ${count} tools`} of ${clean(review.service.name)} as shown? [y/N] `;
}

/** A held prompt or resource template: which kind, and what changed, as a tool's review shows it. */
function heldOfferText(offer: HeldOffer): string[] {
  const what = offer.kind === 'prompt' ? 'prompt' : 'resource template';
  const lines = [`${what} ${showArg(offer.name)}: ${offer.pin === 'added' ? 'ADDED since it was trusted' : 'CHANGED since it was trusted'}`];
  if (offer.pin === 'added') {
    lines.push('  definition (from the server, untrusted):');
    if (offer.definition.title !== null) lines.push(`    title:        ${clean(offer.definition.title)}`);
    lines.push(`    description:  ${cleanBlock(offer.definition.description ?? '', '                  ')}`);
    lines.push(`    ${offer.kind === 'prompt' ? 'arguments' : 'name, type'}:    ${showJson(offer.definition.inputSchema)}`);
    return lines;
  }
  if (offer.descriptionDiff !== null) lines.push('  description ([-removed-] {+added+}):', `    ${wordDiffText(offer.descriptionDiff)}`);
  for (const change of offer.changes) {
    if (change.path === '/description' && offer.descriptionDiff !== null) continue;
    lines.push(`  ${clean(change.path)}: ${value(change.before, 'before' in change)} -> ${value(change.after, 'after' in change)}`);
  }
  return lines;
}

/** The held prompts and templates of a service (none: nothing is said). */
export function offersReviewText(service: string, held: readonly HeldOffer[]): string {
  if (held.length === 0) return '';
  return [
    `${clean(service)}: ${held.length} held prompt${held.length === 1 ? '' : 's'} or resource template${held.length === 1 ? '' : 's'}; MCP clients of wispctl mcp serve are not offered them until accepted`,
    '',
    ...held.flatMap((offer) => [...heldOfferText(offer), '']),
  ].join('\n');
}
