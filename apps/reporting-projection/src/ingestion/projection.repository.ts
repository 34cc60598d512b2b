import { Inject, Injectable, Optional } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { AccountingEntryDto } from '#libs/contracts';
import { byCodeUnit, type BatchPlan, type RecommendationState, type WaitingEntry, type Watermark } from './batch-plan.js';
import { StoragePartitions } from './storage-partitions.js';
import { BREAKDOWN_FIGURES, BreakdownDeltas } from './breakdown-deltas.js';
import { arrayLiteral, pgPoolOf, quoteLiteral, textArrayLiteral } from '#libs/database';
import type { RollupRow } from './rollup-deltas.js';
import { COUNTER_NAMES } from '../rules/counting.js';

// Raw SQL on purpose: this is the ingest hot path (unnest bulk upserts, one statement per
// table and batch, the rollups of every grain in one, `FOR UPDATE` in a fixed lock order), which the ORM's per-entity writes cannot match.

interface RecommendationRow {
  recommendation_id: string;
  agent_id: string | null;
  traffic: string | null;
  created_at_ms: string | null;
  level: number;
  billable: boolean;
  attributed_entries: number;
  attributed_usd_micros: string | number;
  foreign_currency_entries: number;
  ad_id: string | null;
  product_id: string | null;
}

interface EntryRow {
  entry_id: string;
  agent_id: string;
  traffic: string;
  recommendation_id: string | null;
  amount_micros: string | number;
  currency: string | null;
  recorded_at: Date;
}

function unknownRecommendation(id: string): RecommendationState {
  return {
    id,
    agentId: null,
    traffic: null,
    createdAtMs: null,
    level: -1,
    billable: false,
    attributedEntries: 0,
    attributedUsdMicros: 0,
    foreignCurrencyEntries: 0,
    adId: null,
    productId: null,
  };
}

function toState(row: RecommendationRow): RecommendationState {
  return {
    id: row.recommendation_id,
    agentId: row.agent_id,
    traffic: row.traffic,
    createdAtMs: row.created_at_ms === null ? null : Number(row.created_at_ms),
    level: row.level,
    billable: row.billable,
    attributedEntries: row.attributed_entries,
    attributedUsdMicros: Number(row.attributed_usd_micros),
    foreignCurrencyEntries: row.foreign_currency_entries,
    adId: row.ad_id,
    productId: row.product_id,
  };
}

const RECOMMENDATION_COLUMNS = `r.recommendation_id, r.agent_id, r.traffic,
  (extract(epoch FROM r.created_at) * 1000)::bigint AS created_at_ms, r.level, r.billable, r.attributed_entries,
  r.attributed_usd_micros, r.foreign_currency_entries, r.ad_id, r.product_id`;

interface PgResult {
  rows: unknown[];
}

/** A pooled pg client as the write path uses it (a simple query of several statements resolves to a result each). */
interface PgClient {
  query(config: { name?: string; text: string; values?: unknown[] } | string): Promise<PgResult | PgResult[]>;
}

interface Statement {
  /** The name it is prepared under (small batches). */
  name?: string;
  text: string;
  values: readonly unknown[];
}

/** Injection token of ProjectionRepository's `preparedMaxRows` (default 32). */
export const PREPARED_MAX_ROWS = Symbol('PREPARED_MAX_ROWS');

/** A statement's text cut at its `$n` placeholders: `parts[i]` is followed by the argument `slots[i]` (0-based). */
interface Template {
  parts: string[];
  slots: number[];
}

/**
 * The write path's statement texts are a handful of constants: each is cut once. The bound only
 * keeps a text built per call, should one ever be passed, from growing the map.
 */
const templates = new Map<string, Template>();
const TEMPLATES_MAX = 64;

function templateOf(text: string): Template {
  let template = templates.get(text);
  if (!template) {
    if (templates.size >= TEMPLATES_MAX) templates.clear();
    const pieces = text.split(/\$(\d+)/);
    template = { parts: pieces.filter((_, i) => i % 2 === 0), slots: pieces.filter((_, i) => i % 2 === 1).map((n) => Number(n) - 1) };
    templates.set(text, template);
  }
  return template;
}

