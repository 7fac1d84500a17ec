import { WispError, type SourcesReport } from '../../core/index.js';
import { text, type Params } from './params.js';
import { addStdio } from './services.js';
import { now, type DemoWorld } from './world.js';

const CONFIG_DIR = '/home/you/.config/wisp (demo: not read)';
const GLOBAL = { source: 'global' as const, file: `${CONFIG_DIR}/settings.json`, plugin: null };

/** A sample of the config sources: one global entry; projects are listed, their files never read. */
export class DemoSources {
  private readonly projects: string[] = [];
  private report: SourcesReport | null = null;

  constructor(private readonly world: DemoWorld) {}

  seed(): void {
    const service = addStdio(this.world, {
      name: 'docs-search',
      command: '/usr/local/bin/docs-search',
      args: ['--index', '${DOCS_INDEX}'],
      cwd: null,
      origin: { kind: 'source', ...GLOBAL, digest: 'demo' },
    });
    this.report = {
      at: now(),
      entries: [{ name: 'docs-search', origin: GLOBAL, transport: 'stdio', overrides: null, warnings: ['${DOCS_INDEX} is not set in the daemon\'s environment (demo)'], action: 'added', reason: null, serviceId: service.id }],
      skipped: [],
      problems: [],
      removed: [],
    };
  }

  view(): { configDir: string; projects: string[]; allowEnv: { directory: string; variables: string[] }[]; report: SourcesReport | null } {
    return { configDir: CONFIG_DIR, projects: [...this.projects], allowEnv: [], report: this.report };
  }

  addProject(p: Params): ReturnType<DemoSources['view']> {
    const directory = text(p, 'directory');
    if (!directory.startsWith('/')) throw new WispError('INVALID_PARAMS', 'the project directory must be an absolute path');
    if (this.projects.length >= 32) throw new WispError('LIMIT_EXCEEDED', 'the demo keeps at most 32 projects');
    if (!this.projects.includes(directory)) this.projects.push(directory);
    if (this.report !== null) {
      const problems = [...this.report.problems.filter((x) => x.file !== `${directory}/.mcp.json`), { file: `${directory}/.mcp.json`, message: 'demo: project files are never read' }];
      this.report = { ...this.report, at: now(), problems };
    }
    return this.view();
  }

  removeProject(p: Params): ReturnType<DemoSources['view']> {
    const directory = text(p, 'directory');
    const i = this.projects.indexOf(directory);
    if (i === -1) throw new WispError('INVALID_PARAMS', `${directory} is not a project`);
    this.projects.splice(i, 1);
    if (this.report !== null) this.report = { ...this.report, problems: this.report.problems.filter((x) => x.file !== `${directory}/.mcp.json`) };
    return this.view();
  }
}
