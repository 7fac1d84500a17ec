import { promises as fs } from 'node:fs';
import path from 'node:path';
import { LIMITS, WispError, type PinnedDefinition, type PinStatus } from '../core/index.js';
import { canonicalJson, checkDirectory, isoTime, jsonProblem, moveAside, readSafe, schemaProblem, sha256Hex, writeFileAtomic, type StorageProblem } from '../util/index.js';
import { checks } from '#generated/pins-check.js';
import type { PinDocument } from './tool-pins-schema.js';
import type { CatalogTool } from './tool-catalog.js';

/** The directory of the pin files, in the data dir. */
export const PINS_DIR = 'tool-pins';

/** A pin file is at most this big: every tool at its largest, and room for the frame around them. */
const MAX_PIN_FILE_BYTES = LIMITS.maxToolsPerService * (LIMITS.maxToolDefinitionBytes + 256) + 4096;

interface Pin {
  readonly digest: string;
  readonly definition: PinnedDefinition;
}

interface ServicePins {
  readonly launchDigest: string;
  /** A pin set exists (possibly empty): later discoveries are compared with it. Not yet: the next discovery pins. */
  established: boolean;
  readonly tools: Map<string, Pin>;
}

/** What a pin is taken of: a tool of the catalog, or a prompt or resource template shaped as one (offer-pins.ts). */
export interface Pinnable {
  readonly name: string;
  readonly pinDigest: string;
  readonly definition: PinnedDefinition;
}

/** What a discovery is, against the pins: each tool with its status, and the names held. */
export interface Classified<T extends Pinnable = CatalogTool> {
  readonly tools: (T & { readonly pin: PinStatus })[];
  readonly added: string[];
  readonly changed: string[];
  /** When the pins were written anew: resolves once they are, with STORAGE_FAILED if they could not be. */
  readonly saved: Promise<WispError | undefined> | undefined;
}

export interface ToolPinsOptions {
  /** The data dir; undefined: pins are kept in memory only (unit tests). */
  readonly dataDir: string | undefined;
  readonly now: () => Date;
  /** A pin file that was bad when read (moved aside; its service's tools are then all held). */
  readonly onProblem: (problem: StorageProblem) => void;
  /** A pin file that could not be written after a discovery (its pins hold in memory for this run). */
  /** A write of the pins in `file` failed (the service whose pins they are fails with STORAGE_FAILED). */
  readonly onWriteError: (file: string, error: unknown) => void;
  /**
   * Known secret values out of a definition before it is written: a hostile server can put a
   * secret it was handed into a tool's text, and no file may hold one. The digest stays the
   * one of the definition as sent, so a pin still matches it.
   */
  readonly redact?: (<T>(value: T) => T) | undefined;
}

/** sha256 of the canonical JSON of a pinned definition. */
export function pinDigestOf(definition: PinnedDefinition): string {
  return sha256Hex(canonicalJson(definition));
}

/** A redacted definition holds this: its digest can no longer be checked against it. */
const REDACTION_MARK = '[REDACTED:';

/** What a service's trust is bound to: its command, args, cwd and url as stored (templates, never filled-in values). */
export function launchDigest(config: { transport?: string | undefined; command: string; args: readonly string[]; cwd: string | null; url?: string | null | undefined }): string {
  return sha256Hex(canonicalJson({ transport: config.transport ?? 'stdio', command: config.command, args: config.args, cwd: config.cwd, url: config.url ?? null }));
}

/**
 * Tool pins, like ssh's known hosts: at a service's first discovery after it was trusted,
 * every tool's canonical definition is pinned (digest and definition, one file per service,
 * written atomically, checked when read). Every later discovery is compared with the pins:
 * trusted, changed or added; a removed tool's pin goes with it. Pins are bound to the launch
 * (command, args, cwd, url): another launch is a new trust and starts without pins.
 */
