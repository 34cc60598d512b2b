import { Inject, Injectable, Optional } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { AccountingEntryDto, RecommendationEventDto } from '#libs/contracts';
import type { InboundMessage, MessageOutcome } from '#libs/nats';
import { counter } from '#libs/observability';
import { contributionOf, difference, zeroCounters, type RecommendationFacts } from '../rules/counting.js';
import { decodeEvent, type DecodedEvent } from './event-decoder.js';
import { GRAINS, RollupDeltas, arrayLiteral } from './rollup-deltas.js';

const REPORT_CURRENCY = 'USD';
const eventsApplied = counter('weave_events_applied_total', 'Events applied to the reporting projection', ['kind']);

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
}

interface RecommendationState extends RecommendationFacts {
  id: string;
  agentId: string | null;
  traffic: string | null;
  createdAtMs: number | null;
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
  };
}

function sameFacts(a: RecommendationState, b: RecommendationState): boolean {
  return (
    a.agentId === b.agentId &&
    a.traffic === b.traffic &&
    a.createdAtMs === b.createdAtMs &&
    a.level === b.level &&
    a.billable === b.billable &&
    a.attributedEntries === b.attributedEntries &&
    a.attributedUsdMicros === b.attributedUsdMicros &&
    a.foreignCurrencyEntries === b.foreignCurrencyEntries
  );
}

export const PROJECTION_PARTITIONS = Symbol('PROJECTION_PARTITIONS');

type Sequenced = { index: number; event: DecodedEvent };

function platformHash(agentId: string): number {
  let hash = 0;
  for (let i = 0; i < agentId.length; i++) hash = (hash * 31 + agentId.charCodeAt(i)) | 0;
  return hash >>> 0;
}

/**
 * Splits a batch (in stream order) into `count` partitions. A recommendation goes where its
 * first event of the batch sends it (its platform), and so do all its events and the
 * accounting entries that name it; other entries and watermarks follow their platform.
 */
export function partitionByPlatform(ordered: Sequenced[], count: number): Sequenced[][] {
  if (count <= 1) return [ordered];
  const partitions: Sequenced[][] = Array.from({ length: count }, () => []);
  const ofRecommendation = new Map<string, number>();
  const place = (agentId: string | undefined, recommendationId: string | null | undefined) => {
    if (recommendationId) {
      const known = ofRecommendation.get(recommendationId);
      if (known !== undefined) return known;
    }
    const partition = platformHash(agentId ?? '') % count;
    if (recommendationId) ofRecommendation.set(recommendationId, partition);
    return partition;
  };
  for (const item of ordered) {
    const { event } = item;
    let partition = 0;
    if (event.type === 'lifecycle') partition = place(event.event.agent_id, event.event.recommendation_id);
    else if (event.type === 'accounting') partition = place(event.entry.agent_id, event.entry.recommendation_id);
    else if (event.type === 'reconciled') partition = place(event.watermark.agent_id, undefined);
    partitions[partition].push(item);
  }
  return partitions.filter((partition) => partition.length > 0);
}

const byCodeUnit = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Applies a batch of events to the reporting read model in one transaction.
 *
 * Idempotent by construction rather than by an event log: levels only rise (max), an accounting
 * entry is stored once by entry_id and attributed once, watermarks only move forward. So a
 * duplicate, a redelivery or a replay of the stream changes nothing, in any arrival order.
 *
 * Lock order (the same in every replica, so concurrent batches never deadlock): recommendation
 * rows sorted by id, then accounting entries by id, then rollup rows sorted by
 * (agent, traffic, bucket) minute → hour → day, then watermarks.
 */
@Injectable()
export class ProjectionService {
  /**
   * @param partitions transactions a batch is split into (INGEST_CONCURRENCY). Any number is
   *   safe: a failure of one makes the batch be retried, and re-applying is a no-op.
   */
  constructor(
    private readonly dataSource: DataSource,
    @Optional() @Inject(PROJECTION_PARTITIONS) private readonly partitions: number = 1,
  ) {}

