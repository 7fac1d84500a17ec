/** The shapes of a stdio service's sandbox on the wire: the profile a client gives, the one a service shows, a launch's plan. */
import { Type, type Static } from '@sinclair/typebox';
import { LIMITS } from '../limits.js';
import { GRANT_PATH_PATTERN, NET_GRANT_PATTERN } from '../patterns.js';

const GrantPath = Type.String({ pattern: GRANT_PATH_PATTERN, maxLength: LIMITS.maxCommandChars });
const Grants = (description: string) => Type.Array(GrantPath, { maxItems: LIMITS.maxSandboxGrants, description });

export const NetPolicy = Type.Union(
  [
    Type.Object({ mode: Type.Literal('none') }, { additionalProperties: false }),
    Type.Object({ mode: Type.Literal('all') }, { additionalProperties: false }),
    Type.Object(
      {
        mode: Type.Literal('ask'),
        hosts: Type.Optional(Type.Array(Type.String({ pattern: NET_GRANT_PATTERN, maxLength: 260 }), { maxItems: LIMITS.maxSandboxGrants, description: 'Hosts granted already: only others are asked for.' })),
      },
      { additionalProperties: false },
    ),
    Type.Object(
      {
        mode: Type.Literal('hosts'),
        hosts: Type.Array(Type.String({ pattern: NET_GRANT_PATTERN, maxLength: 260 }), { minItems: 1, maxItems: LIMITS.maxSandboxGrants, description: 'host[:port] grants, lower case.' }),
      },
      { additionalProperties: false },
    ),
  ],
  {
    description:
      'none: its own loopback only. all: the host\'s network, unchecked. hosts: only these hosts, through the daemon\'s egress proxy; ask: these hosts, and for any other host and port a network.connect approval (the connection waits for the answer).',
  },
);
export type NetPolicy = Static<typeof NetPolicy>;

/** services.register / services.update: the whole profile. */
export const SandboxProfileParam = Type.Object(
  {
    enabled: Type.Boolean({ description: 'false: no sandbox (--no-sandbox): the server can read and write every file you can and reach any host.' }),
    read: Grants('Paths it may read (absolute; each must exist), besides what it needs to run.'),
    write: Grants('Paths it may read and write (absolute; each must exist), besides its cwd.'),
    net: NetPolicy,
  },
  {
    additionalProperties: false,
    description:
      'A stdio service\'s sandbox. Absent at registration: sandboxed, no network, the cwd read-write, and read-only what the command needs to run (its runtime, the system\'s libraries, the script or package its command and args name); a private empty $HOME and /tmp.',
  },
);

export const SandboxState = Type.Union(
  [
    Type.Object({
      status: Type.Literal('on'),
      read: Type.Array(Type.String()),
      write: Type.Array(Type.String()),
      net: NetPolicy,
      allowed: Type.Optional(
        Type.Array(Type.String(), {
          description: 'Live network grants (services.allowNet, an ask answered "always"): hosts its egress proxy lets through besides net.hosts, given and revoked while it runs. Absent when there are none.',
        }),
      ),
    }),
    Type.Object({ status: Type.Literal('off') }),
    Type.Object({ status: Type.Literal('legacy') }),
    Type.Object({ status: Type.Literal('remote') }),
  ],
  {
    description:
      'on: sandboxed, with these grants besides what it needs to run (services.sandboxPlan lists every path). off: turned off (--no-sandbox): it runs with every file and the network you have. legacy: registered before sandboxes existed, and runs unsandboxed until turned on (wispctl mcp sandbox NAME --on). remote: a remote server, which runs elsewhere.',
  },
);
export type SandboxState = Static<typeof SandboxState>;

export const SandboxMount = Type.Object({
  path: Type.String(),
  access: Type.Union([Type.Literal('read'), Type.Literal('write'), Type.Literal('tmpfs')], { description: 'read: read-only; write: read-write; tmpfs: a private, empty directory at that path.' }),
  why: Type.Union(
    ['system', 'runtime', 'interpreter', 'script', 'venv', 'cwd', 'granted', 'home', 'tmp'].map((why) => Type.Literal(why)),
    { description: 'system: the system\'s libraries and the few /etc files they read; runtime, interpreter, script, venv: what the command and args need to run; cwd: its working directory; granted: a grant of the profile; home, tmp: its private $HOME and /tmp.' },
  ),
});
export type SandboxMount = Static<typeof SandboxMount>;

export const SandboxPlanView = Type.Object({
  available: Type.Boolean({ description: 'Whether a sandbox can be had on this machine now; false: activation fails SANDBOX_UNAVAILABLE.' }),
  reason: Type.Union([Type.String(), Type.Null()], { description: 'Why not (null when available).' }),
  command: Type.String({ description: 'The command as it will run (found on the daemon\'s PATH).' }),
  mounts: Type.Array(SandboxMount, { description: 'Every path the server will see, in mount order. Everything else is absent: your home, Wisp\'s data and runtime directories, the control socket, other users\' files.' }),
  home: Type.String({ description: 'Its private, empty $HOME (at this path).' }),
  chdir: Type.String({ description: 'Where it starts: its cwd, or its private home.' }),
  network: Type.Union([Type.Literal('none'), Type.Literal('host'), Type.Literal('proxy')], {
    description: 'What it gets: none (its own loopback), the host\'s network (unchecked), or proxy (host grants, ask: only the daemon\'s egress proxy, which checks each connection; Linux only).',
  }),
  offered: Type.Array(Type.Object({ field: Type.String({ description: 'args[N]' }), path: Type.String() }), {
    description: 'Paths its args name that no grant covers: a trust prompt offers them as grants (never granted by themselves).',
  }),
  warnings: Type.Array(Type.String(), { description: 'What the sandbox will likely stop from working (npx downloading at launch).' }),
  taskLimit: Type.Union([Type.Integer(), Type.Null()], { description: 'The most processes and threads it may have at once; null: none set (no prlimit, or macOS).' }),
});
export type SandboxPlanView = Static<typeof SandboxPlanView>;
