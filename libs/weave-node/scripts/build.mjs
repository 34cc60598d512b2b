// Builds dist/esm (index.mjs + index.d.mts) and dist/cjs (index.cjs + index.d.cts + index.d.ts)
// with the TypeScript compiler of the monorepo (or the one on PATH when built standalone).
//
//   node scripts/build.mjs            always rebuild
//   node scripts/build.mjs --if-stale rebuild only when dist is missing or older than src/ or
//                                     the build configuration (used by the tests)
//
// The output is assembled in a temporary folder and swapped in with one rename, so that two
// test workers building at the same time never see a half-written dist.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync, copyFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const stamp = join(dist, '.build-stamp');

function newestInput() {
  const inputs = [join(root, 'tsconfig.json'), join(root, 'tsconfig.cjs.json'), join(root, 'package.json'), fileURLToPath(import.meta.url)];
  for (const name of readdirSync(join(root, 'src'))) inputs.push(join(root, 'src', name));
  return Math.max(...inputs.map((file) => statSync(file).mtimeMs));
}

if (process.argv.includes('--if-stale') && existsSync(stamp) && statSync(stamp).mtimeMs >= newestInput()) {
  process.exit(0);
}

function findTsc() {
  let dir = root;
  for (;;) {
    const candidate = join(dir, 'node_modules', 'typescript', 'bin', 'tsc');
    if (existsSync(candidate)) return candidate;
    const parent = dirname(dir);
    if (parent === dir) throw new Error('typescript not found: run npm install in the monorepo or install typescript');
    dir = parent;
  }
}

const tsc = findTsc();
const work = join(root, `.dist-${process.pid}-${Date.now()}`);
rmSync(work, { recursive: true, force: true });
try {
  const esm = join(work, 'esm');
  const cjs = join(work, 'cjs');
  execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.json'), '--outDir', esm], { stdio: 'inherit' });
  execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.cjs.json'), '--outDir', cjs], { stdio: 'inherit' });
  // Single-file source: no relative specifiers to rewrite, only the file names change.
  renameSync(join(esm, 'index.js'), join(esm, 'index.mjs'));
  renameSync(join(esm, 'index.d.ts'), join(esm, 'index.d.mts'));
  renameSync(join(cjs, 'index.js'), join(cjs, 'index.cjs'));
  // index.d.cts for the exports map (node16/nodenext/bundler), index.d.ts for the top-level
  // "types" field that TypeScript before 4.7 reads.
  copyFileSync(join(cjs, 'index.d.ts'), join(cjs, 'index.d.cts'));
  writeFileSync(join(work, '.build-stamp'), new Date().toISOString() + '\n');
  rmSync(dist, { recursive: true, force: true });
  mkdirSync(dirname(dist), { recursive: true });
  try {
    renameSync(work, dist);
  } catch (error) {
    // Another build swapped its output in first; it is built from the same sources.
    if (!existsSync(stamp)) throw error;
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
