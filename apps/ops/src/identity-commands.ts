import type { KeyMode } from '#libs/identity-core';
import type { PlatformStatus } from '#libs/identity';
import { UsageError, defineCommand, OpsFailure, type OpsContext } from './definition.js';
import type { IdentityCommand } from './commands.js';

/** Runs a platform or key command on the identity schema and announces what it changed. */
async function runIdentityCommand(command: IdentityCommand, context: OpsContext): Promise<Record<string, unknown>> {
  const [{ IdentityError }, { runOpsCommand }] = await Promise.all([import('#libs/identity-core'), import('./commands.js')]);
  try {
    const outcome = await runOpsCommand(command, await context.identity());
    if (outcome.change) await context.announce(outcome.change);
    return outcome.output;
  } catch (error) {
    if (error instanceof IdentityError) throw new OpsFailure(error.message, error.code === 'invalid_argument' ? 2 : 1);
    throw error;
  }
}

/** The platform and key commands of DESIGN §3, and `key audit`. */
export const commands = [
  defineCommand({
    name: 'platform create',
    usage: '--agent-id ID [--owner-uid UID]',
    required: ['agent-id'],
    optional: ['owner-uid'],
    parse: (o): Extract<IdentityCommand, { kind: 'platform.create' }> => ({
      kind: 'platform.create',
      agentId: o['agent-id']!,
      ...(o['owner-uid'] !== undefined ? { ownerUid: o['owner-uid'] } : {}),
    }),
    run: runIdentityCommand,
  }),
  ...(['suspend', 'activate'] as const).map((action) =>
    defineCommand({
      name: `platform ${action}`,
      usage: '--agent-id ID',
      required: ['agent-id'],
      optional: [],
      parse: (o): Extract<IdentityCommand, { kind: 'platform.status' }> => ({
        kind: 'platform.status',
        agentId: o['agent-id']!,
        status: (action === 'suspend' ? 'suspended' : 'active') satisfies PlatformStatus,
      }),
      run: runIdentityCommand,
    }),
  ),
  defineCommand({
    name: 'key create',
    usage: '--agent-id ID --mode live|test',
    required: ['agent-id', 'mode'],
    optional: [],
    parse: (o): Extract<IdentityCommand, { kind: 'key.create' }> => {
      const mode = o.mode!;
      if (mode !== 'live' && mode !== 'test') throw new UsageError('--mode must be live or test');
      return { kind: 'key.create', agentId: o['agent-id']!, mode: mode satisfies KeyMode };
    },
    run: runIdentityCommand,
  }),
  defineCommand({
    name: 'key revoke',
    usage: '--key-id KID',
    required: ['key-id'],
    optional: [],
    parse: (o): Extract<IdentityCommand, { kind: 'key.revoke' }> => ({ kind: 'key.revoke', keyId: o['key-id']! }),
    run: runIdentityCommand,
  }),
  defineCommand({
    name: 'key audit',
    usage: '--agent-id ID         (who created and revoked the platform\'s keys, oldest first)',
    required: ['agent-id'],
    optional: [],
    parse: (o): Extract<IdentityCommand, { kind: 'key.audit' }> => ({ kind: 'key.audit', agentId: o['agent-id']! }),
    run: runIdentityCommand,
  }),
];
