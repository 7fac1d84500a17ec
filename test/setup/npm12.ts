import type { TestProject } from 'vitest/node';
import { npm12Bin } from '../../scripts/npm12-runtime.mjs';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A bin directory holding node 22 and npm 12 from the npm registry, for the install tests. */
    npm12Bin: string;
  }
}

/** Installs node 22 + npm 12 once per machine (cached in .cache/), before any test file runs. */
export default async function setup(project: TestProject): Promise<void> {
  project.provide('npm12Bin', await npm12Bin());
}
