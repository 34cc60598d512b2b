import type { AccountingEntryDto, RecommendationEventDto } from '#libs/contracts';
import { contributionOf, difference, zeroCounters, type RecommendationFacts } from '../rules/counting.js';
import type { DecodedEvent } from './event-decoder.js';
import { BreakdownDeltas, attributeGenerated, sameAttribution, type Attribution } from './breakdown-deltas.js';
import { RollupDeltas } from './rollup-deltas.js';

const REPORT_CURRENCY = 'USD';

/** One recommendation row of the read model, as the projection reasons about it. */
export interface RecommendationState extends RecommendationFacts, Attribution {
  id: string;
  /** null until its first lifecycle event (a row that only holds early accounting entries). */
  agentId: string | null;
  traffic: string | null;
  createdAtMs: number | null;
}

/** An accounting entry stored by an earlier batch and not attributed yet. */
export interface WaitingEntry {
  entryId: string;
  agentId: string;
  traffic: string;
  recommendationId: string | null;
  amountMicros: number;
  currency: string | null;
  recordedAtMs: number;
}

/** A reconciliation watermark of the batch: the latest per (traffic, agent). */
export interface Watermark {
  traffic: string;
  agentId: string;
  through: string;
}

/** A decoded event and its position in the batch of messages (for its outcome). */
export type SequencedEvent = { index: number; event: DecodedEvent };

export const byCodeUnit = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function sameFacts(a: RecommendationState, b: RecommendationState): boolean {
  return (
    a.agentId === b.agentId &&
    a.traffic === b.traffic &&
    a.createdAtMs === b.createdAtMs &&
    a.level === b.level &&
    a.billable === b.billable &&
    a.attributedEntries === b.attributedEntries &&
    a.attributedUsdMicros === b.attributedUsdMicros &&
    a.foreignCurrencyEntries === b.foreignCurrencyEntries &&
    sameAttribution(a, b)
  );
}

/**
 * What a batch of decoded events (one partition, in stream order) does to the reporting read
 * model, worked out without I/O. The steps take what the writing transaction reads under its
 * locks, in this order (ProjectionRepository.write):
 *
 * 1. `applyLifecycle(rows)` with the locked rows of `recommendationIds`: the first event fixes a
 *    recommendation's identity, later ones may only raise its level; a disagreeing event is a
 *    conflict (dead-lettered). Returns the recommendations that became known.
 * 2. `attributeWaiting(entries)` with the unattributed entries of those: attributed now, and
 *    taken out of accounting_review_required. Returns their ids.
 * 3. `entriesToInsert()`, once per entry_id, each attributed now or not; then
 *    `countInserted(ids)` with the ids the insert really stored (a redelivered entry counts once).
 * 4. `changedRecommendations()`: the rows to write; their move between the counters of their
 *    creation minute goes into `rollups`, with the review deltas of steps 2 and 3.
 *
 * Steps 2 and 3a may be taken in either order (3a reads only the identities step 1 fixed), so a
 * writer can send both statements at once.
 *
 * Idempotent by construction: levels only rise, an entry is stored and attributed once,
 * watermarks only move forward; so a duplicate, a redelivery or a replay changes nothing.
 */
export class BatchPlan {
  /** Every recommendation the batch names, sorted: the row lock order. */
  readonly recommendationIds: string[];
  /** Latest watermark per (traffic, agent), sorted by that key: the lock order. */
  readonly watermarks: Watermark[];
  /** Rollup deltas per grain, filled by the steps. */
  readonly rollups = new RollupDeltas();
  /** Breakdown rollup deltas (by ad and product), filled by step 4. */
  readonly breakdowns = new BreakdownDeltas();
  /** Every creation time the batch names (recommendation_created_at, recorded_at): the weeks it writes. */
  readonly creationTimes: number[];
  /** Batch index → why that event is dead-lettered (it disagrees with its recommendation). */
  readonly conflicts = new Map<number, string>();
  /**
   * Per recommendation named by a lifecycle event: the creation time of its first one, where the
   * stored row (if any) is looked for first (the week partition of that instant).
   */
  readonly createdAtHints = new Map<string, number>();

  private readonly lifecycle: { index: number; event: RecommendationEventDto; level: number; createdAtMs: number }[] = [];
  /** The batch's entries, first of each entry_id, with their recorded_at as an instant. */
  private readonly entries = new Map<string, { entry: AccountingEntryDto; recordedAtMs: number }>();
  private readonly before = new Map<string, RecommendationState>();
  private readonly after = new Map<string, RecommendationState>();
  private decided: { entry: AccountingEntryDto; recordedAtMs: number; state: RecommendationState | undefined }[] = [];

  constructor(ordered: readonly SequencedEvent[]) {
    const watermarks = new Map<string, Watermark>();
    for (const { index, event } of ordered) {
      if (event.type === 'lifecycle') this.lifecycle.push({ index, event: event.event, level: event.level, createdAtMs: event.createdAtMs });
      else if (event.type === 'accounting' && !this.entries.has(event.entry.entry_id)) this.entries.set(event.entry.entry_id, { entry: event.entry, recordedAtMs: event.recordedAtMs });
      else if (event.type === 'reconciled') {
        const agentId = event.watermark.agent_id ?? '';
        const key = `${event.watermark.traffic}\u0000${agentId}`;
        const previous = watermarks.get(key);
        if (!previous || Date.parse(previous.through) < Date.parse(event.watermark.reconciled_through)) {
          watermarks.set(key, { traffic: event.watermark.traffic, agentId, through: event.watermark.reconciled_through });
        }
      }
    }
    const times = new Set<number>();
    for (const { event, createdAtMs } of this.lifecycle) {
      times.add(createdAtMs);
      if (!this.createdAtHints.has(event.recommendation_id)) this.createdAtHints.set(event.recommendation_id, createdAtMs);
    }
    for (const { recordedAtMs } of this.entries.values()) times.add(recordedAtMs);
    this.creationTimes = [...times];
    this.watermarks = [...watermarks.values()].sort((a, b) => byCodeUnit(a.traffic + '\u0000' + a.agentId, b.traffic + '\u0000' + b.agentId));
    this.recommendationIds = [
      ...new Set([
        ...this.lifecycle.map((l) => l.event.recommendation_id),
        ...[...this.entries.values()].map(({ entry }) => entry.recommendation_id).filter((id): id is string => id !== null),
      ]),
    ].sort(byCodeUnit);
  }

