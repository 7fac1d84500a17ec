import { execFile } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../helpers/wispd.js';

describe('npm run demo', () => {
  it('runs the whole flow with no API key and prints the transcript', async () => {
    const output = await new Promise<string>((resolve, reject) => {
      execFile(process.execPath, [path.join(repoRoot, 'scripts', 'demo.mjs')], { env: { PATH: process.env.PATH, HOME: process.env.HOME }, timeout: 30_000 }, (error, stdout, stderr) =>
        error === null ? resolve(stdout) : reject(new Error(`${error.message}\n${stdout}\n${stderr}`)),
      );
    });
    expect(output).toContain('6. Approval requested: demo-tools/echo {"text":"Hello from Wisp Host!"}');
    expect(output).toContain('8. The model answers: The echo tool replied: "Hello from Wisp Host!"');
    expect(output).toMatch(/tool\s+Hello from Wisp Host!/);
  });
});