  async applyBatch(messages: InboundMessage[]): Promise<MessageOutcome[]> {
    const outcomes: MessageOutcome[] = messages.map(() => ({ kind: 'applied' }));
    const decoded: { index: number; event: DecodedEvent }[] = messages.map((message, index) => ({ index, event: decodeEvent(message) }));
    for (const { index, event } of decoded) {
      if (event.type === 'invalid') outcomes[index] = { kind: 'dead-letter', reason: event.reason, cause: 'invalid' };
    }
    // Stream order decides which event fixes a recommendation's identity.
    const ordered = decoded
      .filter(({ event }) => event.type === 'lifecycle' || event.type === 'accounting' || event.type === 'reconciled')
      .sort((a, b) => (a.event as { sequence: number }).sequence - (b.event as { sequence: number }).sequence);
    if (ordered.length === 0) return outcomes;

    // Partitions are applied at once, each in its own transaction, so PostgreSQL works on one
    // while Node prepares the other. Every event of a recommendation stays in one partition, in
    // stream order, and partitions follow platforms so their rollup rows rarely meet.
    const partitions = partitionByPlatform(ordered, this.partitions);
    await Promise.all(
      partitions.map((partition) =>
        this.dataSource.transaction('READ COMMITTED', async (manager) => {
          const conflicts = await this.applyInTransaction(manager, partition);
          for (const [index, reason] of conflicts) outcomes[index] = { kind: 'dead-letter', reason, cause: 'conflict' };
        }),
      ),
    );
    const perKind = new Map<string, number>();
    for (const { event } of ordered) {
      const kind = event.type === 'lifecycle' ? event.kind : event.type;
      perKind.set(kind, (perKind.get(kind) ?? 0) + 1);
    }
    for (const [kind, count] of perKind) eventsApplied.inc({ kind }, count);
    return outcomes;
  }

