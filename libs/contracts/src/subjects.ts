/**
 * Every NATS name the services share, in one place (DESIGN §4, §6). Request/reply subjects are
 * versioned so that a v2 can run beside v1 during a rollout.
 */
export const Streams = {
  events: 'EVENTS',
  deadLetters: 'DEAD_LETTERS',
  /** Settings changes owned by timezone-settings (`settings.>`); no request/reply subject lives here. */
  settings: 'SETTINGS',
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

export const SettingsSubjects = {
  all: 'settings.>',
  timezoneChanged: 'settings.timezone.changed',
} as const;

/**
 * Request/reply subjects. None may fall under a stream's subjects (`events.>`, `settings.>`,
 * `deadletter.>`): JetStream would answer a request there with a PubAck.
 */
export const RpcSubjects = {
  reportGet: 'reporting.v1.report.get',
  seriesGet: 'reporting.v1.series.get',
  breakdownGet: 'reporting.v1.breakdown.get',
  timezoneGet: 'timezone.v1.get',
  timezoneSet: 'timezone.v1.set',
  payoutsBalanceGet: 'payouts.v1.balance.get',
  payoutsReadinessGet: 'payouts.v1.readiness.get',
  payoutsOverviewGet: 'payouts.v1.overview.get',
  payoutsStatementsList: 'payouts.v1.statements.list',
  payoutsStatementGet: 'payouts.v1.statement.get',
  payoutsHistoryList: 'payouts.v1.history.list',
  recommend: 'recommendations.v1.recommend',
} as const;

/** Core NATS broadcasts (no JetStream): cache invalidation between replicas. */
export const BroadcastSubjects = {
  identityChanged: 'identity.v1.changed',
  reportsPublished: 'reporting.v1.published',
  payoutsChanged: 'payouts.v1.changed',
} as const;

export const Durables = {
  reportingProjection: 'reporting-projection',
  reportingSettings: 'reporting-projection-settings',
  payoutsRead: 'payouts-read',
} as const;

export const QueueGroups = {
  reporting: 'reporting-projection',
  timezoneSettings: 'timezone-settings',
  payouts: 'payouts-read',
  recommendations: 'recommendations',
} as const;

/** Header that carries the request id across NATS hops for log correlation. */
export const REQUEST_ID_HEADER = 'X-Request-Id';
