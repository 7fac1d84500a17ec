// The one way the pages make elements: htm over Preact's h, with every piece of text shown
// through wispctl's own escaping (src/core/visible-text.ts, bundled in by
// scripts/bundle-ui.js). Each text child and each attribute a human reads (aria-label,
// title, alt, placeholder) passes cleanLines: line breaks stay, and every control, format
// character (bidi overrides and isolates, zero-width, Unicode tags), separator and lone
// surrogate is shown as its escape (\u202e, \u{e0041}, \x1b), as wispctl shows it. Text
// already escaped passes unchanged. No page imports Preact or htm but through this module.
import htm from 'htm';
import { h, render, useEffect, useState } from './vendor/preact-htm.js';
import { cleanLines } from '../../core/index.js';

/** Attributes whose text a human reads or hears. */
const SHOWN_ATTRIBUTES = ['aria-label', 'title', 'alt', 'placeholder'];

/** Text as a page shows it: each line escaped, the line breaks kept. */
function shown(text) {
  return cleanLines(text).join('\n');
}

function child(c) {
  if (typeof c === 'string') return shown(c);
  if (Array.isArray(c)) return c.map(child);
  return c;
}

function shownH(type, props, ...children) {
  let p = props;
  if (typeof type === 'string' && p !== null && p !== undefined) {
    for (const name of SHOWN_ATTRIBUTES) if (typeof p[name] === 'string') p = { ...p, [name]: shown(p[name]) };
  }
  return h(type, p, ...children.map(child));
}

export const html = htm.bind(shownH);
export { render, useEffect, useState };