  /** Events, entries and watermarks the plan applies. */
  get size(): number {
    return this.lifecycle.length + this.entries.size + this.watermarks.length;
  }

  /** Step 1. `rows`: the current row of every id in `recommendationIds`. */
  applyLifecycle(rows: readonly RecommendationState[]): string[] {
    for (const row of rows) {
      this.before.set(row.id, row);
      this.after.set(row.id, { ...row });
    }
    const becameKnown: string[] = [];
    for (const { index, event, level, createdAtMs } of this.lifecycle) {
      const state = this.after.get(event.recommendation_id)!;
      if (state.agentId === null) {
        state.agentId = event.agent_id;
        state.traffic = event.traffic;
        state.createdAtMs = createdAtMs;
        becameKnown.push(state.id);
      } else if (state.agentId !== event.agent_id || state.traffic !== event.traffic || state.createdAtMs !== createdAtMs) {
        this.conflicts.set(index, `event disagrees with the recommendation's first event (agent_id, traffic or recommendation_created_at)`);
        continue;
      }
      state.level = Math.max(state.level, level);
      state.billable = state.billable || event.billable === true;
      attributeGenerated(state, event, level);
    }
    return becameKnown.sort(byCodeUnit);
  }

  /** The platform and traffic of a recommendation after step 1 (null while unknown). */
  identityOf(id: string): { agentId: string | null; traffic: string | null } {
    const state = this.after.get(id);
    return { agentId: state?.agentId ?? null, traffic: state?.traffic ?? null };
  }

  /**
   * Step 2. `waiting`: the stored, unattributed entries of the recommendations that became known
   * (the writer may pass only those of the same platform and traffic: the others are skipped).
   */
  attributeWaiting(waiting: readonly WaitingEntry[]): string[] {
    const nowAttributed: string[] = [];
    for (const entry of waiting) {
      const state = this.attributable(entry.agentId, entry.traffic, entry.recommendationId);
      if (!state) continue;
      this.attribute(state, entry.amountMicros, entry.currency);
      this.review(entry.agentId, entry.traffic, entry.recordedAtMs, -1);
      nowAttributed.push(entry.entryId);
    }
    return nowAttributed;
  }

  /** Step 3a. The batch's entries sorted by entry_id (the lock order), each attributed now or not. */
  entriesToInsert(): { entry: AccountingEntryDto; attributed: boolean }[] {
    const list = [...this.entries.values()].sort((a, b) => byCodeUnit(a.entry.entry_id, b.entry.entry_id));
    this.decided = list.map(({ entry, recordedAtMs }) => ({ entry, recordedAtMs, state: this.attributable(entry.agent_id, entry.traffic, entry.recommendation_id) }));
    return this.decided.map(({ entry, state }) => ({ entry, attributed: state !== undefined }));
  }

  /** Step 3b. `inserted`: the entry ids that were new; an entry stored before changes nothing. */
  countInserted(inserted: ReadonlySet<string>): void {
    for (const { entry, recordedAtMs, state } of this.decided) {
      if (!inserted.has(entry.entry_id)) continue;
      if (state) this.attribute(state, entry.amount_micros, entry.currency);
      else this.review(entry.agent_id, entry.traffic, recordedAtMs, 1);
    }
  }

  /** Step 4. The rows whose facts changed; their counters move within their creation minute. */
  changedRecommendations(): RecommendationState[] {
    const changed = [...this.after.values()].filter((state) => !sameFacts(state, this.before.get(state.id)!));
    for (const state of changed) {
      if (state.agentId === null || state.traffic === null || state.createdAtMs === null) continue;
      const previous = this.before.get(state.id)!;
      const now = contributionOf(state);
      const was = previous.agentId === null ? null : contributionOf(previous);
      this.rollups.add(state.agentId, state.traffic, state.createdAtMs, was ? difference(now, was) : now);
      this.breakdowns.move(previous, state, was, now);
    }
    return changed;
  }

  /** The known recommendation an entry belongs to (same platform and traffic), if any. */
  private attributable(agentId: string, traffic: string, recommendationId: string | null): RecommendationState | undefined {
    const state = recommendationId === null ? undefined : this.after.get(recommendationId);
    return state && state.agentId !== null && state.agentId === agentId && state.traffic === traffic ? state : undefined;
  }

  private attribute(state: RecommendationState, amountMicros: number, currency: string | null): void {
    state.attributedEntries += 1;
    if (currency === REPORT_CURRENCY) state.attributedUsdMicros += amountMicros;
    else state.foreignCurrencyEntries += 1;
  }

  /** An entry enters (+1) or leaves (-1) accounting review in the minute it was recorded. */
  private review(agentId: string, traffic: string, recordedAtMs: number, sign: 1 | -1): void {
    const delta = zeroCounters();
    delta.accounting_review_required = sign;
    this.rollups.add(agentId, traffic, recordedAtMs, delta);
  }
}
