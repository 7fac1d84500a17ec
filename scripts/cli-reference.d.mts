/** docs/cli.md: every wispctl command's --help, from the CLI's entry point `main` (src/cli/main.ts or its build). */
export declare function renderCliReference(main: (argv: readonly string[], io: { out: (line: string) => void; err: (line: string) => void }) => Promise<void>): Promise<string>;
