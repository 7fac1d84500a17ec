// @ts-check
/**
 * The declared dependency graph of src/: which area may import which. eslint.config.js
 * enforces it on static imports, test/unit/layering.test.ts on every import, export-from and
 * import() (read with TypeScript's own scanner). An edge that is not declared here fails both.
 *
 * An area is entered only through its doors: `<area>/index.js`, and for core also
 * `core/wire/index.js` (the schemas, which build TypeBox objects at load time). wispctl (cli)
 * may enter core only through `core/index.js` (no schema is built when it starts) and
 * control only through `control/client.js` and `control/paths.js`.
 */

/** @type {Record<string, readonly string[]>} area -> the areas it may import */
export const LAYERS = {
  core: [],
  util: ['core'],
  secrets: ['core', 'util'],
  approvals: ['core', 'util'],
  model: ['core', 'util'],
  install: ['core', 'util'],
  mcp: ['core', 'util', 'approvals'],
  sessions: ['core', 'util', 'approvals', 'mcp', 'model'],
  control: ['core', 'util'],
  daemon: ['core', 'util', 'secrets', 'approvals', 'model', 'install', 'mcp', 'sessions', 'control'],
  ui: ['core', 'control'],
  gateway: ['core', 'control', 'ui'],
  cli: ['core', 'control', 'ui', 'gateway', 'util'],
};

/** @type {Record<string, readonly string[]>} area -> the files of it that other areas may import */
export const DOORS = {
  core: ['index.js', 'wire/index.js'],
  // Two leaf modules the socket client needs, without the rest of util (files, processes,
  // settings): wispctl loads the client, and every file it loads costs its start.
  util: ['index.js', 'line-splitter.js', 'version.js'],
};

/**
 * The checks generated at build time from our schemas (scripts/validators.mjs) are not in
 * src/: they are build output (dist/generated/), imported as `#generated/<name>.js`
 * (package.json "imports"). Each is imported by the one area whose records it checks; core
 * imports none (it stays pure). test/unit/layering.test.ts checks every such import.
 * @type {Record<string, readonly string[]>} area -> the generated modules it may import
 */
export const GENERATED = {
  daemon: ['params-checks', 'profiles-check'],
  mcp: ['registry-check', 'pins-check', 'call-result-check'],
  model: ['model-settings-check'],
  install: ['install-settings-check', 'install-attempt-check'],
  sessions: ['transcript-checks'],
};

/** @type {Record<string, Record<string, readonly string[]>>} importer -> area -> the doors it may use (narrower than DOORS) */
export const NARROW_DOORS = {
  // util: only the atomic file write (node built-ins only), for the MCP clients' config files (mcp connect-client).
  cli: { core: ['index.js'], control: ['client.js', 'paths.js'], util: ['atomic-file.js'] },
  // The web panel is a client of the socket like wispctl, which starts it (`wispctl ui`); it
  // keeps its pages' replay history in the daemon's event ring (no imports of its own).
  ui: { core: ['index.js'], control: ['client.js', 'paths.js', 'event-ring.js'] },
  // The MCP gateway (`wispctl mcp serve`) is a socket client too; it shares the web panel's
  // door checks (ui/guard.js: node:crypto only), and it may load the MCP SDK's server side.
  gateway: { core: ['index.js'], control: ['client.js', 'paths.js'], ui: ['guard.js'] },
};

/**
 * The web panel's browser app (src/ui/static/*.js): plain ES modules that run in the browser,
 * bundled by scripts/bundle-ui.js. Besides its own files (one directory, no deeper) it may
 * import core, only through the door ui already has (core/index.js), so that it escapes the
 * text it shows with wispctl's own code (core/visible-text.ts) rather than a copy: core is
 * pure (no node: module, no I/O; checked in test/unit/layering.test.ts), so it runs in a
 * browser as it is. Not core/wire (TypeBox schemas, built at load time), not control (the
 * socket), not the rest of ui (node:http). Of packages only htm, the template parser behind
 * html.js; Preact (htm's standalone build) is the vendor/preact-htm.js file beside the app.
 * test/unit/layering.test.ts checks every import of these files; the bundle script refuses
 * anything else.
 */
export const BROWSER_APP = { dir: 'ui/static', imports: ['core/index.js'], packages: ['htm'], vendor: './vendor/preact-htm.js' };

/** The areas that are socket clients started by wispctl: they must stay light (CLI_FORBIDDEN_PACKAGES). */
export const CLIENT_AREAS = ['cli', 'ui'];

/** Packages wispctl (cli, and the web panel it starts: ui) must never load: they belong to the daemon. */
export const CLI_FORBIDDEN_PACKAGES = ['ajv', 'pino', 'pino-pretty', '@modelcontextprotocol/sdk', '@modelcontextprotocol/client', '@modelcontextprotocol/server', '@sinclair/typebox', 're2js', 'undici'];

/**
 * The relative specifiers `area` may use to reach other areas (from a file directly in
 * src/<area>/; deeper files use more `../`, which the test resolves).
 * @param {string} area
 * @returns {string[]} paths relative to src/, like 'core/index.js'
 */
export function allowedTargets(area) {
  return (LAYERS[area] ?? []).flatMap((to) => (NARROW_DOORS[area]?.[to] ?? DOORS[to] ?? ['index.js']).map((door) => `${to}/${door}`));
}
