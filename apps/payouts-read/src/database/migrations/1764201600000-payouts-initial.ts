import { sqlMigration } from '#libs/database';

/**
 * The payout read model (DESIGN §4 "Payout read model"): one row per record, holding the full
 * current state of its latest event and that event's `version`, so older events are ignored.
 */
export const PayoutsInitial1764201600000 = sqlMigration(
  'PayoutsInitial1764201600000',
  [
    `
      CREATE TABLE payouts.balance (
        agent_id text NOT NULL,
        currency text NOT NULL,
        pending_micros bigint NOT NULL,
        available_micros bigint NOT NULL,
        locked_micros bigint NOT NULL,
        paid_out_micros bigint NOT NULL,
        updated_at timestamptz NOT NULL,
        version bigint NOT NULL,
        PRIMARY KEY (agent_id, currency)
      )`,
    `
      CREATE TABLE payouts.readiness (
        agent_id text PRIMARY KEY,
        setup_status text NOT NULL CHECK (setup_status IN ('not_started', 'in_progress', 'complete')),
        missing_fields jsonb NOT NULL DEFAULT '[]'::jsonb,
        thresholds jsonb NOT NULL DEFAULT '[]'::jsonb,
        blocked_reason text,
        updated_at timestamptz NOT NULL,
        version bigint NOT NULL
      )`,
    `
      CREATE TABLE payouts.statement (
        statement_id text PRIMARY KEY,
        agent_id text NOT NULL,
        period_start timestamptz NOT NULL,
        period_end timestamptz NOT NULL,
        currency text NOT NULL,
        status text NOT NULL CHECK (status IN ('LOCKED', 'BLOCKED', 'FAILED', 'PAID')),
        -- money fields are given "where provided" (SPEC), so they may be null
        gross_earnings_micros bigint,
        service_fee_micros bigint,
        net_earnings_micros bigint,
        blocked_reason text,
        failure jsonb,
        transfer jsonb,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        version bigint NOT NULL
      )`,
    // Lists are newest period first, ties by statement id, with or without a status filter:
    // both orders are index scans that stop after the page.
    `
      CREATE INDEX statement_agent_period_idx
        ON payouts.statement (agent_id, period_start DESC, period_end DESC, statement_id DESC)`,
    `
      CREATE INDEX statement_agent_status_period_idx
        ON payouts.statement (agent_id, status, period_start DESC, period_end DESC, statement_id DESC)`,
  ],
  ['statement', 'readiness', 'balance'].map((table) => `DROP TABLE IF EXISTS payouts.${table}`),
);
