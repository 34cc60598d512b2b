// Builds dist/esm (<module>.mjs + <module>.d.mts) and dist/cjs (<module>.cjs + <module>.d.cts +
// <module>.d.ts) for each module of src/ (index re-exports the public ones), with the TypeScript
// compiler of the monorepo (or the one on PATH when built standalone). tsc keeps the sources'
// `./x.js` specifiers; they are rewritten to the renamed files (`./x.mjs`, `./x.cjs`), except in
// the `.d.ts` copies for TypeScript before 4.7, whose node10 resolution maps `./x.js` to `x.d.ts`.
//
//   node scripts/build.mjs            always rebuild
//   node scripts/build.mjs --if-stale rebuild only when dist is missing or older than src/ or
//                                     the build configuration (used by the tests)
//
// Test workers may build at the same time: one builds under a lock (a directory created
// atomically) while the others wait for it and then find dist fresh. The output is assembled in a
// temporary folder and each file is moved into dist with one rename, so a reader never sees a
// half-written file nor a missing dist.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const stamp = join(dist, '.build-stamp');
const lock = join(root, '.build-lock');
const LOCK_STALE_MS = 5 * 60 * 1000;
const LOCK_WAIT_MS = 3 * 60 * 1000;
const MODULES = readdirSync(join(root, 'src'))
  .filter((name) => name.endsWith('.ts') && !name.endsWith('.d.ts'))
  .map((name) => name.slice(0, -'.ts'.length))
  .sort();
const OUTPUTS = MODULES.flatMap((m) => [`esm/${m}.mjs`, `esm/${m}.d.mts`, `cjs/${m}.cjs`, `cjs/${m}.d.cts`, `cjs/${m}.d.ts`]);

/** Points the relative `./x.js` specifiers of an emitted file at `./x<extension>`. */
function respecify(code, extension) {
  return code.replace(/(\bfrom\s*|\brequire\(\s*|\bimport\(\s*)(['"])(\.{1,2}\/[^'"]+?)\.js\2/g, `$1$2$3${extension}$2`);
}

/** Writes `from` (an emitted file) to `to` with its specifiers pointing at `extension` files. */
function emit(from, to, extension) {
  writeFileSync(to, extension === '.js' ? readFileSync(from, 'utf8') : respecify(readFileSync(from, 'utf8'), extension));
}

function newestInput() {
  const inputs = [join(root, 'tsconfig.json'), join(root, 'tsconfig.cjs.json'), join(root, 'package.json'), fileURLToPath(import.meta.url)];
  for (const name of readdirSync(join(root, 'src'))) inputs.push(join(root, 'src', name));
  return Math.max(...inputs.map((file) => statSync(file).mtimeMs));
}

function fresh() {
  return existsSync(stamp) && statSync(stamp).mtimeMs >= newestInput() && OUTPUTS.every((file) => existsSync(join(dist, file)));
}

const ifStale = process.argv.includes('--if-stale');
if (ifStale && fresh()) process.exit(0);

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

function acquireLock() {
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      mkdirSync(lock);
      return;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
    }
    try {
      // A builder that died without releasing its lock: take the lock over.
      if (Date.now() - statSync(lock).mtimeMs > LOCK_STALE_MS) rmSync(lock, { recursive: true, force: true });
    } catch {
      // released meanwhile
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${lock}`);
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
  }
}

function build() {
  const tsc = findTsc();
  const work = join(root, `.dist-${process.pid}-${Date.now()}`);
  rmSync(work, { recursive: true, force: true });
  try {
    const esm = join(work, 'esm');
    const cjs = join(work, 'cjs');
    execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.json'), '--outDir', esm], { stdio: 'inherit' });
    execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.cjs.json'), '--outDir', cjs], { stdio: 'inherit' });
    for (const m of MODULES) {
      emit(join(esm, `${m}.js`), join(esm, `${m}.mjs`), '.mjs');
      emit(join(esm, `${m}.d.ts`), join(esm, `${m}.d.mts`), '.mjs');
      emit(join(cjs, `${m}.js`), join(cjs, `${m}.cjs`), '.cjs');
      // .d.cts for the exports map (node16/nodenext/bundler); the .d.ts tsc wrote stays for the
      // top-level "types" field that TypeScript before 4.7 reads.
      emit(join(cjs, `${m}.d.ts`), join(cjs, `${m}.d.cts`), '.cjs');
    }
    // The stamp goes last: its presence means every output is in place.
    rmSync(stamp, { force: true });
    for (const file of OUTPUTS) {
      mkdirSync(dirname(join(dist, file)), { recursive: true });
      renameSync(join(work, file), join(dist, file));
    }
    // Outputs of modules that no longer exist would still be packed: remove them.
    for (const format of ['esm', 'cjs']) {
      for (const name of readdirSync(join(dist, format))) {
        if (!OUTPUTS.includes(`${format}/${name}`)) rmSync(join(dist, format, name), { recursive: true, force: true });
      }
    }
    writeFileSync(stamp, new Date().toISOString() + '\n');
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

acquireLock();
try {
  // Another builder may have finished while this one waited for the lock.
  if (!(ifStale && fresh())) build();
} finally {
  rmSync(lock, { recursive: true, force: true });
}
