import { defineCommand, OpsFailure, UsageError } from './definition.js';

type StorageCommand = { kind: 'storage' };
type VerifyCommand = { kind: 'reporting.verify'; agentId: string; traffics: ('live' | 'test')[] };

/** The reporting store (DESIGN §10): its size by table and partition, and its rollups checked against the state kept. */
export const commands = [
  defineCommand({
    name: 'storage',
    usage: '(size of each table and partition of the reporting schema)',
    required: [],
    optional: [],
    parse: (): StorageCommand => ({ kind: 'storage' }),
    run: async (_command, context) => {
      const { reportingStorage } = await import('./storage.js');
      return reportingStorage(await context.databaseUrl());
    },
  }),
  defineCommand({
    name: 'reporting verify',
    usage: '--agent-id ID [--traffic live|test]  (rollups against the state kept; exit 1 on a mismatch)',
    required: ['agent-id'],
    optional: ['traffic'],
    parse: (o): VerifyCommand => {
      const traffic = o.traffic;
      if (traffic !== undefined && traffic !== 'live' && traffic !== 'test') throw new UsageError('--traffic must be live or test');
      return { kind: 'reporting.verify', agentId: o['agent-id']!, traffics: traffic === undefined ? ['live', 'test'] : [traffic] };
    },
    run: async (command: VerifyCommand, context) => {
      const { verifyReporting } = await import('./reporting-verify.js');
      const outcome = await verifyReporting(await context.databaseUrl(), command.agentId, command.traffics);
      if (outcome.exitCode !== 0) {
        const message = `${outcome.output.mismatches.length} figure(s) of the rollups differ from the state`;
        throw new OpsFailure(message, outcome.exitCode, `error: ${message}\n`, outcome.output as unknown as Record<string, unknown>);
      }
      return outcome.output as unknown as Record<string, unknown>;
    },
  }),
];
