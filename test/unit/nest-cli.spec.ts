import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * nest-cli.json describes the monorepo as the Nest CLI builds it: every app and every library
 * (except the separately packaged client library) a project whose output lands where the
 * launcher, the Dockerfile, the fault tests and package.json `imports` look for it
 * (dist/apps/<app>/src/main.js, dist/libs/<lib>/src/index.js), and the npm scripts go through it.
 */
const root = process.cwd();
const readJson = <T>(path: string) => JSON.parse(readFileSync(join(root, path), 'utf8')) as T;

interface Project {
  type: 'application' | 'library';
  root: string;
  sourceRoot: string;
  entryFile: string;
}
interface NestCliConfig {
  monorepo: boolean;
  root: string;
  sourceRoot: string;
  compilerOptions: { builder: string | { type: string }; typeCheck?: boolean };
  projects: Record<string, Project>;
}
interface PackageJson {
  scripts: Record<string, string>;
  imports: Record<string, { default: string }>;
}
const dirs = (path: string) => readdirSync(join(root, path), { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name).sort();

const config = readJson<NestCliConfig>('nest-cli.json');
const packageJson = readJson<PackageJson>('package.json');
const { scripts } = packageJson;
// The dashboard is a browser app built by Vite (npm run build:dashboard), not a Nest project.
const apps = dirs('apps').filter((name) => name !== 'dashboard');
// Its own npm package, built apart for Node 16 / TypeScript 4.0 (libs/weave-node/scripts/build.mjs).
const libs = dirs('libs').filter((name) => name !== 'weave-node');

describe('nest-cli.json', () => {
  it('is a monorepo whose projects are exactly the apps and the libraries', () => {
    expect(config.monorepo).toBe(true);
    expect(Object.keys(config.projects).sort()).toEqual([...apps, ...libs].sort());
    expect(config.projects['weave-node']).toBeUndefined();
  });

  it.each(apps)('app %s: an application built from apps/%s/src with main.ts as entry', (app) => {
    expect(config.projects[app]).toEqual({ type: 'application', root: `apps/${app}`, sourceRoot: `apps/${app}/src`, entryFile: 'main' });
    expect(existsSync(join(root, `apps/${app}/src/main.ts`))).toBe(true);
  });

  it.each(libs)('lib %s: a library built from libs/%s/src with index.ts as entry', (lib) => {
    expect(config.projects[lib]).toEqual({ type: 'library', root: `libs/${lib}`, sourceRoot: `libs/${lib}/src`, entryFile: 'index' });
    expect(existsSync(join(root, `libs/${lib}/src/index.ts`))).toBe(true);
  });

  it('builds with swc; type checking is tsc (npm run typecheck), not the build', () => {
    const builder = config.compilerOptions.builder;
    expect(typeof builder === 'string' ? builder : builder.type).toBe('swc');
    expect(config.compilerOptions.typeCheck).toBe(false);
    expect(config.projects[config.root.replace(/^apps\//, '')]).toMatchObject({ type: 'application', root: config.root, sourceRoot: config.sourceRoot });
  });

  it('keeps the output layout that package.json `imports` and the launchers rely on', () => {
    // A source root with a "/" keeps its path under dist/ (@nestjs/cli swc defaults), so
    // apps/x/src/main.ts → dist/apps/x/src/main.js and libs/x/src/index.ts → dist/libs/x/src/index.js.
    for (const project of Object.values(config.projects)) expect(project.sourceRoot).toContain('/');
    expect(packageJson.imports['#libs/*'].default).toBe('./dist/libs/*/src/index.js');
  });
});

describe('npm scripts through the Nest CLI', () => {
  it('builds every project with `nest build --all`', () => {
    expect(scripts.build).toMatch(/^nest build --all\b/);
    expect(scripts['build:watch']).toMatch(/^nest build --all --watch\b/);
  });

  // --no-shell: `nest start` then spawns node itself, so the SIGTERM it forwards reaches the
  // service (through a shell, the shell died and the service ran on).
  it.each(apps.filter((app) => app !== 'ops' && app !== 'demo-seed'))('start:%s builds the libraries, then `nest start` runs the app', (app) => {
    expect(scripts[`start:${app}`]).toBe(`npm run -s build && nest start ${app} --no-shell`);
  });

  it('start:dev runs the default app (or the one named after --) in watch mode', () => {
    expect(scripts['start:dev']).toMatch(/^npm run -s build && nest start --watch --no-shell$/);
  });

  it('ops runs the built CLI and never builds (concurrent calls would rewrite dist/ under each other)', () => {
    expect(scripts.ops).toBe('node scripts/ops.mjs');
  });

  it('demo (a one-shot command, not a service) builds, then runs the built app', () => {
    expect(scripts.demo).toBe('npm run -s build && node dist/apps/demo-seed/src/main.js');
    expect(scripts['start:demo-seed']).toBeUndefined();
  });
});
