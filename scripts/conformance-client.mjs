// The client entry point the MCP conformance suite runs: `conformance-client.mjs <serverUrl>`
// with MCP_CONFORMANCE_SCENARIO (and MCP_CONFORMANCE_CONTEXT) in the environment. It runs a
// real daemon in this process (temp data dir, secrets in memory) and drives it over its
// socket the way a user does: register the remote server, activate it, log in when it
// needs authorization (this script plays the browser), then call the tools it offers,
// approving each call. So every scenario goes through our connection layer, OAuth
// provider, loopback callback, approvals and call pipeline.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WispClient, resolvePaths } from '../dist/control/index.js';
import { Daemon, createLogger } from '../dist/daemon/index.js';
import { MemorySecretStore, Redactor } from '../dist/secrets/index.js';

const url = process.argv[2];
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}');
const log = (line) => process.stderr.write(`conformance-client: ${line}\n`);

/** Arguments for a tool from its schema: each required property gets a plain value of its type. */
function argumentsFor(schema) {
  const args = {};
  for (const name of schema?.required ?? []) {
    const type = schema.properties?.[name]?.type;
    args[name] = type === 'number' || type === 'integer' ? 1 : type === 'boolean' ? true : type === 'array' ? [] : type === 'object' ? {} : 'x';
  }
  return args;
}

/** What a browser does with an authorization URL: follow the redirects (to our loopback listener). */
async function browse(authorizationUrl) {
  let next = authorizationUrl;
  for (let hop = 0; hop < 5; hop++) {
    const response = await fetch(next, { redirect: 'manual' });
    const location = response.headers.get('location');
    if (location === null) {
      log(`browser stopped at ${next}: HTTP ${response.status}`);
      return;
    }
    next = new URL(location, next).href;
    if (next.startsWith('http://127.0.0.1:') && new URL(next).pathname === '/callback') {
      await fetch(next);
      return;
    }
  }
}

/**
 * What a user would configure for each kind of server (wispctl mcp add-remote options):
 * the grant the server takes, and the secrets the scenario hands out.
 */
function oauthSettings(scenario, context) {
  const text = (value) => (typeof value === 'string' ? value : undefined);
  const settings = { clientId: text(context.client_id), clientSecret: text(context.client_secret) };
  if (scenario === 'auth/basic-cimd') settings.clientMetadataUrl = 'https://conformance-test.local/client-metadata.json';
  if (scenario.startsWith('auth/client-credentials-')) {
    settings.grant = 'client_credentials';
    settings.privateKey = text(context.private_key_pem);
    settings.signingAlg = text(context.signing_algorithm);
    settings.clientAuth = settings.privateKey !== undefined ? 'private_key_jwt' : 'client_secret_basic';
  }
  if (scenario.startsWith('auth/cross-app-access')) {
    Object.assign(settings, { grant: 'cross_app', clientAuth: 'client_secret_basic', idpTokenEndpoint: text(context.idp_token_endpoint), idpClientId: text(context.idp_client_id), identityAssertion: text(context.idp_id_token) });
  }
  return Object.fromEntries(Object.entries(settings).filter(([, value]) => value !== undefined));
}

const dir = mkdtempSync(path.join(os.tmpdir(), 'wisp-conf-'));
const redactor = new Redactor();
const daemon = await Daemon.start({
  paths: resolvePaths({ dataDir: dir, env: {} }),
  logger: createLogger({ level: 'warn', pretty: false, redactor, destination: process.stderr }),
  redactor,
  version: '0.0.0-conformance',
  keychain: new MemorySecretStore(),
});
let exitCode = 1;
try {
  const client = await WispClient.connect(daemon.paths.socket);
  client.onEvent((event) => {
    if (event.type === 'approval.requested') void client.call('approvals.respond', { id: event.approval.id, decision: 'approve' });
    // The user accepts what a server asks for, leaving every field at its default (SEP-1034: the daemon fills them in).
    if (event.type === 'elicitation.requested') void client.call('elicitations.respond', { id: event.elicitation.id, action: 'accept', content: {} });
    if (event.type === 'service.login') void browse(event.authorizationUrl).catch((error) => log(`browser failed: ${error}`));
  });
  await client.call('events.subscribe', {});
  const oauth = scenario.startsWith('auth/') ? oauthSettings(scenario, context) : undefined;
  let { service } = await client.call('services.registerRemote', { name: 'conformance', url, timeoutMs: 20_000, ...(oauth !== undefined ? { oauth } : {}) });
  ({ service } = await client.call('services.activate', { id: service.id, configVersion: service.configVersion }));
  if (service.connection.status === 'needs_auth') {
    log(`needs a login (${service.connection.authorizationServer ?? 'no authorization server advertised'})`);
    ({ service } = await client.call('services.login', { id: service.id, configVersion: service.configVersion }));
  }
  if (service.connection.status !== 'active') throw new Error(`not active: ${JSON.stringify(service.connection)}`);
  const { tools } = await client.call('tools.list', { serviceId: service.id });
  for (const tool of tools) {
    const call = () => client.call('tools.call', { serviceId: service.id, toolName: tool.name, arguments: argumentsFor(tool.inputSchema) });
    let result;
    try {
      result = await call();
    } catch (error) {
      // The server wants more (a scope step-up): the service waits for a login, as a user would give it.
      if (error?.code !== 'NEEDS_AUTH') throw error;
      log(`${tool.name} needs a new login: ${error.message}`);
      const { service: current } = await client.call('services.get', { id: service.id });
      ({ service } = await client.call('services.login', { id: current.id, configVersion: current.configVersion }));
      result = await call();
    }
    log(`${tool.name}: ${result.text.slice(0, 200)}`);
  }
  await client.call('services.disable', { id: service.id });
  await client.close();
  exitCode = 0;
} catch (error) {
  log(`failed: ${error?.code ?? ''} ${error?.message ?? String(error)}`);
} finally {
  await daemon.stop('conformance scenario done');
  rmSync(dir, { recursive: true, force: true });
}
process.exit(exitCode);
