/** The MCP gateway (`wispctl mcp serve`): an MCP server, on the official SDK's server side, that is a client of the daemon's socket. */
export { serveStdio } from './stdio.js';
export { serveHttp, MAX_BODY_BYTES, MAX_SESSIONS, MCP_PATH, type HttpGateway, type HttpOptions } from './http.js';
export { clientName, type GatewayOptions } from './server.js';
