// @vendor/weave-node as a consumer gets it: the tarball of `npm pack`, installed into a fresh
// project. Its file list is clean; publint and attw find nothing; `require` and `import` both
// load it; TypeScript 4.0 compiles a consumer against its .d.ts (and rejects a wrong one, so the
// types are really used); and it makes a real request in a Node process that has no fetch,
// AbortSignal.timeout or structuredClone (what Node 16 lacks).
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = process.cwd();
const LIB = join(ROOT, 'libs', 'weave-node');
/** The modules of libs/weave-node/src, each built to ESM and CJS with its declarations. */
const MODULES = ['client', 'errors', 'index', 'transport', 'types', 'wire'];
const BIN = join(ROOT, 'node_modules', '.bin');
const TSC_4_0 = join(ROOT, 'node_modules', 'typescript-4.0', 'bin', 'tsc');
const API_KEY = 'sk_test_PackagingSecretKey_42';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

// npm run-script exports npm_config_* / npm_package_* variables; a child npm must not inherit
// them (they would point it at the monorepo instead of the temporary consumer).
function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!/^npm_/i.test(key) && key !== 'INIT_CWD') env[key] = value;
  }
  delete env.SERVICE_API_BASE_URL;
  delete env.SERVICE_API_KEY;
  return env;
}

/** Runs a command without blocking this process (the test's HTTP server must keep answering). */
function run(file: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = cleanEnv()): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

