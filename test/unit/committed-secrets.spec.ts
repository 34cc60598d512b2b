import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * No secret value in a committed deployment file: every tracked file under deploy/ and
 * docker-compose.yml is scanned for password-, secret-, token- and key-like settings with a
 * literal value, and for URLs with a password in them. A reference is fine: `$VAR`, `${VAR}`, a
 * `<placeholder>`, a Secret key reference, a variable or key name.
 */

const root = process.cwd();

/** A setting whose name says it holds a credential (not a name, file or reference of one). */
const CREDENTIAL_NAME = /(pass(word|wd)|secret|token|api[_-]?key|private[_-]?key)/i;
/** ... unless the name says it holds a name, path or reference. */
const NOT_A_VALUE = /(name|ref|file|path|from|selector|template)$/i;
/** `name: value`, `name = value`, `NAME=value`, `--name value`, `--name=value`. */
const SETTING = /(?:^|[\s{,"'])["']?([A-Za-z_][\w.-]*)["']?\s*[:=]\s*("[^"]*"|'[^']*'|[^\s,}#]+)|--([a-z][\w-]*)[\s=]+("[^"]*"|'[^']*'|[^\s,}#]+)/g;
/** scheme://user:password@host */
const URL_CREDENTIALS = /\b[a-z][a-z0-9+.-]*:\/\/[^\s:/@]+:([^\s@/]+)@/gi;

/** A value that names where the secret comes from instead of being one. */
function isReference(raw: string): boolean {
  const value = raw.replace(/^["']|["']$/g, '');
  return (
    value === '' ||
    /^\$\{?[A-Za-z_]\w*/.test(value) || // $VAR, ${VAR}
    /^<[^>]+>$/.test(value) || // <placeholder>
    /^(…|\.\.\.)$/.test(value) || // an elided value in an example
    /^[{[]/.test(value) || // an object or list: judged by its own lines
    /^[A-Z][A-Z0-9_]*$/.test(value) || // the name of a variable or Secret key
    /^(true|false|null|~|\d+)$/i.test(value)
  );
}

function credentialsIn(text: string): string[] {
  const found: string[] = [];
  text.split('\n').forEach((line, index) => {
    // Comments describe, they configure nothing; ${VAR:?message} is a reference, whatever its message says.
    const code = line.replace(/(^|\s)#.*$/, '$1').replace(/\$\{[^}]*\}/g, '$$REF');
    for (const match of code.matchAll(SETTING)) {
      const name = match[1] ?? match[3];
      const value = match[2] ?? match[4];
      if (CREDENTIAL_NAME.test(name) && !NOT_A_VALUE.test(name) && !/Secret$/.test(name) && !isReference(value)) found.push(`line ${index + 1}: ${name} = ${value}`);
    }
    for (const match of code.matchAll(URL_CREDENTIALS)) {
      if (!isReference(match[1])) found.push(`line ${index + 1}: a password in the URL ${match[0]}`);
    }
  });
  return found;
}

describe('committed deployment files', () => {
  const tracked = execFileSync('git', ['ls-files', '--', 'deploy', 'docker-compose.yml'], { cwd: root, encoding: 'utf8' }).split('\n').filter(Boolean);

  it('are found (git ls-files)', () => {
    expect(tracked).toEqual(expect.arrayContaining(['docker-compose.yml', 'deploy/k8s/overlays/dev/kustomization.yaml', 'deploy/nats/users.conf']));
  });

  it('hold no password, secret, token or key value', () => {
    const problems = tracked.flatMap((path) => credentialsIn(readFileSync(join(root, path), 'utf8')).map((problem) => `${path} ${problem}`));
    expect(problems).toEqual([]);
  });

  it('leave the generated development secrets out of git', () => {
    const ignored = execFileSync('git', ['check-ignore', '--no-index', 'deploy/k8s/overlays/dev/secrets.env', 'deploy/k8s/overlays/dev/nats.env'], { cwd: root, encoding: 'utf8' });
    expect(ignored.split('\n').filter(Boolean)).toEqual(['deploy/k8s/overlays/dev/secrets.env', 'deploy/k8s/overlays/dev/nats.env']);
  });

  it('the scan finds literal credentials (not vacuous)', () => {
    const samples = [
      '      - NATS_PASSWORD_PRODUCER=dev-only-nats-producer',
      '      - DATABASE_URL=postgres://postgres:hunter2@postgres:5432/weave',
      '  password: s3cr3t-value',
      '  TRACKING_SIGNING_SECRET: "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"',
      '  REDIS_URL: redis://weave:p0123abc@redis:6379',
      '    nats --user ops --password Pw0rd stream ls',
      '  apiKey = wv_live_0123456789abcdef',
    ];
    for (const sample of samples) expect({ sample, found: credentialsIn(sample).length > 0 }).toEqual({ sample, found: true });
    const references = [
      '      password: $NATS_PASSWORD_GATEWAY',
      '  DATABASE_URL: postgres://postgres:${POSTGRES_PASSWORD:?set it}@postgres:5432/weave',
      '              valueFrom: { secretKeyRef: { name: weave-nats, key: NATS_PASSWORD_GATEWAY } }',
      '      - { name: gateway, ensure: present, login: true, passwordSecret: { name: weave-db-gateway } }',
      '| `REDIS_URL` | `rediss://weave:<REDIS_PASSWORD>@redis:6379` |',
      '            - name: NATS_PASSWORD',
      '  # password: in a comment, hunter2',
    ];
    for (const sample of references) expect({ sample, found: credentialsIn(sample) }).toEqual({ sample, found: [] });
  });
});
