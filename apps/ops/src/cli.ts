import { parseArgs } from 'node:util';
import type { KeyMode, PlatformStatus } from '#libs/identity';

/** The commands of DESIGN §3. */
export type OpsCommand =
  | { kind: 'platform.create'; agentId: string; ownerUid?: string }
  | { kind: 'platform.status'; agentId: string; status: PlatformStatus }
  | { kind: 'key.create'; agentId: string; mode: KeyMode }
  | { kind: 'key.revoke'; keyId: string }
  | { kind: 'key.audit'; agentId: string }
  | { kind: 'deadletters.list'; limit: number; subject?: string }
  | { kind: 'deadletters.redrive'; sequence: number }
  | { kind: 'ads.import'; file: string }
  | { kind: 'ads.list'; limit: number }
  | { kind: 'storage' }
  | { kind: 'reporting.verify'; agentId: string; traffics: ('live' | 'test')[] }
  | { kind: 'help' };

export const USAGE = `usage: npm run --silent ops -- <command>

  platform create   --agent-id ID [--owner-uid UID]
  platform suspend  --agent-id ID
  platform activate --agent-id ID
  key create        --agent-id ID --mode live|test
  key revoke        --key-id KID
  key audit         --agent-id ID         (who created and revoked the platform's keys, oldest first)
  deadletters list    [--limit N (default 20, max 1000)] [--subject ORIGINAL_SUBJECT]
  deadletters redrive --sequence N      (publish it again on its subject, remove it)
  ads import        --file catalog.json  (validate the whole file, then upsert by ad_id)
  ads list          [--limit N (default 100, max 1000)]
  storage           (size of each table and partition of the reporting schema)
  reporting verify  --agent-id ID [--traffic live|test]  (rollups against the state kept; exit 1 on a mismatch)

Prints one JSON object on stdout and exits 0, or an error on stderr and exits non-zero.`;

/** Wrong command line: printed with the usage, exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

const OPTIONS = {
  'agent-id': { type: 'string', multiple: true },
  'owner-uid': { type: 'string', multiple: true },
  mode: { type: 'string', multiple: true },
  'key-id': { type: 'string', multiple: true },
  limit: { type: 'string', multiple: true },
  subject: { type: 'string', multiple: true },
  sequence: { type: 'string', multiple: true },
  file: { type: 'string', multiple: true },
  traffic: { type: 'string', multiple: true },
  help: { type: 'boolean', short: 'h' },
} as const;
type OptionName = Exclude<keyof typeof OPTIONS, 'help'>;

/** Parses argv (without node and the script). Pure: throws UsageError, never exits. */
export function parseOpsCommand(argv: string[]): OpsCommand {
  let parsed: ReturnType<typeof parseArgs<{ args: string[]; options: typeof OPTIONS; allowPositionals: true; strict: true }>>;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help) return { kind: 'help' };
  const [group, action, ...extra] = positionals;
  if (!group) throw new UsageError('missing command');
  if (extra.length > 0) throw new UsageError(`unexpected argument: ${extra[0]}`);
  const command = `${group} ${action ?? ''}`.trim();

  const allowed: Record<string, { required: OptionName[]; optional: OptionName[] }> = {
    'platform create': { required: ['agent-id'], optional: ['owner-uid'] },
    'platform suspend': { required: ['agent-id'], optional: [] },
    'platform activate': { required: ['agent-id'], optional: [] },
    'key create': { required: ['agent-id', 'mode'], optional: [] },
    'key revoke': { required: ['key-id'], optional: [] },
    'key audit': { required: ['agent-id'], optional: [] },
    'deadletters list': { required: [], optional: ['limit', 'subject'] },
    'deadletters redrive': { required: ['sequence'], optional: [] },
    'ads import': { required: ['file'], optional: [] },
    'ads list': { required: [], optional: ['limit'] },
    storage: { required: [], optional: [] },
    'reporting verify': { required: ['agent-id'], optional: ['traffic'] },
  };
  const spec = allowed[command];
  if (!spec) throw new UsageError(`unknown command: ${command}`);

  const single = (name: OptionName): string | undefined => {
    const given = values[name];
    if (given === undefined) return undefined;
    if (!spec.required.includes(name) && !spec.optional.includes(name)) {
      throw new UsageError(`option --${name} does not apply to "${command}"`);
    }
    if (given.length > 1) throw new UsageError(`option --${name} given more than once`);
    if (given[0].trim() === '') throw new UsageError(`option --${name} must not be empty`);
    return given[0];
  };
  const opts = Object.fromEntries((Object.keys(OPTIONS) as (OptionName | 'help')[]).filter((n) => n !== 'help').map((n) => [n, single(n as OptionName)])) as Record<OptionName, string | undefined>;
  for (const name of spec.required) {
    if (opts[name] === undefined) throw new UsageError(`"${command}" needs --${name}`);
  }

  switch (command) {
    case 'platform create':
      return { kind: 'platform.create', agentId: opts['agent-id']!, ...(opts['owner-uid'] !== undefined ? { ownerUid: opts['owner-uid'] } : {}) };
    case 'platform suspend':
      return { kind: 'platform.status', agentId: opts['agent-id']!, status: 'suspended' };
    case 'platform activate':
      return { kind: 'platform.status', agentId: opts['agent-id']!, status: 'active' };
    case 'key create': {
      const mode = opts.mode!;
      if (mode !== 'live' && mode !== 'test') throw new UsageError('--mode must be live or test');
      return { kind: 'key.create', agentId: opts['agent-id']!, mode };
    }
    case 'key audit':
      return { kind: 'key.audit', agentId: opts['agent-id']! };
    case 'deadletters list': {
      const limit = opts.limit === undefined ? 20 : positiveInteger('limit', opts.limit);
      if (limit > 1000) throw new UsageError('--limit must be at most 1000');
      return { kind: 'deadletters.list', limit, ...(opts.subject !== undefined ? { subject: opts.subject } : {}) };
    }
    case 'deadletters redrive':
      return { kind: 'deadletters.redrive', sequence: positiveInteger('sequence', opts.sequence!) };
    case 'ads import':
      return { kind: 'ads.import', file: opts.file! };
    case 'ads list': {
      const limit = opts.limit === undefined ? 100 : positiveInteger('limit', opts.limit);
      if (limit > 1000) throw new UsageError('--limit must be at most 1000');
      return { kind: 'ads.list', limit };
    }
    case 'storage':
      return { kind: 'storage' };
    case 'reporting verify': {
      const traffic = opts.traffic;
      if (traffic !== undefined && traffic !== 'live' && traffic !== 'test') throw new UsageError('--traffic must be live or test');
      return { kind: 'reporting.verify', agentId: opts['agent-id']!, traffics: traffic === undefined ? ['live', 'test'] : [traffic] };
    }
    default:
      return { kind: 'key.revoke', keyId: opts['key-id']! };
  }
}

function positiveInteger(name: string, value: string): number {
  if (!/^[1-9][0-9]{0,15}$/.test(value)) throw new UsageError(`--${name} must be a positive integer`);
  return Number(value);
}
