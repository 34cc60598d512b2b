import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';
import { Durables, QueueGroups, RpcSubjects, Streams } from '#libs/contracts';

/**
 * deploy/nats/users.conf is the one definition of the NATS users (DESIGN §8); everything that
 * runs a NATS server or a service takes it or its passwords from the same names. What the
 * permissions allow and refuse is tested on the real server (test/integration/nats-identities).
 */

const root = process.cwd();
const read = (path: string) => readFileSync(join(root, path), 'utf8');
const USERS = ['gateway', 'reporting-projection', 'payouts-read', 'timezone-settings', 'recommendations', 'ops', 'producer'];
const variable = (user: string) => `NATS_PASSWORD_${user.toUpperCase().replace(/-/g, '_')}`;
const usersConf = read('deploy/nats/users.conf');

describe('deploy/nats/users.conf', () => {
  it('defines exactly the users of DESIGN §8, each with its password variable', () => {
    const users = [...usersConf.matchAll(/^\s*user: ([\w-]+)\s*\n\s*password: \$(\w+)\s*$/gm)].map((m) => [m[1], m[2]]);
    expect(users).toEqual(USERS.map((u) => [u, variable(u)]));
    expect(read('deploy/nats/nats-server.conf')).toMatch(/^include users\.conf$/m);
  });

  it('names every stream, durable consumer and request area the services use', () => {
    for (const stream of Object.values(Streams)) expect(usersConf).toContain(`$JS.API.STREAM.CREATE.${stream}`);
    for (const durable of Object.values(Durables)) expect(usersConf).toMatch(new RegExp(`\\$JS\\.API\\.CONSUMER\\.MSG\\.NEXT\\.\\w+\\.${durable}"`));
    // Each request subject falls under an area the gateway may request and its owner may serve.
    const owners: Record<string, string> = { reporting: 'reporting-projection', payouts: 'payouts-read', timezone: 'timezone-settings', recommendations: 'recommendations' };
    for (const subject of Object.values(RpcSubjects)) {
      const area = `${subject.split('.')[0]}.v1.>`;
      expect({ subject, owner: owners[subject.split('.')[0]] }).toEqual({ subject, owner: expect.any(String) });
      expect(usersConf).toContain(`"${area}"`);
      expect(usersConf).toContain(`subscribe: { allow: ["_INBOX_${owners[subject.split('.')[0]]}.>", "${area}"] }`);
    }
    expect(Object.values(QueueGroups).sort()).toEqual(Object.values(owners).sort());
  });

  it('is what the production Helm values include, byte for byte, with every password from a Secret', () => {
    const values = YAML.parse(read('deploy/k8s/overlays/prod/nats-values.yaml'));
    expect(values.configMap.merge.data['users.conf']).toBe(usersConf);
    expect(Object.entries(values.config.merge).find(([key]) => key.endsWith('$include'))?.[1]).toBe('users.conf');
    for (const user of USERS) {
      expect(values.container.env[variable(user)]).toEqual({ valueFrom: { secretKeyRef: { name: 'nats-users', key: variable(user) } } });
    }
  });

  it('is what the development overlay’s NATS runs, with every password in its generated Secret', () => {
    const objects = YAML.parseAllDocuments(execFileSync(process.env.KUBECTL || 'kubectl', ['kustomize', join(root, 'deploy/k8s/overlays/dev')], { encoding: 'utf8' }))
      .map((d) => d.toJS())
      .filter(Boolean);
    const config = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name.startsWith('nats-config'));
    expect(config.data['users.conf']).toBe(usersConf);
    expect(config.data['nats-server.conf']).toBe(read('deploy/nats/nats-server.conf'));
    const secret = objects.find((o) => o.kind === 'Secret' && o.metadata.name.startsWith('weave-nats'));
    const nats = objects.find((o) => o.kind === 'StatefulSet' && o.metadata.name === 'nats').spec.template.spec.containers[0];
    expect(nats.envFrom).toEqual([{ secretRef: { name: secret.metadata.name } }]);
    for (const user of USERS) {
      const password = Buffer.from(secret.data[variable(user)], 'base64').toString();
      // NATS parses the variable as a configuration value: a letter first, then no delimiters.
      expect({ user, password }).toEqual({ user, password: expect.stringMatching(/^[A-Za-z][A-Za-z0-9_-]*$/) });
    }
  });
});
