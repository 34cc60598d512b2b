#!/usr/bin/env node
// `npm run migration:run|migration:show|migration:generate -- <schema> …`: the TypeORM CLI
// (node_modules/typeorm/cli.js) on one service schema, through that schema's CLI data-source
// module in the built dist/ (the repo is ESM built by swc; the CLI loads the compiled module).
//
//   npm run migration:run -- identity                        pending migrations of schema identity
//   npm run migration:show -- identity                       which ran, which are pending
//   npm run migration:generate -- identity identity-add-x    new migration from the entity changes
//   npm run migration:generate -- identity --check           exit 1 if entities and schema differ
//
// DATABASE_URL comes from the environment, as for the services. The services run their own
// migrations at start too; `migration:run` takes the same per-schema advisory lock
// (ServiceDataSource in libs/database), so running both at once migrates once.
//
// Plain ESM, no dependencies. It runs dist/ as built and refuses a dist/ older than the sources
// (`npm run build` first): generating from stale entities would write a wrong migration.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Each schema: its CLI data-source module (source path without extension) and its migrations. */
const SCHEMAS = {
  identity: { module: 'libs/identity/src/identity.cli-data-source', dataSource: 'libs/identity/src/identity.data-source.ts', migrations: 'libs/identity/src/migrations' },
  recommendations: { module: 'libs/catalog/src/recommendations.cli-data-source', dataSource: 'libs/catalog/src/catalog.data-source.ts', migrations: 'libs/catalog/src/migrations' },
  timezone_settings: {
    module: 'apps/timezone-settings/src/database/timezone-settings.cli-data-source',
    dataSource: 'apps/timezone-settings/src/database/timezone-settings.data-source.ts',
    migrations: 'apps/timezone-settings/src/database/migrations',
  },
  reporting: {
    module: 'apps/reporting-projection/src/database/reporting.cli-data-source',
    dataSource: 'apps/reporting-projection/src/database/reporting.data-source.ts',
    migrations: 'apps/reporting-projection/src/database/migrations',
  },
  payouts: {
    module: 'apps/payouts-read/src/database/payouts.cli-data-source',
    dataSource: 'apps/payouts-read/src/database/payouts.data-source.ts',
    migrations: 'apps/payouts-read/src/database/migrations',
  },
};
const COMMANDS = ['run', 'show', 'generate'];
const USAGE = `usage: node scripts/migration.mjs <${COMMANDS.join('|')}> <${Object.keys(SCHEMAS).join('|')}> [name] [--check|--dryrun]`;

function fail(message, code = 2) {
  process.stderr.write(`error: ${message}\n`);
  process.exit(code);
}

/** Newest modification time of the TypeScript sources under `dir` (0 when there are none: a runtime image). */
function newestSource(dir) {
  let newest = 0;
  if (!existsSync(dir)) return newest;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'weave-node') newest = Math.max(newest, newestSource(path));
    } else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

const [command, schemaName, ...rest] = process.argv.slice(2);
if (!COMMANDS.includes(command)) fail(`unknown command ${JSON.stringify(command ?? '')}\n${USAGE}`);
const schema = SCHEMAS[schemaName];
if (!schema) fail(`unknown schema ${JSON.stringify(schemaName ?? '')}\n${USAGE}`);

const built = join(root, 'dist', `${schema.module}.js`);
if (!existsSync(built)) fail(`${built} is missing: run \`npm run build\` first`, 1);
const builtAt = statSync(built).mtimeMs;
// What the module runs: the shared libraries and, for a service's schema, that service's sources.
const app = schema.module.startsWith('apps/') ? schema.module.split('/').slice(0, 3).join('/') : undefined;
if (Math.max(newestSource(join(root, 'libs')), app ? newestSource(join(root, app)) : 0) > builtAt) {
  fail('dist/ is older than the sources: run `npm run build` first', 1);
}

const typeormCli = createRequire(import.meta.url).resolve('typeorm/cli.js');
let args;
if (command === 'generate') {
  const flags = rest.filter((arg) => arg.startsWith('-'));
  const [name] = rest.filter((arg) => !arg.startsWith('-'));
  const checking = flags.includes('--check') || flags.includes('--dryrun');
  if (!name && !checking) fail(`generate needs a migration name (kebab-case, e.g. ${schemaName.replace(/_/g, '-')}-add-column)\n${USAGE}`);
  // The path is only used to name the file; --check and --dryrun write nothing.
  args = ['migration:generate', join(root, schema.migrations, name ?? 'unused'), '--dataSource', built, '--pretty', ...flags];
} else {
  args = [`migration:${command}`, '--dataSource', built, ...rest];
}

const before = new Set(existsSync(join(root, schema.migrations)) ? readdirSync(join(root, schema.migrations)) : []);
const result = spawnSync(process.execPath, [typeormCli, ...args], { stdio: 'inherit', cwd: root });
if (command === 'generate' && result.status === 0) {
  for (const file of readdirSync(join(root, schema.migrations)).filter((f) => !before.has(f))) {
    process.stderr.write(`next: add the class of ${schema.migrations}/${file} to the migrations of ${schema.dataSource}\n`);
  }
}
process.exit(result.status ?? 1);
