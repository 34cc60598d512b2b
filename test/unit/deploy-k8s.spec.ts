import 'reflect-metadata';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ConfigError, cidrList, databaseUrl, loadEnv, natsServers, natsTls, redisTls } from '#libs/config';
import { Deployment, StatefulSet } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { Ingress, NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Namespace, Secret, Service } from 'kubernetes-models/v1';
import YAML from 'yaml';
import { Durables, Streams } from '#libs/contracts';
import { GatewayEnv } from '../../apps/gateway/src/config/gateway.env.js';
import { REPORTING_PROJECTION_NODE_FLAGS, REPORTING_PROJECTION_PROCESS_ENV } from '../../apps/reporting-projection/src/config/node-flags.js';
import { ReportingProjectionEnv } from '../../apps/reporting-projection/src/config/reporting-projection.env.js';
import { SERVICE_ENVS, declaredVariables } from '../support/service-envs.js';

/**
 * Renders every overlay of deploy/k8s with `kubectl kustomize` ($KUBECTL when set: .ci/run
 * installs a kustomize v5 kubectl when the machine lacks one) and validates each object
 * offline: core kinds against the Kubernetes OpenAPI schemas (kubernetes-models), the KEDA
 * ScaledObject and the CloudNativePG Cluster by their required fields; then the rules of
 * issue 6 (probes, resources, securityContext, PDBs, autoscaling, ingress TLS, configuration).
 */

const root = process.cwd();
const KUBECTL = process.env.KUBECTL || 'kubectl';
const OVERLAYS = ['dev', 'prod'] as const;
/** Applied before the production overlay: the internal CA (cluster-wide) and namespace `nats` (README.md). */
const PROD_PARTS = ['prod/pki', 'prod/nats'] as const;

const SERVICES = SERVICE_ENVS;
const SECRET_VARIABLES = ['DATABASE_URL', 'REDIS_URL', 'TRACKING_SIGNING_SECRET', 'OIDC_ISSUER', 'OIDC_AUDIENCE', 'OIDC_JWKS_URL', 'NATS_PASSWORD'];
/** DESIGN §2's table. */
const DESIGN_VARIABLES = [
  'NATS_URL', 'DATABASE_URL', 'REDIS_URL', 'PORT', 'HOST', 'OIDC_ISSUER', 'OIDC_AUDIENCE', 'OIDC_JWKS_URL',
  'OIDC_ROLE_CLAIM', 'REPORTING_PUBLISH_INTERVAL_MS', 'REPORTING_STALE_AFTER_MS', 'TRACKING_SIGNING_SECRET',
  'TRACKING_LINK_TTL_DAYS', 'TRUSTED_PROXIES', 'NATS_USER', 'NATS_PASSWORD',
];
/** Request/reply services that scale on a HorizontalPodAutoscaler of their own. */
const HPA_SERVICES = ['gateway', 'payouts-read', 'timezone-settings', 'recommendations'];

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type K8sObject = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; [k: string]: any }; [k: string]: any };

const VALIDATORS: Record<string, new (data: never) => { validate(): void }> = {
  'v1/ConfigMap': ConfigMap,
  'v1/Namespace': Namespace,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'apps/v1/Deployment': Deployment,
  'apps/v1/StatefulSet': StatefulSet,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'networking.k8s.io/v1/Ingress': Ingress,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
};

/** Required fields of the custom resources (their CRDs are not part of kubernetes-models). */
function customResourceProblems(object: K8sObject): string[] | undefined {
  const problems: string[] = [];
  const need = (condition: unknown, what: string) => {
    if (!condition) problems.push(`${object.kind}/${object.metadata.name}: ${what}`);
  };
  if (object.apiVersion === 'keda.sh/v1alpha1' && object.kind === 'ScaledObject') {
    const spec = object.spec ?? {};
    need(typeof spec.scaleTargetRef?.name === 'string', 'spec.scaleTargetRef.name is required');
    need(Array.isArray(spec.triggers) && spec.triggers.length > 0, 'spec.triggers must be a non-empty array');
    for (const trigger of spec.triggers ?? []) {
      need(typeof trigger.type === 'string', 'every trigger needs a type');
      need(trigger.metadata && typeof trigger.metadata === 'object', `trigger ${trigger.type} needs metadata`);
      for (const value of Object.values(trigger.metadata ?? {})) need(typeof value === 'string', `trigger ${trigger.type}: metadata values are strings`);
      if (trigger.type === 'nats-jetstream') {
        for (const key of ['natsServerMonitoringEndpoint', 'account', 'stream', 'consumer']) need(trigger.metadata?.[key], `nats-jetstream trigger needs metadata.${key}`);
      }
    }
    need(Number.isInteger(spec.minReplicaCount ?? 0) && Number.isInteger(spec.maxReplicaCount ?? 100), 'replica counts are integers');
    need((spec.minReplicaCount ?? 0) <= (spec.maxReplicaCount ?? 100), 'minReplicaCount <= maxReplicaCount');
    return problems;
  }
  if (object.apiVersion === 'postgresql.cnpg.io/v1' && object.kind === 'Cluster') {
    const spec = object.spec ?? {};
    need(Number.isInteger(spec.instances) && spec.instances >= 1, 'spec.instances must be an integer >= 1');
    need(typeof spec.storage?.size === 'string' || typeof spec.storage?.pvcTemplate === 'object', 'spec.storage.size (or pvcTemplate) is required');
    need(!spec.imageName || /^[\w./-]+:[\w.-]+$/.test(spec.imageName), 'spec.imageName must be pinned to a tag');
    for (const role of spec.managed?.roles ?? []) {
      need(typeof role.name === 'string', 'every managed role needs a name');
      need(!role.passwordSecret || typeof role.passwordSecret.name === 'string', `role ${role.name}: passwordSecret.name is a string`);
    }
    return problems;
  }
  if (object.apiVersion === 'cert-manager.io/v1' && object.kind === 'Certificate') {
    const spec = object.spec ?? {};
    need(typeof object.metadata.namespace === 'string', 'a Certificate is namespaced');
    need(typeof spec.secretName === 'string', 'spec.secretName is required');
    need(['ClusterIssuer', 'Issuer'].includes(spec.issuerRef?.kind) && typeof spec.issuerRef?.name === 'string', 'spec.issuerRef names an Issuer or ClusterIssuer');
    need(spec.isCA === true || (Array.isArray(spec.usages) && spec.usages.length > 0), 'a leaf certificate states its usages');
    need(spec.isCA === true || spec.usages?.includes('client auth') || (spec.dnsNames ?? []).length > 0, 'a server certificate names its hosts (dnsNames)');
    for (const usage of spec.usages ?? []) need(['server auth', 'client auth', 'digital signature', 'key encipherment'].includes(usage), `unknown usage ${usage}`);
    need(!spec.privateKey || ['ECDSA', 'RSA', 'Ed25519'].includes(spec.privateKey.algorithm), 'privateKey.algorithm is ECDSA, RSA or Ed25519');
    return problems;
  }
  if (object.apiVersion === 'cert-manager.io/v1' && object.kind === 'ClusterIssuer') {
    const spec = object.spec ?? {};
    need(object.metadata.namespace === undefined, 'a ClusterIssuer is cluster-scoped');
    need(Boolean(spec.selfSigned) !== Boolean(spec.ca), 'exactly one of spec.selfSigned, spec.ca');
    need(!spec.ca || typeof spec.ca.secretName === 'string', 'spec.ca.secretName is required');
    return problems;
  }
  if (object.apiVersion === 'postgresql.cnpg.io/v1' && object.kind === 'Database') {
    const spec = object.spec ?? {};
    for (const field of ['name', 'owner']) need(typeof spec[field] === 'string', `spec.${field} is required`);
    need(typeof spec.cluster?.name === 'string', 'spec.cluster.name is required');
    for (const schema of spec.schemas ?? []) need(typeof schema.name === 'string', 'every schema needs a name');
    return problems;
  }
  return undefined;
}