/**
 * `$n` of a statement replaced by its argument as a quoted literal (every argument is a string).
 * The pieces are joined once, without a regular expression's pass over the text and a callback
 * per placeholder: on literals of up to 100 KB the replacement copied each one more time.
 */
function inline(text: string, values: readonly unknown[]): string {
  const { parts, slots } = templateOf(text);
  const pieces: string[] = new Array(parts.length + slots.length);
  for (let i = 0; i < slots.length; i++) {
    pieces[2 * i] = parts[i];
    pieces[2 * i + 1] = quoteLiteral(String(values[slots[i]]));
  }
  pieces[2 * slots.length] = parts[slots.length];
  return pieces.join('');
}

/**
 * The statements of one writing transaction on one connection of the pool.
 *
 * A large batch sends its statements in as few round trips as the plan allows: a statement whose
 * rows are not needed (`defer`) waits and goes with the next one, BEGIN with the first and COMMIT
 * with the last, several statements in one simple query (each planned for its own arguments, the
 * array literals inlined, quoteLiteral). A transaction applies about 1,000 events in 4 round trips instead of
 * 10; under load each round trip waited for both processes to be scheduled.
 *
 * A small one (a consumer isolating a failing message runs one transaction per message) runs
 * each statement as a named prepared statement of the connection: planning it over every weekly
 * partition took as long as running it, and a prepared statement settles on one generic plan
 * per connection. Large batches are never prepared: for batches of 2,000 the generic plans cost
 * PostgreSQL 484 µs per event in bench:ingest's month workload, against 66–91 µs with custom
 * plans.
 */
class WriteSession {
  private deferred: string[] = [];

  constructor(
    private readonly client: PgClient,
    private readonly batched: boolean,
  ) {}

  async begin(): Promise<void> {
    if (this.batched) this.deferred.push('BEGIN ISOLATION LEVEL READ COMMITTED');
    else await this.client.query('BEGIN ISOLATION LEVEL READ COMMITTED');
  }

  /** Runs a statement (after whatever was deferred, in the same round trip); resolves to its rows. */
  async query<T>(name: string | undefined, text: string, values: readonly unknown[] = []): Promise<T[]> {
    return (await this.queries([{ name, text, values }]))[0] as T[];
  }

  /** Runs statements in order (large batches: in one round trip); resolves to the rows of each. */
  async queries(statements: readonly Statement[]): Promise<unknown[][]> {
    if (statements.length === 0) return [];
    if (!this.batched) {
      const rows: unknown[][] = [];
      for (const { name, text, values } of statements) {
        const config = name ? { name: `reporting_projection_${name}`, text, values: [...values] } : { text, values: [...values] };
        rows.push(((await this.client.query(config)) as PgResult).rows);
      }
      return rows;
    }
    const texts = this.deferred;
    for (const { text, values } of statements) texts.push(inline(text, values));
    this.deferred = [];
    const results = await this.client.query(texts.join(';\n'));
    const list = Array.isArray(results) ? results : [results];
    return list.slice(list.length - statements.length).map((result) => result.rows);
  }

  /** A statement whose rows are not needed: sent with the next one (large batches) or now. */
  async defer(name: string, text: string, values: readonly unknown[]): Promise<void> {
    if (this.batched) this.deferred.push(inline(text, values));
    else await this.query(name, text, values);
  }

  async commit(): Promise<void> {
    await this.query(undefined, 'COMMIT');
  }
}