export class ToolPins {
  private readonly services = new Map<string, ServicePins>();
  private writes: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: ToolPinsOptions) {}

  /** Before an activation: the service's pins, read from disk once (dropped when bound to another launch). */
  async prepare(serviceId: string, launch: string): Promise<void> {
    const known = this.services.get(serviceId);
    if (known?.launchDigest === launch) return;
    this.services.set(serviceId, await this.read(serviceId, launch));
  }

  /** Compares a discovered list with the pins (pinning every tool when there are none yet); persists what changed. */
  classify<T extends Pinnable>(serviceId: string, tools: readonly T[]): Classified<T> {
    const pins = this.services.get(serviceId) ?? this.fresh(serviceId, '');
    const added: string[] = [];
    const changed: string[] = [];
    const first = !pins.established;
    const classified = tools.map((tool): T & { readonly pin: PinStatus } => {
      const pin = pins.tools.get(tool.name);
      if (first) pins.tools.set(tool.name, { digest: tool.pinDigest, definition: tool.definition });
      const status = first || pin?.digest === tool.pinDigest ? 'trusted' : pin === undefined ? 'added' : 'changed';
      if (status === 'added') added.push(tool.name);
      if (status === 'changed') changed.push(tool.name);
      return { ...tool, pin: status };
    });
    pins.established = true;
    // A tool that went away takes its pin along: if it comes back, it is new.
    const present = new Set(tools.map((tool) => tool.name));
    let dropped = false;
    for (const name of pins.tools.keys()) {
      if (!present.has(name)) {
        pins.tools.delete(name);
        dropped = true;
      }
    }
    const saved = first || dropped ? this.save(serviceId, pins).then(
            () => undefined,
            (error: unknown) => this.writeFailed(serviceId, error),
          )
        : undefined;
    return { tools: classified, added, changed, saved };
  }

  /** A human accepted these tools as they are now: pinned, and written before this resolves. */
  async accept(serviceId: string, tools: readonly Pinnable[]): Promise<void> {
    const pins = this.services.get(serviceId) ?? this.fresh(serviceId, '');
    const next = new Map(pins.tools);
    for (const tool of tools) next.set(tool.name, { digest: tool.pinDigest, definition: tool.definition });
    const updated: ServicePins = { launchDigest: pins.launchDigest, established: true, tools: next };
    try {
      await this.save(serviceId, updated);
    } catch (error) {
      throw this.writeFailed(serviceId, error);
    }
    this.services.set(serviceId, updated);
  }

  /** The pin of a tool (its trusted definition), if it has one. */
  pinned(serviceId: string, name: string): { digest: string; definition: PinnedDefinition } | undefined {
    return this.services.get(serviceId)?.tools.get(name);
  }

  /** An edit: pins bound to another launch than `launch` are dropped, in memory and on disk. */
  async reset(serviceId: string, launch: string): Promise<void> {
    const known = this.services.get(serviceId);
    if (known !== undefined && known.launchDigest === launch) return;
    if (known === undefined) {
      const stored = await this.read(serviceId, launch);
      if (stored.established) return;
    }
    await this.remove(serviceId);
  }

  /** The service is gone (or trusted anew): its pins too. */
  async remove(serviceId: string): Promise<void> {
    this.services.delete(serviceId);
    const file = this.file(serviceId);
    if (file === undefined) return;
    await this.serialize(() => fs.rm(file, { force: true }));
  }

  /** A failed write of a service's pins: reported, and the error it is (STORAGE_FAILED). */
  private writeFailed(serviceId: string, error: unknown): WispError {
    this.options.onWriteError(this.file(serviceId) ?? '', error);
    return new WispError('STORAGE_FAILED', `could not write the tool pins: ${error instanceof Error ? error.message : String(error)}`);
  }

  /** Resolves once every write queued so far has ended. */
  async flush(): Promise<void> {
    await this.writes.catch(() => undefined);
  }

  private fresh(serviceId: string, launch: string): ServicePins {
    const pins: ServicePins = { launchDigest: launch, established: false, tools: new Map() };
    this.services.set(serviceId, pins);
    return pins;
  }

  private file(serviceId: string): string | undefined {
    const { dataDir } = this.options;
    // Named by a digest: an id is never a path.
    return dataDir === undefined ? undefined : path.join(dataDir, PINS_DIR, `${sha256Hex(serviceId).slice(0, 32)}.json`);
  }

  private async save(serviceId: string, pins: ServicePins): Promise<void> {
    const file = this.file(serviceId);
    if (file === undefined) return;
    const document: PinDocument = {
      schemaVersion: 1,
      serviceId,
      launchDigest: pins.launchDigest,
      pinnedAt: isoTime(this.options.now()),
      tools: [...pins.tools.values()].map((pin) => ({ digest: pin.digest, definition: this.options.redact?.(pin.definition) ?? pin.definition })),
    };
    const text = `${JSON.stringify(document)}\n`;
    await this.serialize(async () => {
      await checkDirectory(path.dirname(file), { create: true, private: true });
      await writeFileAtomic(file, text);
    });
  }

  private serialize<T>(work: () => Promise<T>): Promise<T> {
    const result = this.writes.then(work, work);
    this.writes = result.catch(() => undefined);
    return result;
  }

  /** The pins on disk: none (or bound to another launch: none), or a bad file moved aside (then every tool is held). */
  private async read(serviceId: string, launch: string): Promise<ServicePins> {
    const file = this.file(serviceId);
    const none: ServicePins = { launchDigest: launch, established: false, tools: new Map() };
    if (file === undefined) return none;
    await this.flush();
    let text: string;
    try {
      text = await readSafe(file, MAX_PIN_FILE_BYTES);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return none;
      if (!(error instanceof WispError && error.code === 'LIMIT_EXCEEDED')) throw error;
      return this.bad(file, launch, `larger than ${MAX_PIN_FILE_BYTES} bytes`);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      return this.bad(file, launch, jsonProblem(error));
    }
    if (!checks.pinDocument(parsed)) return this.bad(file, launch, schemaProblem(checks.pinDocument.errors));
    const problem = documentProblem(parsed, serviceId);
    if (problem !== undefined) return this.bad(file, launch, problem);
    if (parsed.launchDigest !== launch) {
      // Trusted with another command, args, cwd or url: that trust is over.
      await this.serialize(() => fs.rm(file, { force: true }));
      return none;
    }
    return { launchDigest: launch, established: true, tools: new Map(parsed.tools.map((pin) => [pin.definition.name, pin])) };
  }

  /** Moved aside, reported; the service starts with an empty pin set, so every tool it offers is held for a human. */
  private async bad(file: string, launch: string, problem: string): Promise<ServicePins> {
    const movedTo = await moveAside(file, this.options.now());
    this.options.onProblem({ file, problem: `${problem}; every tool of the service is held until accepted`, movedTo });
    return { launchDigest: launch, established: true, tools: new Map() };
  }
}

/** What the schema cannot say: the file is this service's, each digest matches its definition, no name twice. */
function documentProblem(document: PinDocument, serviceId: string): string | undefined {
  if (document.serviceId !== serviceId) return 'belongs to another service';
  const names = new Set<string>();
  for (const pin of document.tools) {
    if (names.has(pin.definition.name)) return 'pins one tool name twice';
    names.add(pin.definition.name);
    const redacted = JSON.stringify(pin.definition).includes(REDACTION_MARK);
    if (!redacted && pinDigestOf(pin.definition) !== pin.digest) return 'has a pin whose digest does not match its definition';
  }
  return undefined;
}