/**
 * kustomize folds long base64 values of a Secret over several lines; the API server's decoder
 * (Go's base64) ignores the line breaks, the schema's "byte" format does not.
 */
function normalize(object: K8sObject): K8sObject {
  if (object.kind !== 'Secret' || !object.data) return object;
  const data = Object.fromEntries(Object.entries(object.data as Record<string, string>).map(([k, v]) => [k, v.replace(/\s+/g, '')]));
  return { ...object, data };
}

function render(overlay: string): K8sObject[] {
  // overlay: a folder under deploy/k8s/overlays (prod/nats: the part applied to namespace nats)
  const output = execFileSync(KUBECTL, ['kustomize', join(root, 'deploy/k8s/overlays', overlay)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  return YAML.parseAllDocuments(output)
    .map((doc) => doc.toJS() as K8sObject | null)
    .filter((o): o is K8sObject => o !== null);
}

// ───────────── NetworkPolicies: which pods a selector picks, what a pod may reach ─────────────

type Selector = { matchLabels?: Record<string, string>; matchExpressions?: { key: string; operator: string; values?: string[] }[] };
type Peer = { podSelector?: Selector; namespaceSelector?: Selector; ipBlock?: { cidr: string; except?: string[] } };
type PolicyRule = { from?: Peer[]; to?: Peer[]; ports?: { protocol?: string; port?: number | string }[] };

function selects(selector: Selector | undefined, labels: Record<string, string>): boolean {
  if (!selector) return false;
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) if (labels[key] !== value) return false;
  for (const { key, operator, values = [] } of selector.matchExpressions ?? []) {
    const ok =
      operator === 'In' ? values.includes(labels[key]) : operator === 'NotIn' ? !values.includes(labels[key]) : operator === 'Exists' ? key in labels : !(key in labels);
    if (!ok) return false;
  }
  return true;
}

/** Pods of the rendered workloads: name, labels, named container ports. */
function podsOf(objects: K8sObject[]): { name: string; labels: Record<string, string>; ports: Map<string, number> }[] {
  return objects
    .filter((o) => o.kind === 'Deployment' || o.kind === 'StatefulSet')
    .map((o) => ({
      name: o.metadata.name,
      labels: o.spec.template.metadata.labels as Record<string, string>,
      ports: new Map<string, number>(o.spec.template.spec.containers.flatMap((c: { ports?: { name?: string; containerPort: number }[] }) => (c.ports ?? []).map((p) => [p.name ?? '', p.containerPort]))),
    }));
}

/** Every rule of the given direction that applies to a pod with these labels (policies of its namespace). */
function rulesFor(objects: K8sObject[], labels: Record<string, string>, direction: 'ingress' | 'egress'): PolicyRule[] {
  return objects
    .filter((o) => o.kind === 'NetworkPolicy' && selects(o.spec.podSelector, labels))
    .filter((o) => (o.spec.policyTypes as string[]).includes(direction === 'ingress' ? 'Ingress' : 'Egress'))
    .flatMap((o) => (o.spec[direction] ?? []) as PolicyRule[]);
}

/** "PROTOCOL/port" for each port a rule opens; named ports resolved on the pod they lead to. */
function portsOf(rule: PolicyRule, named: Map<string, number> = new Map()): string[] {
  return (rule.ports ?? []).map((p) => `${p.protocol ?? 'TCP'}/${typeof p.port === 'string' ? (named.get(p.port) ?? p.port) : p.port}`);
}

/** Settings that name a file in the pod (a CA, a certificate, a key): the file must be mounted there. */
const FILE_SETTINGS = ['NATS_TLS_CA_FILE', 'NATS_TLS_CERT_FILE', 'NATS_TLS_KEY_FILE', 'DATABASE_SSL_ROOT_CERT', 'REDIS_TLS_CA_FILE'];
const fileStandIn = (() => {
  let path: string | undefined;
  return () => {
    if (!path) {
      path = join(mkdtempSync(join(tmpdir(), 'weave-k8s-')), 'mounted.pem');
      writeFileSync(path, 'stand-in for a mounted file\n');
    }
    return path;
  };
})();

/** The Secret and key a pod's path comes from (a secret volume mounted at the path's folder), or undefined. */
function mountedSecretFile(deployment: K8sObject, path: string): { secret: string; key: string } | undefined {
  const spec = deployment.spec.template.spec;
  const mount = (spec.containers[0].volumeMounts ?? []).find((m: { mountPath: string }) => m.mountPath === dirname(path));
  const volume = mount && (spec.volumes ?? []).find((v: { name: string }) => v.name === mount.name);
  if (!volume?.secret) return undefined;
  const file = path.slice(dirname(path).length + 1);
  const items = volume.secret.items as { key: string; path: string }[] | undefined;
  const key = items ? items.find((i) => i.path === file)?.key : file;
  return key ? { secret: volume.secret.secretName, key } : undefined;
}

/**
 * The environment a service's pod would load, with each file setting checked to be mounted in the
 * pod (from a Secret volume) and pointed at a stand-in file here, as loadEnv checks that it exists.
 */
function withMountedFiles(config: Record<string, string>, deployment: K8sObject): Record<string, string> {
  const out = { ...config };
  for (const name of FILE_SETTINGS.filter((n) => config[n] !== undefined)) {
    expect({ setting: name, path: config[name], mounted: Boolean(mountedSecretFile(deployment, config[name])) }).toEqual({ setting: name, path: config[name], mounted: true });
    out[name] = fileStandIn();
  }
  return out;
}

/** Every object checked against its schema (core kinds) or its required fields (custom resources). */
function schemaProblems(objects: K8sObject[]): string[] {
  const problems: string[] = [];
  for (const object of objects) {
    const Model = VALIDATORS[`${object.apiVersion}/${object.kind}`];
    if (Model) {
      try {
        new Model(normalize(object) as never).validate();
      } catch (error) {
        problems.push(`${object.kind}/${object.metadata.name}: ${(error as Error).message}`);
      }
      continue;
    }
    const custom = customResourceProblems(object);
    if (custom === undefined) problems.push(`${object.apiVersion} ${object.kind}/${object.metadata.name}: no validator for this kind`);
    else problems.push(...custom);
  }
  return problems;
}

const rendered = new Map<string, K8sObject[]>();
beforeAll(() => {
  // The development overlay's secretGenerator reads git-ignored files with random values.
  execFileSync(process.execPath, [join(root, 'scripts/dev-secrets.mjs')], { stdio: 'ignore' });
  try {
    for (const overlay of [...OVERLAYS, ...PROD_PARTS]) rendered.set(overlay, render(overlay));
  } catch (error) {
    const e = error as { message: string; stderr?: string };
    throw new Error(`\`${KUBECTL} kustomize\` failed (a kubectl with kustomize v4+ is needed; .ci/run installs one): ${e.stderr || e.message}`);
  }
});

describe.each(OVERLAYS)('deploy/k8s/overlays/%s', (overlay) => {
  const objects = () => rendered.get(overlay)!;
  const find = (kind: string, name: string) => objects().find((o) => o.kind === kind && o.metadata.name === name);
  const namespace = overlay === 'prod' ? 'weave' : 'weave-dev';

  it('renders, and every object is valid against its schema (core kinds) or its required fields (CRDs)', () => {
    expect(objects().length).toBeGreaterThan(15);
    expect(schemaProblems(objects())).toEqual([]);
  });

  it('the schema validation is not vacuous', () => {
    const broken = structuredClone(find('Deployment', 'gateway')!);
    broken.spec.template.spec.containers[0].ports[0].containerPort = 'http';
    expect(() => new Deployment(broken as never).validate()).toThrow();
  });

  it(`puts every object in namespace ${namespace}, with unique kind/name`, () => {
    const keys = objects().map((o) => `${o.kind}/${o.metadata.name}`);
    expect(new Set(keys).size).toBe(keys.length);
    for (const object of objects()) expect({ key: `${object.kind}/${object.metadata.name}`, namespace: object.metadata.namespace }).toEqual({ key: `${object.kind}/${object.metadata.name}`, namespace });
  });

  describe.each(Object.entries(SERVICES))('%s', (name, { env, portVar, port }) => {
    const deployment = () => find('Deployment', name)!;
    const pod = () => deployment().spec.template.spec;
    const container = () => pod().containers[0];

    it('is a Deployment whose selector matches its pods', () => {
      expect(deployment()).toBeDefined();
      const selector = deployment().spec.selector.matchLabels;
      expect(deployment().spec.template.metadata.labels).toEqual(expect.objectContaining(selector));
      // Replicas belong to the autoscaler (a re-apply must not reset a scaled Deployment).
      expect(deployment().spec.replicas).toBeUndefined();
    });

    it('probes /health/live (liveness, startup) and /health/ready (readiness) on its HTTP port', () => {
      const c = container();
      const http = c.ports.find((p: { name: string }) => p.name === 'http');
      expect(http.containerPort).toBe(port);
      expect(c.livenessProbe.httpGet).toEqual({ path: '/health/live', port: 'http' });
      expect(c.readinessProbe.httpGet).toEqual({ path: '/health/ready', port: 'http' });
      expect(c.startupProbe.httpGet).toEqual({ path: '/health/live', port: 'http' });
      const value = c.env.find((e: { name: string }) => e.name === portVar)?.value;
      expect(value).toBe(String(port));
    });

    it('has resource requests and a memory limit', () => {
      const { requests, limits } = container().resources;
      expect(requests.cpu).toBeDefined();
      expect(requests.memory).toBeDefined();
      expect(limits.memory).toBeDefined();
    });

    it('runs non-root with a read-only root filesystem and no capabilities', () => {
      expect(pod().securityContext).toEqual(expect.objectContaining({ runAsNonRoot: true, runAsUser: expect.any(Number) }));
      expect(pod().securityContext.runAsUser).not.toBe(0);
      expect(pod().automountServiceAccountToken).toBe(false);
      expect(container().securityContext).toEqual(
        expect.objectContaining({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } }),
      );
      // Graceful shutdown (SHUTDOWN_TIMEOUT_MS 10 s + the preStop pause) fits the grace period.
      expect(pod().terminationGracePeriodSeconds).toBeGreaterThanOrEqual(15);
    });

    it('has a PodDisruptionBudget and a Service selecting its pods', () => {
      const labels = deployment().spec.template.metadata.labels;
      const pdb = find('PodDisruptionBudget', name);
      expect(pdb).toBeDefined();
      expect(labels).toEqual(expect.objectContaining(pdb!.spec.selector.matchLabels));
      const service = find('Service', name)!;
      expect(labels).toEqual(expect.objectContaining(service.spec.selector));
      expect(service.spec.ports).toEqual([expect.objectContaining({ port, targetPort: 'http' })]);
    });

    it('gets every DESIGN §2 variable it reads from the ConfigMap or a Secret, and secrets only from Secrets', () => {
      const declared = declaredVariables(env);
      const c = container();
      const configMaps = c.envFrom.map((f: { configMapRef?: { name: string } }) => f.configMapRef?.name).filter(Boolean);
      expect(c.envFrom.filter((f: { secretRef?: unknown }) => f.secretRef)).toEqual([]);
      const fromConfig = new Set(configMaps.flatMap((n: string) => Object.keys(find('ConfigMap', n)!.data)));
      const env_ = new Map<string, { value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string; optional?: boolean } } }>(
        c.env.map((e: { name: string }) => [e.name, e]),
      );
      for (const variable of DESIGN_VARIABLES.filter((v) => declared.has(v))) {
        const provided = fromConfig.has(variable) || env_.has(variable) || (variable === 'PORT' && portVar === 'PORT');
        expect({ variable, provided }).toEqual({ variable, provided: true });
        if (SECRET_VARIABLES.includes(variable)) {
          expect({ variable, secret: env_.get(variable)?.valueFrom?.secretKeyRef?.name }).toEqual({ variable, secret: expect.any(String) });
          expect(fromConfig.has(variable)).toBe(false);
        }
      }
      // No typos: every variable set on the container is one the service reads (NODE_OPTIONS: Node itself; GLIBC_TUNABLES: the C library).
      const runtime = new Set(['NODE_OPTIONS', 'GLIBC_TUNABLES']);
      for (const variable of env_.keys()) expect({ variable, declared: declared.has(variable) || runtime.has(variable) }).toEqual({ variable, declared: true });
      // Every referenced secret exists in the rendered output, or is the one the overlay documents.
      for (const entry of env_.values()) {
        const ref = entry.valueFrom?.secretKeyRef;
        if (!ref) continue;
        // prod: made by the secret manager (overlays/prod/README.md), one PostgreSQL role per service.
        const external = overlay === 'prod' ? ['weave-secrets', 'weave-nats', `weave-db-${name}`] : [];
        const generated = find('Secret', ref.name);
        const fromCnpg = ref.name.endsWith('-app') && find('Cluster', ref.name.slice(0, -4));
        expect({ secret: ref.name, known: Boolean(generated || fromCnpg || external.includes(ref.name)) }).toEqual({ secret: ref.name, known: true });
        if (generated && !ref.optional) expect(Object.keys(generated.data ?? {})).toContain(ref.key);
      }
    });
  });

  it('asks for as many stream replicas as the NATS it runs on has servers (prod: the Helm cluster of three)', () => {
    const config = find('ConfigMap', objects().find((o) => o.kind === 'ConfigMap' && o.metadata.name.startsWith('weave-config'))!.metadata.name)!.data as Record<string, string>;
    const servers = overlay === 'prod' ? YAML.parse(readFileSync(join(root, 'deploy/k8s/overlays/prod/nats-values.yaml'), 'utf8')).config.cluster.replicas : find('StatefulSet', 'nats')!.spec.replicas;
    expect(config.NATS_STREAM_REPLICAS).toBe(String(servers));
    const pod = withMountedFiles(config, find('Deployment', 'reporting-projection')!);
    const redisUrl = overlay === 'prod' ? { REDIS_URL: 'rediss://weave:x@redis:6379' } : {};
    expect(loadEnv(ReportingProjectionEnv, { ...pod, ...redisUrl, NATS_PASSWORD: 'x', NATS_USER: 'reporting-projection' }).NATS_STREAM_REPLICAS).toBe(servers);
  });

  it('runs reporting-projection with the V8 flags it is tuned for (REPORTING_PROJECTION_NODE_FLAGS, as the launcher does)', () => {
    const container = find('Deployment', 'reporting-projection')!.spec.template.spec.containers[0];
    const nodeOptions = (container.env as { name: string; value?: string }[]).find((e) => e.name === 'NODE_OPTIONS');
    expect(nodeOptions?.value).toBe(REPORTING_PROJECTION_NODE_FLAGS.join(' '));
  });

  it('starts reporting-projection with its process environment (REPORTING_PROJECTION_PROCESS_ENV, as the launcher does)', () => {
    const container = find('Deployment', 'reporting-projection')!.spec.template.spec.containers[0];
    const env = container.env as { name: string; value?: string }[];
    for (const [name, value] of Object.entries(REPORTING_PROJECTION_PROCESS_ENV)) {
      expect({ name, value: env.find((e) => e.name === name)?.value }).toEqual({ name, value });
    }
  });

  it('every ConfigMap key is a variable some service reads', () => {
    const known = new Set(Object.values(SERVICES).flatMap(({ env }) => [...declaredVariables(env)]));
    for (const key of Object.keys(find('ConfigMap', objects().find((o) => o.kind === 'ConfigMap' && o.metadata.name.startsWith('weave-config'))!.metadata.name)!.data)) {
      expect({ key, known: known.has(key) }).toEqual({ key, known: true });
    }
  });

  it('exposes only the gateway, through a TLS Ingress', () => {
    const ingresses = objects().filter((o) => o.kind === 'Ingress');
    expect(ingresses).toHaveLength(1);
    const { spec } = ingresses[0];
    const hosts = spec.rules.map((r: { host: string }) => r.host);
    expect(spec.tls[0].secretName).toBeDefined();
    expect(spec.tls.flatMap((t: { hosts: string[] }) => t.hosts)).toEqual(expect.arrayContaining(hosts));
    const backends = spec.rules.flatMap((r: { http: { paths: { backend: { service: { name: string } } }[] } }) => r.http.paths.map((p) => p.backend.service.name));
    expect(new Set(backends)).toEqual(new Set(['gateway']));
    // The public API only: health and metrics are never routed from the internet.
    const paths = spec.rules.flatMap((r: { http: { paths: { path: string; pathType: string }[] } }) => r.http.paths.map((p) => `${p.pathType} ${p.path}`));
    expect(paths.sort()).toEqual(['Prefix /agent', 'Prefix /agent-payouts', 'Prefix /dashboard', 'Prefix /docs', 'Prefix /track']);
    for (const service of objects().filter((o) => o.kind === 'Service')) expect(service.spec.type ?? 'ClusterIP').toBe('ClusterIP');
  });

  it('autoscales gateway, payouts-read, timezone-settings and recommendations with HPAs, and nothing else', () => {
    const hpas = objects().filter((o) => o.kind === 'HorizontalPodAutoscaler');
    expect(hpas.map((h) => h.spec.scaleTargetRef.name).sort()).toEqual([...HPA_SERVICES].sort());
    for (const hpa of hpas) {
      expect(find('Deployment', hpa.spec.scaleTargetRef.name)).toBeDefined();
      expect(hpa.spec.minReplicas).toBeLessThanOrEqual(hpa.spec.maxReplicas);
      // CPU utilisation needs CPU requests on the target.
      expect(find('Deployment', hpa.spec.scaleTargetRef.name)!.spec.template.spec.containers[0].resources.requests.cpu).toBeDefined();
    }
  });

  it('scales reporting-projection with KEDA on the lag of its JetStream consumer and on CPU (request side)', () => {
    const scaled = objects().filter((o) => o.kind === 'ScaledObject');
    expect(scaled).toHaveLength(1);
    const { spec } = scaled[0];
    expect(spec.scaleTargetRef).toEqual(expect.objectContaining({ kind: 'Deployment', name: 'reporting-projection' }));
    expect(find('Deployment', 'reporting-projection')).toBeDefined();
    const lag = spec.triggers.find((t: { type: string }) => t.type === 'nats-jetstream');
    expect(lag.metadata).toEqual(expect.objectContaining({ stream: Streams.events, consumer: Durables.reportingProjection }));
    expect(Number(lag.metadata.lagThreshold)).toBeGreaterThan(0);
    expect(spec.triggers.map((t: { type: string }) => t.type)).toContain('cpu');
  });

  describe('NetworkPolicies', () => {
    const SERVICE_NAMES = Object.keys(SERVICES);
    const policies = () => objects().filter((o) => o.kind === 'NetworkPolicy');
    const serviceLabels = (name: string) => find('Deployment', name)!.spec.template.metadata.labels as Record<string, string>;
    const BACKEND_PORTS = ['UDP/53', 'TCP/53', 'TCP/4222', 'TCP/5432', 'TCP/6379'];

    it('deny everything in the namespace by default', () => {
      const deny = policies().filter((p) => Object.keys(p.spec.podSelector).length === 0);
      expect(deny).toHaveLength(1);
      expect(deny[0].spec).toEqual({ podSelector: {}, policyTypes: ['Ingress', 'Egress'] });
    });

    it.each(Object.keys(SERVICES))('%s reaches DNS, NATS, PostgreSQL and Redis only (the gateway also HTTPS outside the cluster)', (name) => {
      const egress = rulesFor(objects(), serviceLabels(name), 'egress');
      const ports = new Set(egress.flatMap((r) => portsOf(r)));
      expect([...ports].sort()).toEqual([...BACKEND_PORTS, ...(name === 'gateway' ? ['TCP/443'] : [])].sort());
      for (const rule of egress) {
        // Every rule names its peers and its ports: never "anything, anywhere".
        expect(rule.to?.length ?? 0).toBeGreaterThan(0);
        expect(rule.ports?.length ?? 0).toBeGreaterThan(0);
        for (const peer of rule.to ?? []) {
          if (peer.ipBlock) {
            // Only the gateway's identity provider: public addresses, none of the cluster's private ranges.
            expect(name).toBe('gateway');
            expect(portsOf(rule)).toEqual(['TCP/443']);
            expect(peer.ipBlock.except).toEqual(expect.arrayContaining(['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16']));
          } else {
            expect(peer.podSelector && Object.keys(peer.podSelector).length > 0).toBe(true);
          }
        }
      }
    });

    it.each(Object.keys(SERVICES))('%s takes connections only from the Ingress controller (gateway) and Prometheus', (name) => {
      const pod = podsOf(objects()).find((p) => p.name === name)!;
      const ingress = rulesFor(objects(), pod.labels, 'ingress');
      const sources = ingress.flatMap((r) => (r.from ?? []).map((peer) => `${peer.namespaceSelector?.matchLabels?.['kubernetes.io/metadata.name']}/${peer.podSelector?.matchLabels?.['app.kubernetes.io/name']} ${portsOf(r, pod.ports).join(',')}`));
      const metrics = `monitoring/prometheus TCP/${Number(find('Deployment', name)!.spec.template.metadata.annotations['prometheus.io/port'])}`;
      expect(sources.sort()).toEqual((name === 'gateway' ? [`ingress-nginx/ingress-nginx TCP/${SERVICES.gateway.port}`, metrics] : [metrics]).sort());
    });

    it('lets the services, and nothing else of the namespace, reach the servers deployed beside them', () => {
      const servers = podsOf(objects()).filter((p) => !SERVICE_NAMES.includes(p.name));
      expect(servers.map((p) => p.name).sort()).toEqual(overlay === 'dev' ? ['nats', 'redis'] : ['redis']);
      const port = { nats: 'TCP/4222', redis: 'TCP/6379' } as Record<string, string>;
      for (const server of servers) {
        const ingress = rulesFor(objects(), server.labels, 'ingress');
        const fromServices = ingress.filter((r) => (r.from ?? []).some((peer) => !peer.namespaceSelector && SERVICE_NAMES.every((n) => selects(peer.podSelector, serviceLabels(n)))));
        expect(fromServices.flatMap((r) => portsOf(r, server.ports))).toEqual([port[server.name]]);
        // No peer that would take in pods which are not services (other than KEDA reading NATS's monitoring port).
        for (const rule of ingress) {
          for (const peer of rule.from ?? []) {
            if (peer.namespaceSelector) expect({ server: server.name, from: peer.namespaceSelector, ports: portsOf(rule) }).toEqual({ server: 'nats', from: { matchLabels: { 'kubernetes.io/metadata.name': 'keda' } }, ports: ['TCP/8222'] });
            else expect(selects(peer.podSelector, server.labels)).toBe(false);
          }
        }
        // They call nobody.
        expect(rulesFor(objects(), server.labels, 'egress')).toEqual([]);
      }
      // PostgreSQL's pods (prod: the CloudNativePG instances) take the services on 5432.
      const postgresLabels: Record<string, string> = overlay === 'prod' ? { 'cnpg.io/cluster': 'weave-db' } : { 'app.kubernetes.io/name': 'postgresql' };
      const fromServices = rulesFor(objects(), postgresLabels, 'ingress').filter((r) => (r.from ?? []).some((peer) => SERVICE_NAMES.every((n) => selects(peer.podSelector, serviceLabels(n)))));
      expect(fromServices.flatMap((r) => portsOf(r))).toEqual(['TCP/5432']);
      for (const name of SERVICE_NAMES) {
        const toPostgres = rulesFor(objects(), serviceLabels(name), 'egress').filter((r) => (r.to ?? []).some((peer) => selects(peer.podSelector, postgresLabels)));
        expect({ name, ports: toPostgres.flatMap((r) => portsOf(r)) }).toEqual({ name, ports: ['TCP/5432'] });
      }
    });
  });

  describe('tracking secret and client addresses (issue 12)', () => {
    const gatewayContainer = () => find('Deployment', 'gateway')!.spec.template.spec.containers[0];
    const config = () => find('ConfigMap', objects().find((o) => o.kind === 'ConfigMap' && o.metadata.name.startsWith('weave-config'))!.metadata.name)!.data as Record<string, string>;
    const secretRef = () =>
      (gatewayContainer().env as { name: string; valueFrom?: { secretKeyRef?: { name: string; key: string; optional?: boolean } } }[]).find((e) => e.name === 'TRACKING_SIGNING_SECRET')!.valueFrom!.secretKeyRef!;
    /** The gateway's configuration as the pod would load it: the ConfigMap, the plain env entries and the given secrets. */
    const gatewayEnv = (secrets: Record<string, string>) => {
      const plain = Object.fromEntries((gatewayContainer().env as { name: string; value?: string }[]).filter((e) => e.value !== undefined).map((e) => [e.name, e.value!]));
      const redisUrl = overlay === 'prod' ? { REDIS_URL: 'rediss://weave:x@redis:6379' } : {};
      return loadEnv(GatewayEnv, { ...withMountedFiles(config(), find('Deployment', 'gateway')!), ...plain, ...redisUrl, NATS_PASSWORD: 'nats-password-for-the-check', ...secrets });
    };

    it('publishes no tracking secret in any generated Secret', () => {
      for (const secret of objects().filter((o) => o.kind === 'Secret')) {
        expect({ secret: secret.metadata.name, keys: Object.keys(secret.data ?? {}) }).toEqual({ secret: secret.metadata.name, keys: expect.not.arrayContaining(['TRACKING_SIGNING_SECRET', 'TRACKING_SIGNING_SECRET_PREVIOUS']) });
      }
    });

    if (overlay === 'prod') {
      it('refuses to start the gateway without TRACKING_SIGNING_SECRET: a required Secret key, and TRACKING_SIGNING_SECRET_REQUIRED', () => {
        expect(secretRef()).toEqual({ name: 'weave-secrets', key: 'TRACKING_SIGNING_SECRET', optional: false });
        expect(config().TRACKING_SIGNING_SECRET_REQUIRED).toBe('true');
        let refusal: unknown;
        try {
          gatewayEnv({});
        } catch (error) {
          refusal = error;
        }
        expect(refusal).toBeInstanceOf(ConfigError);
        expect((refusal as ConfigError).problems.join('\n')).toMatch(/^TRACKING_SIGNING_SECRET: /m);
        expect(gatewayEnv({ TRACKING_SIGNING_SECRET: 'a-random-production-secret-0123456789' }).TRACKING_SIGNING_SECRET_REQUIRED).toBe(true);
      });
    } else {
      it('lets the gateway generate its tracking secret (an optional Secret key, not required)', () => {
        expect(secretRef().optional).toBe(true);
        const env = gatewayEnv({});
        expect(env.TRACKING_SIGNING_SECRET).toBeUndefined();
        expect(env.TRACKING_SIGNING_SECRET_REQUIRED).toBe(false);
      });
    }

    it('names the proxies whose X-Forwarded-For is believed: CIDR ranges, never everything', () => {
      const proxies = cidrList(config().TRUSTED_PROXIES);
      expect(proxies.length).toBeGreaterThan(0);
      expect(gatewayEnv({ TRACKING_SIGNING_SECRET: 'a-random-production-secret-0123456789' }).TRUSTED_PROXIES).toBe(config().TRUSTED_PROXIES);
      for (const range of proxies) expect(range).not.toMatch(/^(0\.0\.0\.0|::)\/0$/);
    });
  });

  it('connects each service to NATS as its own user (DESIGN §8), its password from a Secret', () => {
    for (const name of Object.keys(SERVICES)) {
      const env = find('Deployment', name)!.spec.template.spec.containers[0].env as { name: string; value?: string; valueFrom?: { secretKeyRef?: { key: string } } }[];
      expect(env.find((e) => e.name === 'NATS_USER')?.value).toBe(name);
      expect(env.find((e) => e.name === 'NATS_PASSWORD')?.valueFrom?.secretKeyRef?.key).toBe(`NATS_PASSWORD_${name.toUpperCase().replace(/-/g, '_')}`);
    }
  });

  if (overlay === 'prod') {
    it('runs PostgreSQL as a CloudNativePG Cluster of three instances with the weave database', () => {
      const cluster = objects().find((o) => o.kind === 'Cluster')!;
      expect(cluster.apiVersion).toBe('postgresql.cnpg.io/v1');
      expect(cluster.spec.instances).toBe(3);
      expect(cluster.spec.bootstrap.initdb.database).toBe('weave');
      expect(find('StatefulSet', 'redis')).toBeDefined();
      expect(find('Service', 'redis')).toBeDefined();
    });

    it('gives each service its own PostgreSQL role, which owns its schema, and its own DATABASE_URL Secret', () => {
      const cluster = objects().find((o) => o.kind === 'Cluster')!;
      const roles = new Map((cluster.spec.managed.roles as { name: string; login: boolean; passwordSecret: { name: string } }[]).map((r) => [r.name, r]));
      const database = objects().find((o) => o.kind === 'Database')!;
      expect(database.spec).toEqual(expect.objectContaining({ name: cluster.spec.bootstrap.initdb.database, cluster: { name: cluster.metadata.name } }));
      const schemaOwners = Object.fromEntries((database.spec.schemas as { name: string; owner: string }[]).map((s) => [s.name, s.owner]));
      const expected: Record<string, [string, string]> = {
        gateway: ['gateway', 'identity'],
        'reporting-projection': ['reporting_projection', 'reporting'],
        'payouts-read': ['payouts_read', 'payouts'],
        'timezone-settings': ['timezone_settings', 'timezone_settings'],
        recommendations: ['recommendations', 'recommendations'],
      };
      const sql = readFileSync(join(root, 'deploy/postgres/least-privilege.sql'), 'utf8');
      for (const [service, [role, schema]] of Object.entries(expected)) {
        expect(roles.get(role)).toEqual(expect.objectContaining({ login: true, passwordSecret: { name: `weave-db-${service}` } }));
        expect(schemaOwners[schema]).toBe(role);
        // The same pairs as deploy/postgres/least-privilege.sql, for servers outside Kubernetes.
        expect(sql).toContain(`('${role}', '${schema}')`);
        const env = find('Deployment', service)!.spec.template.spec.containers[0].env as { name: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }[];
        expect(env.find((e) => e.name === 'DATABASE_URL')?.valueFrom?.secretKeyRef).toEqual({ name: `weave-db-${service}`, key: 'uri' });
      }
      expect(roles.size).toBe(Object.keys(expected).length);
    });

    it('runs Redis with an ACL user and no default user, its password from a Secret', () => {
      const redis = find('StatefulSet', 'redis')!.spec.template.spec.containers[0];
      const script = redis.args.join(' ');
      expect(script).toContain('user default off');
      expect(script).toMatch(/user weave on >%s ~weave:\* &weave:\* \+@all -@dangerous \+info/);
      expect(script).toContain('exec redis-server --aclfile');
      expect(redis.env.find((e: { name: string }) => e.name === 'REDISCLI_AUTH').valueFrom.secretKeyRef).toEqual({ name: 'weave-secrets', key: 'REDIS_PASSWORD' });
      expect(redis.readinessProbe.exec.command.join(' ')).toContain('--user weave ping');
    });

    it('has production autoscaling floors of at least two replicas', () => {
      for (const hpa of objects().filter((o) => o.kind === 'HorizontalPodAutoscaler')) expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(2);
      expect(objects().find((o) => o.kind === 'ScaledObject')!.spec.minReplicaCount).toBeGreaterThanOrEqual(2);
    });

    it('documents NATS through the official Helm chart: JetStream cluster of 3, file storage, sync_interval always, 2.12.x', () => {
      const values = YAML.parse(readFileSync(join(root, 'deploy/k8s/overlays/prod/nats-values.yaml'), 'utf8'));
      expect(values.config.cluster).toEqual(expect.objectContaining({ enabled: true, replicas: 3 }));
      expect(values.config.jetstream.enabled).toBe(true);
      expect(values.config.jetstream.fileStore.enabled).toBe(true);
      expect(values.config.jetstream.memoryStore?.enabled ?? false).toBe(false);
      expect(values.config.merge.jetstream.sync_interval).toBe('always');
      expect(values.container.image.tag).toMatch(/^2\.12\.\d+/);
      const readme = readFileSync(join(root, 'deploy/k8s/overlays/prod/README.md'), 'utf8');
      for (const word of ['nats-values.yaml', 'CloudNativePG', 'Redis', 'sync_interval']) expect(readme).toContain(word);
    });
  }
});

