import 'reflect-metadata';
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { RpcErrorFilter, RpcValidationPipe } from '#libs/nats';

/**
 * Every controller of the services that answers NATS requests (`@MessagePattern`) binds the
 * payload validation and the typed error answers itself (`@RpcController()`): startRpcServer
 * connects the microservice through Nest's public API, without global enhancers.
 */
const APPS = join(process.cwd(), 'apps');
const PATTERN_METADATA = 'microservices:pattern';

function controllerFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'dashboard' || entry.name === 'node_modules' ? [] : controllerFiles(path);
    return entry.name.endsWith('.controller.ts') ? [path] : [];
  });
}

function hasMessagePatterns(target: Function): boolean {
  return Object.getOwnPropertyNames(target.prototype).some((name) => name !== 'constructor' && Reflect.getMetadata(PATTERN_METADATA, target.prototype[name]) !== undefined);
}

it('binds RpcValidationPipe and RpcErrorFilter on every controller with @MessagePattern handlers', async () => {
  const rpcControllers: { file: string; name: string; pipes: unknown[]; filters: unknown[] }[] = [];
  for (const file of controllerFiles(APPS)) {
    const module = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
    for (const [name, value] of Object.entries(module)) {
      if (typeof value !== 'function' || !value.prototype || !hasMessagePatterns(value)) continue;
      rpcControllers.push({ file: relative(APPS, file), name, pipes: Reflect.getMetadata('__pipes__', value) ?? [], filters: Reflect.getMetadata('__exceptionFilters__', value) ?? [] });
    }
  }
  // The four services that answer requests: reporting-projection, payouts-read, timezone-settings, recommendations.
  expect(rpcControllers.length).toBeGreaterThanOrEqual(4);
  for (const controller of rpcControllers) {
    expect({ ...controller, pipes: controller.pipes.includes(RpcValidationPipe), filters: controller.filters.includes(RpcErrorFilter) }).toEqual({ ...controller, pipes: true, filters: true });
  }
});
