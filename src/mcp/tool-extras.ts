import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { ToolIcon } from '../core/index.js';

/** At most this many icons of one tool are kept. */
export const MAX_TOOL_ICONS = 8;
/** One icon's src at most (a data: URI's bytes count): a small image, not a payload. */
export const MAX_ICON_SRC_CHARS = 16 * 1024;
/** All icons of one tool together. */
const MAX_ICONS_CHARS = 32 * 1024;
/** A tool's _meta is kept when its JSON is at most this long, and left out whole otherwise. */
export const MAX_TOOL_META_CHARS = 4 * 1024;

/**
 * The image types an icon may have. No SVG: an SVG document can carry scripts and links
 * (the spec warns clients of exactly that), and a client that renders it may run them.
 */
const ICON_TYPES = new Set(['image/png', 'image/jpeg', 'image/jpg', 'image/gif', 'image/webp']);
const DATA_ICON = /^data:(image\/[a-z]+);base64,[A-Za-z0-9+/]+={0,2}$/;

/** An icon's src when it is one Wisp passes on: an https: URL without credentials, or a base64 data: URI of an allowed image type. */
function iconSource(src: unknown, mimeType: string | null): string | null {
  if (typeof src !== 'string' || src.length > MAX_ICON_SRC_CHARS) return null;
  const data = DATA_ICON.exec(src);
  if (data !== null) return ICON_TYPES.has(data[1] as string) && (mimeType === null || mimeType === data[1]) ? src : null;
  if (!URL.canParse(src)) return null;
  const url = new URL(src);
  return url.protocol === 'https:' && url.username === '' && url.password === '' ? url.href : null;
}

/**
 * The server's icons that pass: https: or data: image URIs (see iconSource), a mime type (if
 * any) of an allowed image type, sizes as short strings, theme light or dark; at most
 * MAX_TOOL_ICONS and MAX_ICONS_CHARS together. Every other icon is dropped, silently: an icon
 * is decoration, never a reason to refuse a tool.
 */
export function toolIcons(tool: Tool): ToolIcon[] {
  const raw = (tool as { icons?: unknown }).icons;
  if (!Array.isArray(raw)) return [];
  const icons: ToolIcon[] = [];
  let chars = 0;
  for (const item of raw.slice(0, 64) as unknown[]) {
    if (icons.length >= MAX_TOOL_ICONS) break;
    if (typeof item !== 'object' || item === null) continue;
    const icon = item as Record<string, unknown>;
    const mimeType = typeof icon.mimeType === 'string' ? icon.mimeType.toLowerCase() : null;
    if (icon.mimeType !== undefined && (mimeType === null || !ICON_TYPES.has(mimeType))) continue;
    const src = iconSource(icon.src, mimeType);
    if (src === null || chars + src.length > MAX_ICONS_CHARS) continue;
    const sizes = Array.isArray(icon.sizes) ? icon.sizes.filter((s): s is string => typeof s === 'string' && /^(any|\d{1,5}x\d{1,5})$/.test(s)).slice(0, 8) : null;
    const theme = icon.theme === 'light' || icon.theme === 'dark' ? icon.theme : null;
    chars += src.length;
    icons.push({ src, mimeType, sizes, theme });
  }
  return icons;
}

/** The tool's _meta: an object whose JSON is at most MAX_TOOL_META_CHARS, or null. */
export function toolMeta(tool: Tool): Record<string, unknown> | null {
  const meta = (tool as { _meta?: unknown })._meta;
  if (typeof meta !== 'object' || meta === null || Array.isArray(meta)) return null;
  return JSON.stringify(meta).length <= MAX_TOOL_META_CHARS ? (meta as Record<string, unknown>) : null;
}