// ───────────── Production: internal traffic over TLS, namespace nats ─────────────

/** Whether a NetworkPolicy peer (of a policy in `policyNamespace`) takes in a pod of `namespace` with `labels`. */
function peerAdmits(peer: Peer, policyNamespace: string, namespace: string, labels: Record<string, string>): boolean {
  if (peer.ipBlock) return false; // no pod rule in these policies uses addresses
  const namespaceOk = peer.namespaceSelector ? selects(peer.namespaceSelector, { 'kubernetes.io/metadata.name': namespace }) || Object.keys(peer.namespaceSelector).length === 0 : namespace === policyNamespace;
  const podOk = peer.podSelector ? Object.keys(peer.podSelector).length === 0 || selects(peer.podSelector, labels) : true;
  return namespaceOk && podOk;
}

/** Whether a DNS name (a wildcard `*.` covers one label) covers `host`. */
function certificateCovers(dnsNames: string[], host: string): boolean {
  return dnsNames.some((name) => (name.startsWith('*.') ? host.split('.').slice(1).join('.') === name.slice(2) : name === host));
}

describe('deploy/k8s/overlays/prod: internal traffic over TLS', () => {
  const prod = () => rendered.get('prod')!;
  const nats = () => rendered.get('prod/nats')!;
  const pki = () => rendered.get('prod/pki')!;
  const find = (objects: K8sObject[], kind: string, name: string) => objects.find((o) => o.kind === kind && o.metadata.name === name);
  const config = () => prod().find((o) => o.kind === 'ConfigMap' && o.metadata.name.startsWith('weave-config'))!.data as Record<string, string>;
  const values = () => YAML.parse(readFileSync(join(root, 'deploy/k8s/overlays/prod/nats-values.yaml'), 'utf8'));
  /** The ClusterIssuer that signs with the internal CA, and that CA's Certificate. */
  const internalCa = () => {
    const issuer = find(pki(), 'ClusterIssuer', 'weave-internal-ca')!;
    const ca = pki().find((o) => o.kind === 'Certificate' && o.spec.secretName === issuer.spec.ca.secretName)!;
    return { issuer, ca };
  };
  /** The Certificate that makes Secret `secretName` in `objects`, checked to be signed by the internal CA. */
  const certificateFor = (objects: K8sObject[], secretName: string) => {
    const certificate = objects.find((o) => o.kind === 'Certificate' && o.spec.secretName === secretName);
    expect({ secretName, issuer: certificate?.spec.issuerRef }).toEqual({ secretName, issuer: { group: 'cert-manager.io', kind: 'ClusterIssuer', name: internalCa().issuer.metadata.name } });
    return certificate!;
  };

  it('the CA part and the nats part render valid objects', () => {
    for (const part of PROD_PARTS) expect({ part, problems: schemaProblems(rendered.get(part)!) }).toEqual({ part, problems: [] });
    for (const object of nats()) if (object.kind !== 'Namespace') expect({ object: `${object.kind}/${object.metadata.name}`, namespace: object.metadata.namespace }).toEqual({ object: `${object.kind}/${object.metadata.name}`, namespace: 'nats' });
  });

  it('has an internal CA: a self-signed root kept in cert-manager\'s namespace, and a CA ClusterIssuer using it', () => {
    const { ca } = internalCa();
    expect(ca.metadata.namespace).toBe('cert-manager');
    expect(ca.spec.isCA).toBe(true);
    const root = find(pki(), 'ClusterIssuer', ca.spec.issuerRef.name)!;
    expect(root.spec).toEqual({ selfSigned: {} });
  });

  it('connects every service to NATS, PostgreSQL and Redis over TLS, verified against the internal CA it mounts', () => {
    const data = config();
    for (const server of natsServers(data.NATS_URL)) expect(server).toMatch(/^tls:\/\//);
    expect(data.DATABASE_SSL_MODE).toBe('verify-full');
    for (const name of ['NATS_TLS_CA_FILE', 'DATABASE_SSL_ROOT_CERT', 'REDIS_TLS_CA_FILE']) expect({ name, set: typeof data[name] }).toEqual({ name, set: 'string' });
    // The documented REDIS_URL (README.md) is rediss://.
    const readme = readFileSync(join(root, 'deploy/k8s/overlays/prod/README.md'), 'utf8');
    expect(readme).toMatch(/`REDIS_URL` \| `rediss:\/\/weave:<REDIS_PASSWORD>@redis:6379`/);
    for (const [name, { env }] of Object.entries(SERVICES)) {
      const deployment = find(prod(), 'Deployment', name)!;
      // Every file setting is the ca.crt of the internal CA's Certificate in this namespace.
      for (const setting of FILE_SETTINGS.filter((n) => data[n] !== undefined)) {
        const file = mountedSecretFile(deployment, data[setting]);
        expect({ name, setting, file }).toEqual({ name, setting, file: { secret: 'weave-services-tls', key: 'ca.crt' } });
      }
      certificateFor(prod(), 'weave-services-tls');
      // Only the CA reaches the pod: the volume projects ca.crt and nothing else of the Secret.
      const volume = deployment.spec.template.spec.volumes.find((v: { secret?: { secretName: string } }) => v.secret?.secretName === 'weave-services-tls');
      expect(volume.secret.items).toEqual([{ key: 'ca.crt', path: 'ca.crt' }]);
      // As the service loads it: TLS options on all three connections.
      const loaded = loadEnv(env as new () => object, { ...withMountedFiles(data, deployment), REDIS_URL: 'rediss://weave:x@redis:6379', NATS_USER: name, NATS_PASSWORD: 'x', TRACKING_SIGNING_SECRET: 'a-random-production-secret-0123456789' }) as Parameters<typeof databaseUrl>[0] &
        Parameters<typeof natsTls>[0] & { REDIS_TLS_CA_FILE?: string; REDIS_URL: string };
      expect(natsTls(loaded)).toEqual({ caFile: fileStandIn() });
      expect(redisTls(loaded.REDIS_URL, loaded.REDIS_TLS_CA_FILE)).toEqual({ ca: expect.any(Buffer) });
      const url = new URL(databaseUrl({ ...loaded, DATABASE_URL: 'postgres://gateway:pw@weave-db-rw:5432/weave?sslmode=disable' }));
      expect(Object.fromEntries(url.searchParams)).toEqual({ sslmode: 'verify-full', sslrootcert: fileStandIn() });
    }
  });

  it('runs PostgreSQL with a certificate of the internal CA for the host the services use, and refuses plain connections', () => {
    const cluster = prod().find((o) => o.kind === 'Cluster')!;
    expect(cluster.spec.certificates.serverTLSSecret).toBe(cluster.spec.certificates.serverCASecret);
    const certificate = certificateFor(prod(), cluster.spec.certificates.serverTLSSecret);
    expect(certificate.spec.usages).toContain('server auth');
    // The services' DATABASE_URL host (README.md: weave-db-rw), as verify-full checks it.
    expect(certificateCovers(certificate.spec.dnsNames, `${cluster.metadata.name}-rw`)).toBe(true);
    expect(cluster.spec.postgresql.pg_hba).toContain('hostnossl all all all reject');
  });

  it('runs Redis on TLS only, with a certificate of the internal CA for the host in REDIS_URL', () => {
    const redis = find(prod(), 'StatefulSet', 'redis')!;
    const container = redis.spec.template.spec.containers[0];
    const script = container.args.join(' ');
    expect(script).toMatch(/--port 0 --tls-port 6379 /);
    const file = (flag: string) => script.match(new RegExp(`${flag} (\\S+)`))![1];
    const volume = redis.spec.template.spec.volumes.find((v: { name: string }) => v.name === container.volumeMounts.find((m: { mountPath: string }) => m.mountPath === dirname(file('--tls-cert-file'))).name);
    certificateFor(prod(), volume.secret.secretName);
    expect([file('--tls-cert-file'), file('--tls-key-file'), file('--tls-ca-cert-file')].map((f) => f.split('/').pop())).toEqual(['tls.crt', 'tls.key', 'ca.crt']);
    expect(certificateCovers(find(prod(), 'Certificate', 'redis-tls')!.spec.dnsNames, 'redis')).toBe(true);
    expect(container.readinessProbe.exec.command.join(' ')).toMatch(/redis-cli --tls --cacert \/tls\/ca\.crt .*--user weave ping/);
  });

  it('runs NATS with TLS for clients and routes, certificates of the internal CA, and route authorization by certificate', () => {
    const v = values();
    expect(v.config.nats.tls).toEqual(expect.objectContaining({ enabled: true, secretName: 'nats-server-tls' }));
    const server = certificateFor(nats(), v.config.nats.tls.secretName);
    const natsHost = new URL(natsServers(config().NATS_URL)[0].replace(/^tls:/, 'https:')).hostname;
    expect(certificateCovers(server.spec.dnsNames, natsHost)).toBe(true);
    expect(v.config.cluster.tls).toEqual(expect.objectContaining({ enabled: true, secretName: 'nats-route-tls' }));
    const route = certificateFor(nats(), v.config.cluster.tls.secretName);
    expect(route.spec.usages).toEqual(expect.arrayContaining(['server auth', 'client auth']));
    // The chart's route URLs (routeURLs.useFQDN): nats-<i>.nats-headless.nats.svc.cluster.local.
    expect(v.config.cluster.routeURLs).toEqual(expect.objectContaining({ useFQDN: true, k8sClusterDomain: 'cluster.local' }));
    for (let i = 0; i < v.config.cluster.replicas; i += 1) expect(certificateCovers(route.spec.dnsNames, `nats-${i}.nats-headless.nats.svc.cluster.local`)).toBe(true);
    // A route is admitted only with a certificate of the CA whose subject is the route user.
    expect(v.config.cluster.tls.merge.verify_and_map).toBe(true);
    expect(v.config.cluster.tls.merge.ca_file).toBe(`${v.config.cluster.tls.dir}/ca.crt`);
    expect(v.config.cluster.merge.authorization).toEqual({ user: `CN=${route.spec.commonName}` });
    expect(v.config.cluster.routeURLs.password).toBeUndefined();
    expect(v.tlsCA).toEqual(expect.objectContaining({ enabled: true, secretName: 'nats-server-tls', key: 'ca.crt' }));
  });

  it('lets only the services (4222), the NATS peers (6222), Prometheus and KEDA (8222) reach the NATS servers', () => {
    const policies = nats().filter((o) => o.kind === 'NetworkPolicy');
    const deny = policies.filter((p) => Object.keys(p.spec.podSelector).length === 0);
    expect(deny.map((p) => p.spec)).toEqual([{ podSelector: {}, policyTypes: ['Ingress', 'Egress'] }]);
    const serverLabels = { 'app.kubernetes.io/name': 'nats', 'app.kubernetes.io/instance': 'nats', 'app.kubernetes.io/component': 'nats' };
    const boxLabels = { ...serverLabels, 'app.kubernetes.io/component': 'nats-box' };
    const ingress = rulesFor(policies, serverLabels, 'ingress');
    const allowed = (namespace: string, labels: Record<string, string>) =>
      [...new Set(ingress.filter((r) => (r.from ?? []).some((peer) => peerAdmits(peer, 'nats', namespace, labels))).flatMap((r) => portsOf(r)))].sort();
    const serviceLabels = (name: string) => find(prod(), 'Deployment', name)!.spec.template.metadata.labels as Record<string, string>;
    for (const name of Object.keys(SERVICES)) expect({ name, ports: allowed('weave', serviceLabels(name)) }).toEqual({ name, ports: ['TCP/4222'] });
    const cases: [string, string, Record<string, string>, string[]][] = [
      ['a NATS peer', 'nats', serverLabels, ['TCP/6222']],
      ['nats-box', 'nats', boxLabels, ['TCP/4222']],
      ['Prometheus', 'monitoring', { 'app.kubernetes.io/name': 'prometheus' }, ['TCP/7777', 'TCP/8222']],
      ['KEDA', 'keda', { 'app.kubernetes.io/name': 'keda-operator' }, ['TCP/8222']],
      ['Redis beside the services', 'weave', find(prod(), 'StatefulSet', 'redis')!.spec.template.metadata.labels, []],
      ['a service\'s name in another namespace', 'default', serviceLabels('gateway'), []],
      ['anything in the monitoring namespace', 'monitoring', { 'app.kubernetes.io/name': 'grafana' }, []],
      ['a pod of the nats namespace', 'nats', { app: 'debug' }, []],
    ];
    for (const [who, namespace, labels, ports] of cases) expect({ who, ports: allowed(namespace, labels) }).toEqual({ who, ports });
    // The servers call each other on the route port, and DNS; nothing else.
    const egress = rulesFor(policies, serverLabels, 'egress');
    expect([...new Set(egress.flatMap((r) => portsOf(r)))].sort()).toEqual(['TCP/53', 'TCP/6222', 'UDP/53']);
    for (const rule of egress) for (const peer of rule.to ?? []) expect(peer.ipBlock).toBeUndefined();
    // The services' own egress reaches the NATS servers on 4222 only (../../base).
    for (const name of Object.keys(SERVICES)) {
      const toNats = rulesFor(prod(), serviceLabels(name), 'egress').filter((r) => (r.to ?? []).some((peer) => peerAdmits(peer, 'weave', 'nats', serverLabels)));
      expect({ name, ports: toNats.flatMap((r) => portsOf(r)) }).toEqual({ name, ports: ['TCP/4222'] });
    }
  });
});
