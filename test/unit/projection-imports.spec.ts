import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/**
 * reporting-projection has no API documentation, so it must not load @nestjs/swagger: the
 * package and what it pulls in (js-yaml, es-toolkit, its explorers) held about 4 MB of the
 * projection's heap, module text and code it never ran (docs/benchmarks/reporting-store.md,
 * "Ingest: peak resident memory"). The DTOs that carry swagger's decorators live in
 * #libs/recommend-request, and the shared health controller does not import swagger.
 */
const root = process.cwd();

/** The packages and source files reachable from a file by its run-time imports (type-only ones are erased). */
function reachable(entry: string): { packages: Set<string>; files: Set<string> } {
  const packages = new Set<string>();
  const files = new Set<string>();
  const pending = [entry];
  while (pending.length > 0) {
    const file = pending.pop()!;
    if (files.has(file)) continue;
    files.add(file);
    const text = readFileSync(file, 'utf8');
    const specifiers = [
      ...text.matchAll(/^\s*(?:import|export)\s+(?!type\s)(?:[^'";]*?\sfrom\s+)?['"]([^'"]+)['"]/gm),
      ...text.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g),
    ].map((m) => m[1]);
    for (const specifier of specifiers) {
      if (specifier.startsWith('.')) {
        const target = resolve(dirname(file), specifier.replace(/\.js$/, '.ts'));
        if (existsSync(target)) pending.push(target);
      } else if (specifier.startsWith('#libs/')) {
        pending.push(join(root, 'libs', specifier.slice('#libs/'.length), 'src', 'index.ts'));
      } else if (!specifier.startsWith('node:')) {
        packages.add(specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]);
      }
    }
  }
  return { packages, files };
}

describe('what reporting-projection loads', () => {
  const { packages, files } = reachable(join(root, 'apps/reporting-projection/src/main.ts'));

  it('reaches its framework (Nest, TypeORM) through its imports (the walk follows them)', () => {
    expect([...packages]).toEqual(expect.arrayContaining(['@nestjs/common', '@nestjs/core', '@nestjs/terminus', 'typeorm']));
    expect([...files].map((f) => relative(root, f))).toEqual(expect.arrayContaining(['libs/observability/src/health.ts', 'libs/contracts/src/index.ts']));
  });

  it('never imports @nestjs/swagger, nor the recommend request DTOs that carry its decorators', () => {
    expect([...packages].filter((p) => p === '@nestjs/swagger')).toEqual([]);
    expect([...files].map((f) => relative(root, f)).filter((f) => f.startsWith('libs/recommend-request/'))).toEqual([]);
  });

  it("tells @nestjs/terminus's @HealthCheck not to document itself (it would require @nestjs/swagger)", () => {
    for (const file of files) {
      const calls = readFileSync(file, 'utf8').match(/@HealthCheck\([^)]*\)/g) ?? [];
      for (const call of calls) expect({ file: relative(root, file), call }).toEqual({ file: relative(root, file), call: expect.stringContaining('swaggerDocumentation: false') });
    }
  });
});