async function ok(file: string, args: string[], cwd: string, env?: NodeJS.ProcessEnv): Promise<string> {
  const result = await run(file, args, cwd, env);
  if (result.code !== 0) throw new Error(`${file} ${args.join(' ')} exited ${result.code}\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

let work: string;
let tarball: string;
let consumer: string;
let packedFiles: string[];

beforeAll(async () => {
  await ok(process.execPath, [join(LIB, 'scripts', 'build.mjs'), '--if-stale'], ROOT);
  work = mkdtempSync(join(tmpdir(), 'weave-node-pack-'));
  // The build ran just above; --ignore-scripts keeps prepack from rebuilding under other workers.
  const packed = JSON.parse(await ok('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', work], LIB)) as Array<{
    filename: string;
    files: Array<{ path: string }>;
  }>;
  tarball = join(work, packed[0].filename);
  packedFiles = packed[0].files.map((f) => f.path).sort();
  consumer = join(work, 'consumer');
  mkdirSync(consumer, { recursive: true });
  writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'weave-consumer', version: '1.0.0', private: true }));
  // No dependencies, so the tarball installs without the registry.
  await ok('npm', ['install', tarball, '--offline', '--no-audit', '--no-fund', '--ignore-scripts', '--no-package-lock'], consumer);
}, 120000);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('@vendor/weave-node packed tarball', () => {
  it('holds only dist (ESM, CJS, declarations), README.md and package.json; no runtime dependencies', async () => {
    const expected = [
      'README.md',
      ...MODULES.flatMap((m) => [`dist/cjs/${m}.cjs`, `dist/cjs/${m}.d.cts`, `dist/cjs/${m}.d.ts`, `dist/esm/${m}.d.mts`, `dist/esm/${m}.mjs`]),
      'package.json',
    ].sort();
    expect(packedFiles).toEqual(expected);
    // What is inside the archive itself, not only what npm reported.
    const listed = (await ok('tar', ['-tzf', tarball], work))
      .split('\n')
      .filter(Boolean)
      .map((line) => line.replace(/^package\//, ''))
      .sort();
    expect(listed).toEqual(expected);
    const manifest = JSON.parse(readFileSync(join(consumer, 'node_modules', '@vendor', 'weave-node', 'package.json'), 'utf8')) as Record<string, unknown>;
    expect(manifest.name).toBe('@vendor/weave-node');
    expect(manifest.dependencies).toBeUndefined();
    expect(manifest.peerDependencies).toBeUndefined();
    expect(manifest.engines).toEqual({ node: '>=16' });
    const readme = readFileSync(join(consumer, 'node_modules', '@vendor', 'weave-node', 'README.md'), 'utf8');
    expect(readme).toContain('SERVICE_API_KEY');
  });

  it('publint finds nothing (strict, suggestions included)', async () => {
    const result = await run(join(BIN, 'publint'), ['run', tarball, '--strict', '--level', 'suggestion'], work);
    expect(result.stderr + result.stdout).toContain('All good!');
    expect(result.code).toBe(0);
  });

  it('attw (are the types wrong) finds no problem for node10, node16 CJS and ESM, and bundler resolution', async () => {
    const result = await run(join(BIN, 'attw'), ['--no-definitely-typed', '--format', 'json', tarball], work);
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout) as {
      analysis: {
        problems: unknown[];
        entrypoints: Record<string, { resolutions: Record<string, { resolution?: { fileName: string }; implementationResolution?: { fileName: string } }> }>;
      };
    };
    expect(report.analysis.problems).toEqual([]);
    const resolved = Object.fromEntries(
      Object.entries(report.analysis.entrypoints['.'].resolutions).map(([kind, r]) => [
        kind,
        [r.resolution?.fileName.replace(/^.*weave-node\//, ''), r.implementationResolution?.fileName.replace(/^.*weave-node\//, '')],
      ]),
    );
    expect(resolved).toEqual({
      node10: ['dist/cjs/index.d.ts', 'dist/cjs/index.cjs'],
      'node16-cjs': ['dist/cjs/index.d.cts', 'dist/cjs/index.cjs'],
      'node16-esm': ['dist/esm/index.d.mts', 'dist/esm/index.mjs'],
      bundler: ['dist/esm/index.d.mts', 'dist/esm/index.mjs'],
    });
  });

  it('require() gets the CommonJS build and import() the ESM build, both exposing the client and the typed errors', async () => {
    const names = [
      'ServiceClient',
      'ServiceError',
      'ServiceConfigurationError',
      'ServiceRequestError',
      'ServiceAuthenticationError',
      'ServiceRateLimitError',
      'ServiceConnectionError',
      'ServiceResponseError',
      'ServiceAbortError',
    ];
    const probe = (load: string, resolveExpr: string): string => `
      ${load}.then((m) => {
        const client = new m.ServiceClient({ apiKey: 'sk_test_x', apiBaseUrl: 'http://127.0.0.1:9' });
        let configError;
        try { new m.ServiceClient({ apiKey: '' }); } catch (e) { configError = e; }
        console.log(JSON.stringify({
          resolved: ${resolveExpr},
          types: ${JSON.stringify(names)}.map((n) => typeof m[n]),
          version: m.VERSION,
          clientIsInstance: client instanceof m.ServiceClient,
          configError: configError instanceof m.ServiceConfigurationError && configError instanceof m.ServiceError && configError instanceof Error,
        }));
      });`;
    const cjs = JSON.parse(
      await ok(process.execPath, ['-e', probe("Promise.resolve(require('@vendor/weave-node'))", "require.resolve('@vendor/weave-node')")], consumer),
    ) as Record<string, unknown>;
    const esm = JSON.parse(
      await ok(
        process.execPath,
        ['--input-type=module', '-e', probe("import('@vendor/weave-node')", "import.meta.resolve('@vendor/weave-node')")],
        consumer,
      ),
    ) as Record<string, unknown>;
    const version = (JSON.parse(readFileSync(join(LIB, 'package.json'), 'utf8')) as { version: string }).version;
    for (const loaded of [cjs, esm]) {
      expect(loaded.types).toEqual(names.map(() => 'function'));
      expect(loaded.version).toBe(version);
      expect(loaded.clientIsInstance).toBe(true);
      expect(loaded.configError).toBe(true);
    }
    expect(cjs.resolved).toMatch(/node_modules\/@vendor\/weave-node\/dist\/cjs\/index\.cjs$/);
    expect(esm.resolved).toMatch(/node_modules\/@vendor\/weave-node\/dist\/esm\/index\.mjs$/);
  });
});

describe('@vendor/weave-node typings under TypeScript 4.0', () => {
  // Classic resolution ("node": main/types, no exports map), no @types/node: the declarations
  // must stand on their own. skipLibCheck stays off so TypeScript 4.0 checks the .d.ts itself.
  const tsconfig = {
    compilerOptions: {
      target: 'es2019',
      module: 'commonjs',
      moduleResolution: 'node',
      lib: ['es2019', 'dom'],
      types: [],
      strict: true,
      noEmit: true,
      // TypeScript's own lib files need no checking (slow); the package's .d.ts are still checked.
      skipDefaultLibCheck: true,
    },
  };

  async function compile(name: string, source: string, lib = tsconfig.compilerOptions.lib): Promise<Run> {
    const dir = join(consumer, name);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'consumer.ts'), source);
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { ...tsconfig.compilerOptions, lib }, files: ['consumer.ts'] }));
    return run(process.execPath, [TSC_4_0, '-p', join(dir, 'tsconfig.json')], dir);
  }

  it('is TypeScript 4.0', () => {
    const manifest = JSON.parse(readFileSync(join(TSC_4_0, '..', '..', 'package.json'), 'utf8')) as { name: string; version: string };
    expect(manifest).toEqual(expect.objectContaining({ name: 'typescript', version: expect.stringMatching(/^4\.0\./) }));
  });

  it('a consumer using every exported type compiles', async () => {
    const result = await compile(
      'good',
      `
import {
  ServiceClient, ServiceClientOptions, ServiceSubscriptionOptions, ServiceRequestOptions, ServiceWaitResult,
  ServiceRecommendation, ServiceError, ServiceAuthenticationError, ServiceRateLimitError, ServiceRequestError,
  ServiceConnectionError, ServiceConfigurationError, ServiceResponseError, ServiceAbortError, DEFAULT_MAX_RETRIES,
} from '@vendor/weave-node';

declare const process: { env: Record<string, string | undefined> };

const clientOptions: ServiceClientOptions = { apiKey: process.env.SERVICE_API_KEY || '', timeoutMs: 5000, maxRetries: DEFAULT_MAX_RETRIES };
const client = new ServiceClient(clientOptions);

export async function answer(question: string): Promise<string> {
  const controller = new AbortController();
  const options: ServiceSubscriptionOptions = {
    sessionId: 'sess', messageId: 'msg', query: question, latencyBudgetMs: 300,
    messages: [{ role: 'user', content: question }], locale: 'en-US', geo: 'US', platformSurface: 'web',
  };
  const requestOptions: ServiceRequestOptions = { signal: controller.signal, timeoutMs: 2000, maxRetries: 1 };
  try {
    const result: ServiceWaitResult = await client.getRecommendationsForWeave(options, requestOptions);
    if (!result.found || !result.recommendations) return result.error || 'none';
    const top: ServiceRecommendation = result.recommendations[0];
    const score: number = top.contextual_relevance_score;
    const text: string | undefined = top.weave_summary || top.tail_summary || top.creative_input.short_description;
    return top.product_title + ' ' + top.click_url + ' ' + top.exposure_url + ' ' + score + ' ' + text + ' ' + result.requestId;
  } catch (error) {
    if (error instanceof ServiceAuthenticationError) return 'auth ' + error.status + ' ' + error.detail;
    if (error instanceof ServiceRateLimitError) return 'later ' + error.retryAfterMs;
    if (error instanceof ServiceRequestError) return error.status + ' ' + error.code + ' ' + error.title + ' ' + error.requestId;
    if (error instanceof ServiceConnectionError) return 'down ' + error.timedOut;
    if (error instanceof ServiceResponseError) return 'odd ' + error.status;
    if (error instanceof ServiceConfigurationError || error instanceof ServiceAbortError) return error.message;
    if (error instanceof ServiceError) return error.name;
    throw error;
  }
}
const json: string = JSON.stringify(client.toJSON());
export { json };
`,
    );
    expect(result.stdout + result.stderr).toBe('');
    expect(result.code).toBe(0);
  });

  it('the declarations need neither the DOM library nor @types/node (lib es2019 only)', async () => {
    const result = await compile(
      'bare',
      `
import { ServiceClient, ServiceWaitResult } from '@vendor/weave-node';
export const client = new ServiceClient({ apiKey: 'sk_test_x', apiBaseUrl: 'https://x.example' });
export const pending: Promise<ServiceWaitResult> = client.getRecommendationsForWeave({ sessionId: 's', messageId: 'm', query: 'q' });
`,
      ['es2019'],
    );
    expect(result.stdout + result.stderr).toBe('');
    expect(result.code).toBe(0);
  });

  it('a wrong consumer does not compile: the declarations are what the compiler checks against', async () => {
    const result = await compile(
      'bad',
      `
import { ServiceClient } from '@vendor/weave-node';
const client = new ServiceClient({ apiBaseUrl: 'https://x.example' });
export const pending = client.getRecommendationsForWeave({ sessionId: 's', query: 'q' });
export const wrongBudget = client.getRecommendationsForWeave({ sessionId: 's', messageId: 'm', query: 'q', latencyBudgetMs: '300' });
export async function f(): Promise<string> {
  const result = await client.getRecommendationsForWeave({ sessionId: 's', messageId: 'm', query: 'q' });
  return result.recommendations![0].landing_url;
}
`,
    );
    expect(result.code).not.toBe(0);
    const output = result.stdout + result.stderr;
    const errorLines = output.split('\n').filter((line) => /^consumer\.ts\(\d+,\d+\): error TS\d+/.test(line));
    expect(errorLines.map((line) => line.replace(/^consumer\.ts\((\d+),\d+\): error (TS\d+).*$/, '$1 $2'))).toEqual([
      '3 TS2345',
      '4 TS2345',
      '5 TS2322',
      '8 TS2339',
    ]);
    expect(output).toContain("Property 'apiKey' is missing");
    expect(output).toContain("Property 'messageId' is missing");
    expect(output).toContain("Type 'string' is not assignable to type 'number | undefined'");
    expect(output).toContain("Property 'landing_url' does not exist on type 'ServiceRecommendation'");
  });
});

describe('@vendor/weave-node on a runtime without fetch, AbortSignal.timeout and structuredClone', () => {
  let server: http.Server;
  let url: string;
  const seen: Array<{ url: string; authorization: string | undefined }> = [];

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        seen.push({ url: req.url || '', authorization: req.headers.authorization });
        if (req.url === '/hang/agent/recommend') return; // never answers: the timeout must end it
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            request_id: 'req_node16',
            query: 'tents',
            recommendations: [
              {
                recommendation_id: 'rec_16',
                ad_id: 'ad_16',
                product_id: 'prod_16',
                product_title: 'Ultralight Tent',
                click_url: 'https://gw.example/c',
                exposure_url: 'https://gw.example/e',
                creative_input: {},
                contextual_relevance_score: 64,
              },
            ],
          }),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('the CommonJS and ESM builds both get a found result, a timed-out attempt and an abort, over node:http', async () => {
    // Preloaded before the consumer: removes what Node 16 does not have, and proves it is gone.
    writeFileSync(
      join(consumer, 'strip-globals.cjs'),
      `for (const name of ['fetch', 'Headers', 'Request', 'Response', 'FormData', 'structuredClone']) delete globalThis[name];
       delete AbortSignal.timeout;
       delete AbortSignal.any;
       if (typeof fetch !== 'undefined' || typeof structuredClone !== 'undefined' || typeof AbortSignal.timeout !== 'undefined') {
         throw new Error('globals still present');
       }`,
    );
    const body = (load: string): string => `
      ${load}.then(async (m) => {
        const client = new m.ServiceClient({ apiKey: process.env.SERVICE_API_KEY, apiBaseUrl: process.env.SERVICE_API_BASE_URL });
        const found = await client.getRecommendationsForWeave({ sessionId: 's16', messageId: 'm16', query: 'tents' });
        const slow = new m.ServiceClient({ apiKey: process.env.SERVICE_API_KEY, apiBaseUrl: process.env.SERVICE_API_BASE_URL + '/hang', timeoutMs: 200, maxRetries: 0 });
        const timedOut = await slow.getRecommendationsForWeave({ sessionId: 's16', messageId: 'm16', query: 'tents' }).catch((e) => e);
        const controller = new AbortController();
        const pending = slow.getRecommendationsForWeave({ sessionId: 's16', messageId: 'm17', query: 'tents' }, { signal: controller.signal, timeoutMs: 60000 });
        setTimeout(() => controller.abort(), 100);
        const aborted = await pending.catch((e) => e);
        console.log(JSON.stringify({
          fetch: typeof fetch, structuredClone: typeof structuredClone, abortSignalTimeout: typeof AbortSignal.timeout,
          found,
          timedOut: { name: timedOut.name, timedOut: timedOut.timedOut, isConnectionError: timedOut instanceof m.ServiceConnectionError },
          aborted: { name: aborted.name, isAbortError: aborted instanceof m.ServiceAbortError },
        }));
      }).catch((e) => { console.error(e); process.exit(1); });`;
    writeFileSync(join(consumer, 'node16.cjs'), body("Promise.resolve(require('@vendor/weave-node'))"));
    writeFileSync(join(consumer, 'node16.mjs'), body("import('@vendor/weave-node')"));
    const env = { ...cleanEnv(), SERVICE_API_KEY: API_KEY, SERVICE_API_BASE_URL: url };
    for (const entry of ['node16.cjs', 'node16.mjs']) {
      const before = seen.length;
      const out = JSON.parse(await ok(process.execPath, ['-r', './strip-globals.cjs', entry], consumer, env)) as Record<string, unknown>;
      expect(out).toEqual({
        fetch: 'undefined',
        structuredClone: 'undefined',
        abortSignalTimeout: 'undefined',
        found: expect.objectContaining({ found: true, requestId: 'req_node16', recommendations: [expect.objectContaining({ recommendation_id: 'rec_16' })] }),
        timedOut: { name: 'ServiceConnectionError', timedOut: true, isConnectionError: true },
        aborted: { name: 'ServiceAbortError', isAbortError: true },
      });
      expect(seen.slice(before)).toEqual([
        { url: '/agent/recommend', authorization: `Bearer ${API_KEY}` },
        { url: '/hang/agent/recommend', authorization: `Bearer ${API_KEY}` },
        { url: '/hang/agent/recommend', authorization: `Bearer ${API_KEY}` },
      ]);
    }
  });

  it('the built code calls none of the newer globals Node 16 lacks', () => {
    for (const [dir, extension] of [['esm', '.mjs'], ['cjs', '.cjs']]) {
      const code = MODULES.map((m) => readFileSync(join(consumer, 'node_modules', '@vendor', 'weave-node', 'dist', dir, `${m}${extension}`), 'utf8')).join('\n');
      // Calls only: the source's comments name these APIs to say they are not used.
      for (const call of [/\bfetch\s*\(/, /\bstructuredClone\s*\(/, /AbortSignal\.(timeout|any)\s*\(/, /\.findLast\s*\(/, /\.toSorted\s*\(/, /Promise\.withResolvers/]) {
        expect(code).not.toMatch(call);
      }
      expect(code).toMatch(/require\("node:http"\)|from 'node:http'/);
    }
  });
});