  private async applyInTransaction(
    manager: EntityManager,
    ordered: { index: number; event: DecodedEvent }[],
  ): Promise<Map<number, string>> {
    const conflicts = new Map<number, string>();
    const lifecycle: { index: number; event: RecommendationEventDto; level: number }[] = [];
    const entries = new Map<string, AccountingEntryDto>();
    const watermarks = new Map<string, { traffic: string; agentId: string; through: string }>();
    for (const { index, event } of ordered) {
      if (event.type === 'lifecycle') lifecycle.push({ index, event: event.event, level: event.level });
      else if (event.type === 'accounting' && !entries.has(event.entry.entry_id)) entries.set(event.entry.entry_id, event.entry);
      else if (event.type === 'reconciled') {
        const agentId = event.watermark.agent_id ?? '';
        const key = `${event.watermark.traffic}\u0000${agentId}`;
        const previous = watermarks.get(key);
        if (!previous || Date.parse(previous.through) < Date.parse(event.watermark.reconciled_through)) {
          watermarks.set(key, { traffic: event.watermark.traffic, agentId, through: event.watermark.reconciled_through });
        }
      }
    }

    const recommendationIds = [
      ...new Set([
        ...lifecycle.map((l) => l.event.recommendation_id),
        ...[...entries.values()].map((e) => e.recommendation_id).filter((id): id is string => id !== null),
      ]),
    ].sort(byCodeUnit);

    const before = new Map<string, RecommendationState>();
    const after = new Map<string, RecommendationState>();
    if (recommendationIds.length > 0) {
      // A row exists for every referenced recommendation, so that an accounting entry and the
      // events of its recommendation always meet on the same row lock. First create the missing
      // rows (in id order; an existing row is skipped without a lock), then lock them all in id
      // order. Locking the existing rows before creating the missing ones took row locks out of
      // order whenever another transaction created one of "our" missing ids in between: two
      // replicas then deadlocked (test/faults/projection-replicas.spec.ts found it).
      await manager.query(
        `INSERT INTO reporting.recommendation (recommendation_id)
         SELECT unnest($1::text[]) ON CONFLICT DO NOTHING`,
        [recommendationIds],
      );
      const rows: RecommendationRow[] = await manager.query(
        `SELECT recommendation_id, agent_id, traffic,
                (extract(epoch FROM created_at) * 1000)::bigint AS created_at_ms, level, billable, attributed_entries,
                attributed_usd_micros, foreign_currency_entries
         FROM reporting.recommendation WHERE recommendation_id = ANY($1::text[])
         ORDER BY recommendation_id COLLATE "C" FOR UPDATE`,
        [recommendationIds],
      );
      for (const row of rows) {
        before.set(row.recommendation_id, toState(row));
        after.set(row.recommendation_id, toState(row));
      }
    }

    const deltas = new RollupDeltas();
    const becameKnown: string[] = [];

    // 1. Lifecycle: the first event fixes identity; later ones may only raise the level.
    for (const { index, event, level } of lifecycle) {
      const state = after.get(event.recommendation_id)!;
      const createdAtMs = Date.parse(event.recommendation_created_at);
      if (state.agentId === null) {
        state.agentId = event.agent_id;
        state.traffic = event.traffic;
        state.createdAtMs = createdAtMs;
        becameKnown.push(state.id);
      } else if (state.agentId !== event.agent_id || state.traffic !== event.traffic || state.createdAtMs !== createdAtMs) {
        conflicts.set(
          index,
          `event disagrees with the recommendation's first event (agent_id, traffic or recommendation_created_at)`,
        );
        continue;
      }
      state.level = Math.max(state.level, level);
      state.billable = state.billable || event.billable === true;
    }

    const attribute = (state: RecommendationState, entry: { amount: number; currency: string | null }) => {
      state.attributedEntries += 1;
      if (entry.currency === REPORT_CURRENCY) state.attributedUsdMicros += entry.amount;
      else state.foreignCurrencyEntries += 1;
    };
    const attributable = (entry: { agent_id: string; traffic: string; recommendation_id: string | null }) => {
      const state = entry.recommendation_id === null ? undefined : after.get(entry.recommendation_id);
      return state && state.agentId !== null && state.agentId === entry.agent_id && state.traffic === entry.traffic ? state : undefined;
    };
    const reviewDelta = (agentId: string, traffic: string, recordedAtMs: number, sign: 1 | -1) => {
      const delta = zeroCounters();
      delta.accounting_review_required = sign;
      deltas.add(agentId, traffic, recordedAtMs, delta);
    };

    // 2. Entries that waited under review for a recommendation that is now known.
    if (becameKnown.length > 0) {
      const waiting: EntryRow[] = await manager.query(
        `SELECT entry_id, agent_id, traffic, recommendation_id, amount_micros, currency, recorded_at
         FROM reporting.accounting_entry
         WHERE recommendation_id = ANY($1::text[]) AND NOT attributed
         ORDER BY entry_id COLLATE "C"`,
        [becameKnown.sort(byCodeUnit)],
      );
      const nowAttributed: string[] = [];
      for (const entry of waiting) {
        const state = attributable(entry);
        if (!state) continue;
        attribute(state, { amount: Number(entry.amount_micros), currency: entry.currency });
        reviewDelta(entry.agent_id, entry.traffic, entry.recorded_at.getTime(), -1);
        nowAttributed.push(entry.entry_id);
      }
      if (nowAttributed.length > 0) {
        await manager.query(`UPDATE reporting.accounting_entry SET attributed = true WHERE entry_id = ANY($1::text[])`, [nowAttributed]);
      }
    }

    // 3. New entries: stored once by entry_id; attributed now or counted under review.
    if (entries.size > 0) {
      const list = [...entries.values()].sort((a, b) => byCodeUnit(a.entry_id, b.entry_id));
      const decided = list.map((entry) => ({ entry, state: attributable(entry) }));
      const inserted: { entry_id: string }[] = await manager.query(
        `INSERT INTO reporting.accounting_entry
           (entry_id, agent_id, traffic, recommendation_id, amount_micros, currency, recorded_at, attributed)
         SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::text[], $7::timestamptz[], $8::boolean[])
         ON CONFLICT (entry_id) DO NOTHING
         RETURNING entry_id`,
        [
          decided.map((d) => d.entry.entry_id),
          decided.map((d) => d.entry.agent_id),
          decided.map((d) => d.entry.traffic),
          decided.map((d) => d.entry.recommendation_id),
          decided.map((d) => d.entry.amount_micros),
          decided.map((d) => d.entry.currency),
          decided.map((d) => d.entry.recorded_at),
          decided.map((d) => d.state !== undefined),
        ],
      );
      const isNew = new Set(inserted.map((row) => row.entry_id));
      for (const { entry, state } of decided) {
        if (!isNew.has(entry.entry_id)) continue;
        if (state) attribute(state, { amount: entry.amount_micros, currency: entry.currency });
        else reviewDelta(entry.agent_id, entry.traffic, Date.parse(entry.recorded_at), 1);
      }
    }

    // 4. Recommendation rows and the move of each between counters of its creation minute.
    const changed = [...after.values()].filter((state) => !sameFacts(state, before.get(state.id)!));
    for (const state of changed) {
      if (state.agentId === null || state.traffic === null || state.createdAtMs === null) continue;
      const previous = before.get(state.id)!;
      const delta = difference(contributionOf(state), previous.agentId === null ? zeroCounters() : contributionOf(previous));
      deltas.add(state.agentId, state.traffic, state.createdAtMs, delta);
    }
    if (changed.length > 0) {
      await manager.query(
        // Every row exists and is locked by now; an upsert is always driven by the primary key.
        `INSERT INTO reporting.recommendation AS r (recommendation_id, agent_id, traffic, created_at, level, billable,
           attributed_entries, attributed_usd_micros, foreign_currency_entries)
         SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[], $5::smallint[], $6::boolean[],
                              $7::integer[], $8::bigint[], $9::integer[])
         ON CONFLICT (recommendation_id) DO UPDATE SET
           agent_id = excluded.agent_id, traffic = excluded.traffic, created_at = excluded.created_at,
           level = excluded.level, billable = excluded.billable, attributed_entries = excluded.attributed_entries,
           attributed_usd_micros = excluded.attributed_usd_micros,
           foreign_currency_entries = excluded.foreign_currency_entries`,
        [
          changed.map((s) => s.id),
          changed.map((s) => s.agentId),
          changed.map((s) => s.traffic),
          arrayLiteral(changed.map((s) => (s.createdAtMs === null ? null : new Date(s.createdAtMs).toISOString()))),
          arrayLiteral(changed.map((s) => s.level)),
          arrayLiteral(changed.map((s) => s.billable)),
          arrayLiteral(changed.map((s) => s.attributedEntries)),
          arrayLiteral(changed.map((s) => s.attributedUsdMicros)),
          arrayLiteral(changed.map((s) => s.foreignCurrencyEntries)),
        ],
      );
    }

    // 5. Rollups, sorted, one statement per grain.
    for (const grain of GRAINS) {
      const rows = deltas.sorted(grain);
      if (rows.length === 0) continue;
      await manager.query(
        `INSERT INTO reporting.rollup_${grain} AS t (agent_id, traffic, bucket, exposures, clicks, engagements,
           conversions, earnings_micros, earnings_excluded_recommendations, pending_earnings_recommendations,
           accounting_review_required)
         SELECT * FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::bigint[], $5::bigint[], $6::bigint[],
           $7::bigint[], $8::bigint[], $9::bigint[], $10::bigint[], $11::bigint[])
         ON CONFLICT (agent_id, traffic, bucket) DO UPDATE SET
           exposures = t.exposures + excluded.exposures,
           clicks = t.clicks + excluded.clicks,
           engagements = t.engagements + excluded.engagements,
           conversions = t.conversions + excluded.conversions,
           earnings_micros = t.earnings_micros + excluded.earnings_micros,
           earnings_excluded_recommendations = t.earnings_excluded_recommendations + excluded.earnings_excluded_recommendations,
           pending_earnings_recommendations = t.pending_earnings_recommendations + excluded.pending_earnings_recommendations,
           accounting_review_required = t.accounting_review_required + excluded.accounting_review_required`,
        RollupDeltas.columns(rows),
      );
    }

    // 6. Reconciliation watermarks never move back.
    if (watermarks.size > 0) {
      const list = [...watermarks.values()].sort((a, b) => byCodeUnit(a.traffic + '\u0000' + a.agentId, b.traffic + '\u0000' + b.agentId));
      await manager.query(
        `INSERT INTO reporting.reconciliation_watermark AS w (traffic, agent_id, reconciled_through)
         SELECT * FROM unnest($1::text[], $2::text[], $3::timestamptz[])
         ON CONFLICT (traffic, agent_id) DO UPDATE
           SET reconciled_through = GREATEST(w.reconciled_through, excluded.reconciled_through)`,
        [list.map((w) => w.traffic), list.map((w) => w.agentId), list.map((w) => w.through)],
      );
    }
    return conflicts;
  }
}