const sums = COUNTER_NAMES.map((c) => `sum(${c})::bigint`).join(', ');
const nonZero = COUNTER_NAMES.map((c) => `sum(${c}) <> 0`).join(' OR ');
const addCounters = COUNTER_NAMES.map((c) => `${c} = t.${c} + excluded.${c}`).join(', ');
const counterList = COUNTER_NAMES.join(', ');
const EPOCH = `timestamptz '1970-01-01 00:00:00+00'`;
const coarser = (grain: 'hour' | 'day') => `INSERT INTO reporting.rollup_${grain} AS t (agent_id, traffic, bucket, ${counterList})
    SELECT agent_id, traffic, date_bin('1 ${grain}', bucket, ${EPOCH}) AS b, ${sums} FROM d
    GROUP BY agent_id, traffic, b HAVING ${nonZero}
    ORDER BY agent_id COLLATE "C", traffic COLLATE "C", b
    ON CONFLICT (agent_id, traffic, bucket) DO UPDATE SET ${addCounters}`;

/**
 * The end of a batch in one statement: its minute deltas (sorted, each flagged for rollup_minute
 * or, before the minute window's bound, for rollup_quarter) added to their rows; the hour and day
 * deltas summed from them (zero sums skipped) and added, sorted as the minutes are; the breakdown
 * deltas added (BreakdownDeltas); and the batch's rows of recommendation_lock deleted. Folding the
 * three grains, the breakdowns and the release into one statement sends each minute delta once
 * instead of once per grain, and saves four round trips and plans per transaction. Every
 * transaction runs the same statement, so the rows of its sub-statements are always taken in the
 * same order.
 */
const ROLLUPS_UPSERT = `WITH d AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::boolean[], ${COUNTER_NAMES.map((_, i) => `$${i + 5}::bigint[]`).join(', ')})
      AS d(agent_id, traffic, bucket, coarse, ${counterList})
  ), minute AS (
    INSERT INTO reporting.rollup_minute AS t (agent_id, traffic, bucket, ${counterList})
    SELECT agent_id, traffic, bucket, ${counterList} FROM d WHERE NOT coarse
    ON CONFLICT (agent_id, traffic, bucket) DO UPDATE SET ${addCounters}
  ), quarter AS (
    INSERT INTO reporting.rollup_quarter AS t (agent_id, traffic, bucket, ${counterList})
    SELECT agent_id, traffic, bucket, ${counterList} FROM d WHERE coarse
    ON CONFLICT (agent_id, traffic, bucket) DO UPDATE SET ${addCounters}
  ), hour AS (
    ${coarser('hour')}
  ), day AS (
    ${coarser('day')}
  ), breakdown AS (
    INSERT INTO reporting.breakdown_pair AS t (agent_id, traffic, bucket, ad_id, product_id, ${BREAKDOWN_FIGURES.join(', ')})
    SELECT * FROM unnest(${['text', 'text', 'timestamptz', 'text', 'text', ...BREAKDOWN_FIGURES.map(() => 'bigint')].map((type, i) => `$${i + 13}::${type}[]`).join(', ')})
    ON CONFLICT (agent_id, traffic, bucket, ad_id, product_id) DO UPDATE SET ${BREAKDOWN_FIGURES.map((c) => `${c} = t.${c} + excluded.${c}`).join(', ')}
  )
  DELETE FROM reporting.recommendation_lock WHERE recommendation_id = ANY($23::text[])`;

/** Column arrays of ROLLUPS_UPSERT's minute deltas: those for rollup_minute, then those for rollup_quarter. */
function rollupColumns(minute: RollupRow[], quarter: RollupRow[]): unknown[] {
  const rows = minute.concat(quarter);
  return [
    textArrayLiteral(rows.map((r) => r.agentId)),
    textArrayLiteral(rows.map((r) => r.traffic)),
    arrayLiteral(rows.map((r) => new Date(r.bucketMs).toISOString())),
    arrayLiteral(rows.map((_, i) => i >= minute.length)),
    ...COUNTER_NAMES.map((name) => arrayLiteral(rows.map((r) => r.counters[name]))),
  ];
}

