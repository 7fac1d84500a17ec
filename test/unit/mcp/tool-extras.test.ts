import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { MAX_ICON_SRC_CHARS, MAX_TOOL_ICONS, MAX_TOOL_META_CHARS, toolIcons, toolMeta } from '../../../src/mcp/tool-extras.js';

const PNG = 'data:image/png;base64,iVBORw0KGgo=';
function withIcons(icons: unknown): Tool {
  return { name: 't', inputSchema: { type: 'object' }, icons } as Tool;
}

describe('toolIcons', () => {
  it('keeps https: URLs and base64 data: URIs of raster images, and drops every other icon', () => {
    const icons = toolIcons(
      withIcons([
        { src: 'https://example.com/a.png', sizes: ['48x48', 'any', '<script>'], theme: 'dark' },
        { src: PNG, mimeType: 'image/png' },
        { src: PNG, mimeType: 'image/jpeg' },
        { src: 'data:image/svg+xml;base64,PHN2Zz4=' },
        { src: 'data:text/html;base64,PGgxPg==' },
        { src: 'data:image/png,not-base64' },
        { src: 'http://example.com/a.png' },
        { src: 'file:///etc/passwd' },
        { src: 'javascript:alert(1)' },
        { src: 'https://u:p@example.com/a.png' },
        { src: 'https://example.com/a.svg', mimeType: 'image/svg+xml' },
        { src: `https://example.com/${'a'.repeat(MAX_ICON_SRC_CHARS)}` },
        { src: 42 },
        'https://example.com/bare-string.png',
        null,
      ]),
    );
    expect(icons).toEqual([
      { src: 'https://example.com/a.png', mimeType: null, sizes: ['48x48', 'any'], theme: 'dark' },
      { src: PNG, mimeType: 'image/png', sizes: null, theme: null },
    ]);
  });

  it('keeps at most MAX_TOOL_ICONS, and none when icons is not an array', () => {
    expect(toolIcons(withIcons(Array.from({ length: 20 }, (_, i) => ({ src: `https://example.com/${i}.png` }))))).toHaveLength(MAX_TOOL_ICONS);
    expect(toolIcons(withIcons({ src: 'https://example.com/a.png' }))).toEqual([]);
  });
});

describe('toolMeta', () => {
  it('keeps an object up to the cap, and nothing else', () => {
    const tool = (meta: unknown): Tool => ({ name: 't', inputSchema: { type: 'object' }, _meta: meta }) as Tool;
    expect(toolMeta(tool({ a: 1 }))).toEqual({ a: 1 });
    expect(toolMeta(tool({ a: 'x'.repeat(MAX_TOOL_META_CHARS) }))).toBeNull();
    expect(toolMeta(tool([1]))).toBeNull();
    expect(toolMeta(tool('text'))).toBeNull();
    expect(toolMeta({ name: 't', inputSchema: { type: 'object' } })).toBeNull();
  });
});
