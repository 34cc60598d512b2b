#!/usr/bin/env node
// `npm run ops -- <command>`: runs the operations CLI (DESIGN §3) from the build in dist/, and
// never builds. Building here made concurrent calls rewrite dist/ while another call imported
// it (`SyntaxError: ... does not provide an export named ...`). Build once with `npm run
// build` (`npm start` and `npm test` do); this wrapper only refuses a missing or stale build,
// with one line on stderr and exit 1, so that nobody runs yesterday's code by mistake.
//
// Stale means: a source file the CLI runs (apps/ops/src, libs/*/src except the separately built
// client library libs/weave-node) is newer than its compiled file, or that file is missing. swc
// rewrites every output file on each build, so comparing each pair of mtimes is exact and costs
// a few hundred stat calls (milliseconds). Plain ESM, no dependencies.
import { readdirSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const entry = join(dist, 'apps', 'ops', 'src', 'main.js');

/** The TypeScript sources under `dir` (recursively); none when `dir` does not exist. */
function sources(dir) {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries.flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sources(path);
    return e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [path] : [];
  });
}

function mtimeOf(path) {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return undefined;
  }
}

/** Why dist/ cannot be run, or undefined when it is up to date. */
function buildProblem() {
  if (mtimeOf(entry) === undefined) return `has no ${relative(root, entry)}`;
  let libs;
  try {
    libs = readdirSync(join(root, 'libs')).filter((name) => name !== 'weave-node');
  } catch {
    libs = [];
  }
  const files = [join(root, 'apps', 'ops', 'src'), ...libs.map((name) => join(root, 'libs', name, 'src'))].flatMap(sources);
  for (const file of files) {
    const built = join(dist, relative(root, file)).replace(/\.ts$/, '.js');
    const builtAt = mtimeOf(built);
    if (builtAt === undefined) return `has no ${relative(root, built)}`;
    if (builtAt < mtimeOf(file)) return `is older than ${relative(root, file)}`;
  }
  return undefined;
}

const problem = buildProblem();
if (problem) {
  process.stderr.write(`error: the build in dist/ ${problem}; run \`npm run build\` first (npm run ops runs the built CLI, it does not build)\n`);
  process.exit(1);
}
// The CLI reads its arguments from process.argv.slice(2), the same here as under `node dist/…`.
await import(pathToFileURL(entry).href);
