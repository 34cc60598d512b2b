import { defineCommand, limitOption, OpsFailure, positiveInteger, type OpsContext, type ParsedCommand } from './definition.js';

type DeadLetterCommand = ParsedCommand &
  ({ kind: 'deadletters.list'; limit: number; subject?: string } | { kind: 'deadletters.redrive'; sequence: number });

async function runDeadLetters(command: DeadLetterCommand, context: OpsContext): Promise<Record<string, unknown>> {
  const { DeadLetterError, listDeadLetters, redriveDeadLetter } = await import('./dead-letters.js');
  const nats = await context.nats();
  try {
    return command.kind === 'deadletters.list'
      ? await listDeadLetters(nats, { limit: command.limit, ...(command.subject !== undefined ? { subject: command.subject } : {}) })
      : await redriveDeadLetter(nats, command.sequence);
  } catch (error) {
    if (error instanceof DeadLetterError) throw new OpsFailure(error.message);
    throw error;
  }
}

/** The dead-letter stream: read it, and publish a letter again once its cause is fixed. */
export const commands = [
  defineCommand({
    name: 'deadletters list',
    usage: '[--limit N (default 20, max 1000)] [--subject ORIGINAL_SUBJECT]',
    required: [],
    optional: ['limit', 'subject'],
    parse: (o): DeadLetterCommand => ({
      kind: 'deadletters.list',
      limit: limitOption(o.limit, 20, 1000),
      ...(o.subject !== undefined ? { subject: o.subject } : {}),
    }),
    run: runDeadLetters,
  }),
  defineCommand({
    name: 'deadletters redrive',
    usage: '--sequence N      (publish it again on its subject, remove it)',
    required: ['sequence'],
    optional: [],
    parse: (o): DeadLetterCommand => ({ kind: 'deadletters.redrive', sequence: positiveInteger('sequence', o.sequence!) }),
    run: runDeadLetters,
  }),
];
