/** The web panel (`wispctl ui`): a loopback HTTP server that is one client of the daemon's socket. */
export { startPanel, type Panel, type PanelOptions } from './server.js';
export { browserOpener, openBrowser } from './open-browser.js';
export { ALLOWED_METHODS, MAX_BODY_BYTES } from './api.js';
