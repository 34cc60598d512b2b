/**
 * Every NATS name the services share, in one place (DESIGN §4, §6). Request/reply subjects are
 * versioned so that a v2 can run beside v1 during a rollout.
 */
export const Streams = {
  events: 'EVENTS',
  deadLetters: 'DEAD_LETTERS',
} as const;

export const EventSubjects = {
  all: 'events.>',
  recommendationPrefix: 'events.recommendation.',
  accountingEntry: 'events.accounting.entry',
  accountingReconciled: 'events.accounting.reconciled',
  payoutsBalance: 'events.payouts.balance',
  payoutsReadiness: 'events.payouts.readiness',
  payoutsStatement: 'events.payouts.statement',
} as const;

export const DeadLetterSubjects = {
  all: 'deadletter.>',
  prefix: 'deadletter.',
} as const;

export function deadLetterSubject(originalSubject: string): string {
  return `${DeadLetterSubjects.prefix}${originalSubject}`;
}

/** Headers carried by a dead letter beside the original payload. */
export const DeadLetterHeaders = {
  reason: 'Dead-Letter-Reason',
  originalSubject: 'Dead-Letter-Subject',
  originalStream: 'Dead-Letter-Stream',
  originalSequence: 'Dead-Letter-Sequence',
  deliveries: 'Dead-Letter-Deliveries',
} as const;

export const RpcSubjects = {
  reportGet: 'reporting.v1.report.get',
} as const;

/** Core NATS broadcasts (no JetStream): cache invalidation between replicas. */
export const BroadcastSubjects = {
  identityChanged: 'identity.v1.changed',
  reportsPublished: 'reporting.v1.published',
} as const;

export const Durables = {
  reportingProjection: 'reporting-projection',
} as const;

export const QueueGroups = {
  reporting: 'reporting-projection',
} as const;

/** Header that carries the request id across NATS hops for log correlation. */
export const REQUEST_ID_HEADER = 'X-Request-Id';
