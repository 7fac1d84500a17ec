/**
 * The shapes of npm installs: a plan, an attempt (a union: one object per status) and the
 * install settings. install/ takes its types from these.
 *
 * Everything here is sent over the socket: changes must be additive.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { STEPS } from '../attempt-state.js';
import { ErrorCodeSchema, Timestamp } from './shapes.js';

export const Digest = Type.String({ pattern: '^[0-9a-f]{32}$', description: 'A plan digest (32 hex characters).' });

export const InstallPlanView = Type.Object({
  digest: Digest,
  package: Type.String(),
  version: Type.String(),
  bin: Type.String(),
  args: Type.Array(Type.String()),
  registry: Type.String({ description: 'The only registry the install may use.' }),
  directory: Type.String({ description: 'Where it installs: mcp-installs/<digest>/ in the data dir.' }),
  will: Type.Array(Type.String()),
  wont: Type.Array(Type.String()),
  runtime: Type.Object({ node: Type.String(), nodeVersion: Type.String(), npmVersion: Type.String() }),
});
export type InstallPlanView = Static<typeof InstallPlanView>;

/** The steps of an install, in order (core/attempt-state.ts: STEPS). */
export const InstallStep = Type.Union(STEPS.map((step) => Type.Literal(step)));

const AttemptError = Type.Object({
  code: ErrorCodeSchema,
  message: Type.String(),
  problems: Type.Optional(Type.Array(Type.Object({ path: Type.String(), problem: Type.String() }))),
});
export type AttemptError = Static<typeof AttemptError>;

/** One status's attempt: the plan, runtime and what verification found, with that status's data. */
function attemptOf<S extends TSchema, St extends TSchema, E extends TSchema, Er extends TSchema, P extends TSchema, Id extends TSchema, N extends TSchema>(
  status: S,
  state: { step: St; endedAt: E; error: Er; npmPid: P; serviceId: Id; serviceName: N },
  description: string,
) {
  return Type.Object(
    {
      digest: Digest,
      package: Type.String(),
      version: Type.String(),
      bin: Type.String(),
      args: Type.Array(Type.String()),
      registry: Type.String(),
      directory: Type.String(),
      status,
      step: state.step,
      startedAt: Timestamp,
      endedAt: state.endedAt,
      error: state.error,
      installScripts: Type.Array(Type.String(), { description: 'Locked packages that declare install scripts: none of them was run.' }),
      lockedPackages: Type.Integer(),
      npmPid: state.npmPid,
      runtime: Type.Object({ node: Type.String(), nodeVersion: Type.String(), npmVersion: Type.String() }),
      serviceId: state.serviceId,
      serviceName: state.serviceName,
      logTail: Type.String({ description: 'The end of npm\'s output (at most 16 KB).' }),
    },
    { description },
  );
}

const EndedStep = Type.Union([Type.Null(), InstallStep], { description: 'The step it ended in; null when it ended before the first.' });
const ended = { step: EndedStep, endedAt: Timestamp, error: AttemptError, npmPid: Type.Null(), serviceId: Type.Null(), serviceName: Type.Null() };

/**
 * An install attempt: one object per status, each with that status's data (a running attempt
 * has its step and npm's pid; a succeeded one its service; an ended one its error and the
 * step it ended in). Every variant has every field, so a client reads them without asking
 * the status first.
 */
export const InstallAttempt = Type.Union(
  [
    attemptOf(
      Type.Literal('running'),
      {
        step: Type.Union([Type.Null(), InstallStep], { description: 'The step it is in; null before the first.' }),
        endedAt: Type.Null(),
        error: Type.Null(),
        npmPid: Type.Union([Type.Integer(), Type.Null()], { description: 'npm\'s process (group) while a step runs.' }),
        serviceId: Type.Null(),
        serviceName: Type.Null(),
      },
      'Running (or queued): its step, and npm\'s pid while npm runs.',
    ),
    attemptOf(
      Type.Literal('succeeded'),
      { step: Type.Literal('register'), endedAt: Timestamp, error: Type.Null(), npmPid: Type.Null(), serviceId: Type.String(), serviceName: Type.String() },
      'Installed and registered (disabled) as serviceId.',
    ),
    attemptOf(
      Type.Union([Type.Literal('failed'), Type.Literal('cancelled'), Type.Literal('timed_out'), Type.Literal('interrupted')]),
      ended,
      'Ended without success. failed: npm or verification failed (error says why); cancelled: installs.cancel, the client went away, or the daemon stopping; timed_out: stopped at the time limit; interrupted: the daemon stopped (or crashed) while it ran, found running at the next start.',
    ),
  ],
  { description: 'Only succeeded is a success. The others are never replayed: discard the attempt, or install by hand.' },
);
export type InstallAttempt = Static<typeof InstallAttempt>;
export type InstallStatus = InstallAttempt['status'];

export const InstallSettingsView = Type.Object({
  runtimeDirs: Type.Array(Type.String(), { description: 'Where Node and npm are looked for, in order (never the shell\'s PATH).' }),
  registry: Type.Union([Type.String(), Type.Null()], { description: 'null: npm\'s own built-in default registry.' }),
  caFile: Type.Union([Type.String(), Type.Null()], { description: 'A CA bundle passed to npm, for a TLS-intercepting proxy.' }),
  timeoutMs: Type.Integer({ description: 'One install attempt, end to end.' }),
  sandbox: Type.Boolean({
    description:
      'true (the default): every npm run is contained (bubblewrap: the install directory, npm\'s private cache and config, the CA bundle, and the registry\'s host:port only; SANDBOX_UNAVAILABLE where it cannot be had). false: npm runs as you, with your files and the whole network.',
  }),
});
export type InstallSettingsView = Static<typeof InstallSettingsView>;