/**
 * Writes a BatchPlan to the reporting read model in one READ COMMITTED transaction, feeding
 * each step of the plan what it needs to read under the transaction's locks.
 *
 * Lock order (the same in every replica, so concurrent batches never deadlock): recommendation
 * locks sorted by id, then accounting entries by id, then rollup rows sorted by
 * (agent, traffic, bucket) and breakdown rollup rows by their key (agent, traffic, bucket, ad, product), all in one statement whose
 * sub-statements run in the same order in every transaction (ROLLUPS_UPSERT), then watermarks.
 */
@Injectable()
export class ProjectionRepository {
  /**
   * @param preparedMaxRows plans of up to this many events, entries and watermarks run prepared
   *   statements one by one; larger ones send them in as few round trips as possible (WriteSession).
   */
  constructor(
    private readonly dataSource: DataSource,
    private readonly partitions: StoragePartitions,
    @Optional() @Inject(PREPARED_MAX_ROWS) private readonly preparedMaxRows: number = 32,
  ) {}

  /** Events and entries created before this instant are past the restatement window. */
  restatementHorizon(): number {
    return this.partitions.restatementHorizon();
  }

  /** Applies the plan; resolves to its conflicts (batch index → reason) once committed. */
  async write(plan: BatchPlan): Promise<ReadonlyMap<number, string>> {
    // The weeks the batch writes exist before its transaction starts (creating one takes a lock
    // on the partitioned table that the writing transactions would otherwise queue behind).
    await this.partitions.ensureFor(plan.creationTimes);
    const pooled = await pgPoolOf(this.dataSource).connect();
    const client = pooled as unknown as PgClient;
    // The connection failing while checked out (the server gone) is emitted on the client too:
    // without a listener it would end the process; with it, the statement under way fails, the
    // batch is retried, and the connection is dropped from the pool.
    let broken: unknown;
    const onError = (error: Error) => {
      broken ??= error;
    };
    pooled.on('error', onError);
    const session = new WriteSession(client, plan.size > this.preparedMaxRows);
    try {
      await session.begin();
      // The ids as one array literal, sent three times (lock, lookup, release).
      const recommendationIds = textArrayLiteral(plan.recommendationIds);
      const becameKnown = plan.applyLifecycle(await this.lockRecommendations(session, plan.recommendationIds, recommendationIds, plan.createdAtHints));
      // Waiting entries attributed and the batch's entries stored: one round trip (steps 2 and 3).
      const entries = plan.entriesToInsert();
      const attributing = becameKnown.length > 0 ? this.attributeWaiting(becameKnown, plan) : undefined;
      const inserting = entries.length > 0 ? this.insertEntries(entries) : undefined;
      const results = await session.queries([attributing, inserting].filter((statement) => statement !== undefined));
      if (attributing) plan.attributeWaiting(ProjectionRepository.waitingEntries(results.shift() as EntryRow[]));
      if (inserting) plan.countInserted(new Set((results.shift() as { entry_id: string }[]).map((row) => row.entry_id)));
      const changed = plan.changedRecommendations();
      const known = changed.filter((state) => state.agentId !== null);
      if (known.length > 0) await this.upsertRecommendations(session, known);
      // Minute deltas before the minute window's bound go to their quarter-hour (StoragePartitions.routeMinuteRows).
      const minutes = await this.partitions.routeMinuteRows({ query: (text: string, values?: unknown[]) => session.query(undefined, text, values) }, plan.rollups.sorted('minute'));
      // The rollups of every grain, the breakdown rollups and the release of the lock rows: one statement.
      await session.defer('rollups', ROLLUPS_UPSERT, [
        ...rollupColumns(minutes.minute, minutes.quarter),
        ...BreakdownDeltas.columns(plan.breakdowns.sorted()),
        recommendationIds,
      ]);
      if (plan.watermarks.length > 0) await this.advanceWatermarks(session, plan.watermarks);
      await session.commit();
      return plan.conflicts;
    } catch (error) {
      // A connection that cannot even roll back is dropped from the pool, not reused.
      if (!broken) {
        await client.query('ROLLBACK').catch((rollbackError: unknown) => {
          broken = rollbackError;
        });
      }
      throw error;
    } finally {
      pooled.removeListener('error', onError);
      pooled.release(broken as Error | undefined);
    }
  }

