import { sqlMigration } from '#libs/database';

const COUNTER_COLUMNS = `
  exposures bigint NOT NULL DEFAULT 0,
  clicks bigint NOT NULL DEFAULT 0,
  engagements bigint NOT NULL DEFAULT 0,
  conversions bigint NOT NULL DEFAULT 0,
  earnings_micros bigint NOT NULL DEFAULT 0,
  earnings_excluded_recommendations bigint NOT NULL DEFAULT 0,
  pending_earnings_recommendations bigint NOT NULL DEFAULT 0,
  accounting_review_required bigint NOT NULL DEFAULT 0`;

/**
 * The reporting read model: per-recommendation state, accounting entries, minute/hour/day
 * rollups of every Report counter, watermarks, prepared scopes and published snapshots.
 */
export const ReportingInitial1764115200000 = sqlMigration(
  'ReportingInitial1764115200000',
  [
    `
      CREATE TABLE reporting.recommendation (
        recommendation_id text PRIMARY KEY,
        -- identity is null while the row only holds accounting entries that arrived first
        agent_id text,
        traffic text,
        created_at timestamptz,
        level smallint NOT NULL DEFAULT -1,
        billable boolean NOT NULL DEFAULT false,
        attributed_entries integer NOT NULL DEFAULT 0,
        attributed_usd_micros bigint NOT NULL DEFAULT 0,
        foreign_currency_entries integer NOT NULL DEFAULT 0
      ) WITH (fillfactor = 80)`,
    `
      CREATE TABLE reporting.accounting_entry (
        entry_id text PRIMARY KEY,
        agent_id text NOT NULL,
        traffic text NOT NULL,
        recommendation_id text,
        amount_micros bigint NOT NULL,
        currency text,
        recorded_at timestamptz NOT NULL,
        attributed boolean NOT NULL
      )`,
    `
      CREATE INDEX accounting_entry_unattributed_idx
        ON reporting.accounting_entry (recommendation_id) WHERE NOT attributed`,
    ...['minute', 'hour', 'day'].map(
      (grain) => `
      CREATE TABLE reporting.rollup_${grain} (
        agent_id text NOT NULL,
        traffic text NOT NULL,
        bucket timestamptz NOT NULL,
        ${COUNTER_COLUMNS},
        PRIMARY KEY (agent_id, traffic, bucket)
      ) WITH (fillfactor = 80)`,
    ),
    `
      CREATE TABLE reporting.reconciliation_watermark (
        traffic text NOT NULL,
        -- '' is the watermark of every platform
        agent_id text NOT NULL,
        reconciled_through timestamptz NOT NULL,
        PRIMARY KEY (traffic, agent_id)
      )`,
    `
      CREATE TABLE reporting.platform_timezone (
        agent_id text PRIMARY KEY,
        timezone text NOT NULL,
        updated_at timestamptz NOT NULL
      )`,
    `
      CREATE TABLE reporting.report_scope (
        agent_id text NOT NULL,
        traffic text NOT NULL,
        time_range text NOT NULL,
        registered_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (agent_id, traffic, time_range)
      )`,
    `
      CREATE TABLE reporting.report_snapshot (
        agent_id text NOT NULL,
        traffic text NOT NULL,
        time_range text NOT NULL,
        start_at timestamptz,
        end_at timestamptz NOT NULL,
        processed_through timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        accounting_reconciled_through timestamptz,
        timezone text NOT NULL,
        earnings_coverage text NOT NULL,
        ${COUNTER_COLUMNS},
        PRIMARY KEY (agent_id, traffic, time_range)
      )`,
    `
      CREATE TABLE reporting.publication_state (
        id smallint PRIMARY KEY CHECK (id = 1),
        processed_through timestamptz,
        last_started_at timestamptz,
        last_completed_at timestamptz,
        last_error text
      )`,
    `INSERT INTO reporting.publication_state (id) VALUES (1)`,
  ],
  [
    'publication_state',
    'report_snapshot',
    'report_scope',
    'platform_timezone',
    'reconciliation_watermark',
    'rollup_day',
    'rollup_hour',
    'rollup_minute',
    'accounting_entry',
    'recommendation',
  ].map((table) => `DROP TABLE IF EXISTS reporting.${table}`),
);
