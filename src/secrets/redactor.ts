/**
 * Replaces known secret values in text with `[REDACTED:NAME]`. Fed by the secret store as
 * values become known; applied to every log line, to tool results and to stderr tails.
 */
export class Redactor {
  private readonly values = new Map<string, string>();

  add(name: string, value: string): void {
    if (value === '') return;
    this.values.set(value, name);
  }

  remove(value: string): void {
    this.values.delete(value);
  }

  get size(): number {
    return this.values.size;
  }

  redact(text: string): string {
    if (this.values.size === 0) return text;
    let out = text;
    // Longest first, so a value that contains another is replaced whole.
    const ordered = [...this.values.entries()].sort((a, b) => b[0].length - a[0].length);
    for (const [value, name] of ordered) {
      const marker = `[REDACTED:${name}]`;
      out = out.split(value).join(marker);
      // In JSON text (log lines, messages) the value may appear escaped.
      const escaped = JSON.stringify(value).slice(1, -1);
      if (escaped !== value) out = out.split(escaped).join(marker);
    }
    return out;
  }
}