  /**
   * Every writer of a recommendation first takes its row in `recommendation_lock` (in id order,
   * so replicas never deadlock), so that an accounting entry and the events of its recommendation
   * always meet on one lock even before the recommendation is known; the rows are deleted again
   * before commit (releaseRecommendations), and the table stays empty between transactions.
   *
   * Then the stored rows are read, in one statement: a lifecycle event's recommendation in the
   * one week its `recommendation_created_at` names, and only if it is not found there (a new
   * recommendation, an id named only by an entry, an event that disagrees with the first one) in
   * every week. Both probes are one index probe per id (LATERAL, which the planner cannot turn
   * into a join): given 2,000 ids as one array, a join or `= ANY` is planned as a scan of every
   * week instead, which grows with the store.
   */
  private async lockRecommendations(session: WriteSession, ids: string[], recommendationIds: string, hints: ReadonlyMap<string, number>): Promise<RecommendationState[]> {
    if (ids.length === 0) return [];
    await session.defer('lock',
      `INSERT INTO reporting.recommendation_lock AS l (recommendation_id)
       SELECT unnest($1::text[])
       ON CONFLICT (recommendation_id) DO UPDATE SET recommendation_id = l.recommendation_id`,
      [recommendationIds],
    );
    // One round trip: per id, the probe of its week (when an event named its creation time) and,
    // only if that finds nothing, the probe of every week (LIMIT 1 stops the Append after the
    // first branch that returns the row). A null creation time prunes the first branch to nothing.
    const rows: RecommendationRow[] = await session.query<RecommendationRow>('known',
      `SELECT ${RECOMMENDATION_COLUMNS}
       FROM unnest($1::text[], $2::timestamptz[]) AS k(id, created_at)
       CROSS JOIN LATERAL (
         (SELECT * FROM reporting.recommendation r WHERE r.recommendation_id = k.id AND r.created_at = k.created_at)
         UNION ALL
         (SELECT * FROM reporting.recommendation r WHERE r.recommendation_id = k.id)
         LIMIT 1
       ) r`,
      [recommendationIds, arrayLiteral(ids.map((id) => {
        const hint = hints.get(id);
        return hint === undefined ? null : new Date(hint).toISOString();
      }))],
    );
    const known = new Map<string, RecommendationState>();
    for (const row of rows) known.set(row.recommendation_id, toState(row));
    return ids.map((id) => known.get(id) ?? unknownRecommendation(id));
  }

  /**
   * Entries that waited under review for one of the recommendations that became known, marked
   * attributed where they name its platform and traffic (BatchPlan.attributeWaiting's rule), in
   * one statement; resolves to the entries it marked. `recommendation_id = ANY` drives the probe
   * of the index of unattributed entries in each week; the identity test filters what it finds.
   */
  private attributeWaiting(recommendationIds: string[], plan: BatchPlan): Statement {
    const identities = recommendationIds.map((id) => plan.identityOf(id));
    return {
      name: 'attribute_waiting',
      text: `UPDATE reporting.accounting_entry e SET attributed = true
       WHERE e.recommendation_id = ANY($1::text[]) AND NOT e.attributed
         AND (e.recommendation_id, e.agent_id, e.traffic) IN (SELECT * FROM unnest($1::text[], $2::text[], $3::text[]))
       RETURNING e.entry_id, e.agent_id, e.traffic, e.recommendation_id, e.amount_micros, e.currency, e.recorded_at`,
      values: [
        textArrayLiteral(recommendationIds),
        textArrayLiteral(identities.map((identity) => identity.agentId)),
        textArrayLiteral(identities.map((identity) => identity.traffic)),
      ],
    };
  }

  /** The entries attributeWaiting marked, as BatchPlan.attributeWaiting takes them. */
  private static waitingEntries(rows: EntryRow[]): WaitingEntry[] {
    return rows
      .map((row) => ({
        entryId: row.entry_id,
        agentId: row.agent_id,
        traffic: row.traffic,
        recommendationId: row.recommendation_id,
        amountMicros: Number(row.amount_micros),
        currency: row.currency,
        recordedAtMs: row.recorded_at.getTime(),
      }))
      .sort((x, y) => byCodeUnit(x.entryId, y.entryId));
  }

