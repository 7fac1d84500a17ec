import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DAEMON_MALLOC_SETTINGS } from './daemon-env.js';

/** Writes and removes the launchd agent (macOS) or systemd user unit (Linux) for wispd. */

export interface UnitPlan {
  readonly manager: 'launchd' | 'systemd';
  readonly file: string;
  readonly content: string;
  /** Directories the unit names that must exist before the manager starts it (launchd opens its log file in one, and fails the job when it is missing), made 0700. */
  readonly directories: readonly string[];
  readonly install: readonly (readonly string[])[];
  readonly uninstall: readonly (readonly string[])[];
}

export interface PlanInputs {
  readonly platform: NodeJS.Platform;
  readonly env: NodeJS.ProcessEnv;
  readonly homedir: string;
  readonly uid: number;
  readonly nodePath: string;
  /** Extra wispd arguments (e.g. --data-dir when WISP_HOME or --data-dir was given). */
  readonly daemonArgs: readonly string[];
}

const LABEL = 'dev.wisp.wispd';
const packageRoot = fileURLToPath(new URL('../../', import.meta.url));

export function wispdPath(): string {
  return path.join(packageRoot, 'bin', 'wispd.js');
}

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** systemd unit values: quote a path that holds spaces, escape % specifiers. */
function systemdWord(text: string): string {
  const escaped = text.replace(/%/g, '%%');
  return /[\s"\\]/.test(escaped) ? `"${escaped.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"` : escaped;
}

export async function planUnit(inputs: PlanInputs): Promise<UnitPlan> {
  const wispd = wispdPath();
  if (inputs.platform === 'darwin') {
    const template = await fs.readFile(path.join(packageRoot, 'launchd', `${LABEL}.plist`), 'utf8');
    const file = path.join(inputs.homedir, 'Library', 'LaunchAgents', `${LABEL}.plist`);
    const log = path.join(inputs.homedir, 'Library', 'Logs', 'Wisp', 'wispd.log');
    const content = template
      .replaceAll('{{NODE}}', escapeXml(inputs.nodePath))
      .replaceAll('{{WISPD}}', escapeXml(wispd))
      .replaceAll('\n    {{ARGS}}', inputs.daemonArgs.map((arg) => `\n    <string>${escapeXml(arg)}</string>`).join(''))
      .replaceAll('{{LOG}}', escapeXml(log));
    const domain = `gui/${inputs.uid}`;
    return {
      manager: 'launchd',
      file,
      content,
      directories: [path.dirname(log)],
      install: [['launchctl', 'bootstrap', domain, file]],
      uninstall: [['launchctl', 'bootout', `${domain}/${LABEL}`]],
    };
  }
  const template = await fs.readFile(path.join(packageRoot, 'systemd', 'wispd.service'), 'utf8');
  const configHome =
    inputs.env.XDG_CONFIG_HOME !== undefined && path.isAbsolute(inputs.env.XDG_CONFIG_HOME)
      ? inputs.env.XDG_CONFIG_HOME
      : path.join(inputs.homedir, '.config');
  const file = path.join(configHome, 'systemd', 'user', 'wispd.service');
  const content = template
    .replaceAll('{{NODE}}', systemdWord(inputs.nodePath))
    .replaceAll('{{WISPD}}', systemdWord(wispd))
    .replaceAll(' {{ARGS}}', inputs.daemonArgs.map((arg) => ` ${systemdWord(arg)}`).join(''))
    .replaceAll('{{README}}', path.join(packageRoot, 'README.md'))
    .replaceAll('{{MALLOC_ENVIRONMENT}}', DAEMON_MALLOC_SETTINGS.map(({ variable, value }) => `Environment=${variable}=${value}`).join('\n'));
  return {
    manager: 'systemd',
    file,
    content,
    // journald keeps the log: nothing to make.
    directories: [],
    install: [
      ['systemctl', '--user', 'daemon-reload'],
      ['systemctl', '--user', 'enable', '--now', 'wispd.service'],
    ],
    uninstall: [
      ['systemctl', '--user', 'disable', '--now', 'wispd.service'],
      ['systemctl', '--user', 'daemon-reload'],
    ],
  };
}

/** Makes the directories the unit needs (0700, as the daemon's own) and writes the unit file; returns what it made. */
export async function writeUnit(plan: UnitPlan): Promise<string[]> {
  const made: string[] = [];
  for (const dir of plan.directories) {
    if (await fs.stat(dir).then(() => false, () => true)) {
      await fs.mkdir(dir, { recursive: true, mode: 0o700 });
      made.push(dir);
    }
  }
  await fs.mkdir(path.dirname(plan.file), { recursive: true });
  await fs.writeFile(plan.file, plan.content, { mode: 0o644 });
  return made;
}

export function defaultPlanInputs(daemonArgs: readonly string[]): PlanInputs {
  return {
    daemonArgs,
    platform: process.platform,
    env: process.env,
    homedir: os.homedir(),
    uid: process.getuid?.() ?? 0,
    nodePath: process.execPath,
  };
}

export interface CommandOutcome {
  readonly argv: readonly string[];
  readonly ok: boolean;
  readonly output: string;
}

/** Runs a service-manager command (no shell). */
export function runCommand(argv: readonly string[]): Promise<CommandOutcome> {
  const [file, ...args] = argv;
  return new Promise((resolve) => {
    execFile(file ?? '', args, { timeout: 30_000 }, (error, stdout, stderr) => {
      resolve({ argv, ok: error === null, output: `${stdout}${stderr}`.trim() || (error?.message ?? '') });
    });
  });
}