  /** Stores each entry once by entry_id; returns the ids that were new. */
  private insertEntries(entries: { entry: AccountingEntryDto; attributed: boolean }[]): Statement {
    return {
      name: 'entries',
      text: `INSERT INTO reporting.accounting_entry
         (entry_id, agent_id, traffic, recommendation_id, amount_micros, currency, recorded_at, attributed)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::text[], $7::timestamptz[], $8::boolean[])
       ON CONFLICT (entry_id, recorded_at) DO NOTHING
       RETURNING entry_id`,
      values: [
        textArrayLiteral(entries.map((d) => d.entry.entry_id)),
        textArrayLiteral(entries.map((d) => d.entry.agent_id)),
        textArrayLiteral(entries.map((d) => d.entry.traffic)),
        textArrayLiteral(entries.map((d) => d.entry.recommendation_id)),
        arrayLiteral(entries.map((d) => d.entry.amount_micros)),
        textArrayLiteral(entries.map((d) => d.entry.currency)),
        arrayLiteral(entries.map((d) => d.entry.recorded_at)),
        arrayLiteral(entries.map((d) => d.attributed)),
      ],
    };
  }

  private async upsertRecommendations(session: WriteSession, changed: RecommendationState[]): Promise<void> {
    await session.defer('recommendations',
      // Identity never changes once known, so an update finds the row in the partition of its created_at.
      `INSERT INTO reporting.recommendation AS r (recommendation_id, agent_id, traffic, created_at, level, billable,
         attributed_entries, attributed_usd_micros, foreign_currency_entries, ad_id, product_id)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[], $5::smallint[], $6::boolean[],
                            $7::integer[], $8::bigint[], $9::integer[], $10::text[], $11::text[])
       ON CONFLICT (recommendation_id, created_at) DO UPDATE SET
         level = excluded.level, billable = excluded.billable, attributed_entries = excluded.attributed_entries,
         attributed_usd_micros = excluded.attributed_usd_micros,
         foreign_currency_entries = excluded.foreign_currency_entries, ad_id = excluded.ad_id, product_id = excluded.product_id`,
      [
        textArrayLiteral(changed.map((s) => s.id)),
        textArrayLiteral(changed.map((s) => s.agentId)),
        textArrayLiteral(changed.map((s) => s.traffic)),
        arrayLiteral(changed.map((s) => (s.createdAtMs === null ? null : new Date(s.createdAtMs).toISOString()))),
        arrayLiteral(changed.map((s) => s.level)),
        arrayLiteral(changed.map((s) => s.billable)),
        arrayLiteral(changed.map((s) => s.attributedEntries)),
        arrayLiteral(changed.map((s) => s.attributedUsdMicros)),
        arrayLiteral(changed.map((s) => s.foreignCurrencyEntries)),
        textArrayLiteral(changed.map((s) => s.adId ?? null)),
        textArrayLiteral(changed.map((s) => s.productId ?? null)),
      ],
    );
  }

  /** Reconciliation watermarks never move back. */
  private async advanceWatermarks(session: WriteSession, watermarks: readonly Watermark[]): Promise<void> {
    await session.defer('watermarks',
      `INSERT INTO reporting.reconciliation_watermark AS w (traffic, agent_id, reconciled_through)
       SELECT * FROM unnest($1::text[], $2::text[], $3::timestamptz[])
       ON CONFLICT (traffic, agent_id) DO UPDATE
         SET reconciled_through = GREATEST(w.reconciled_through, excluded.reconciled_through)`,
      [textArrayLiteral(watermarks.map((w) => w.traffic)), textArrayLiteral(watermarks.map((w) => w.agentId)), arrayLiteral(watermarks.map((w) => w.through))],
    );
  }
}
