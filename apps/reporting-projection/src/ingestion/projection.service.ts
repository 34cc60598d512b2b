import { Inject, Injectable, Optional } from '@nestjs/common';
import type { InboundMessage, MessageOutcome } from '#libs/nats';
import { counter } from '#libs/observability';
import { BatchPlan, type SequencedEvent } from './batch-plan.js';
import { decodeEvent, type DecodedEvent } from './event-decoder.js';
import { ProjectionRepository } from './projection.repository.js';

const eventsApplied = counter('weave_events_applied_total', 'Events applied to the reporting projection', ['kind']);

export const PROJECTION_PARTITIONS = Symbol('PROJECTION_PARTITIONS');

/** The dead-letter reason of an event or entry older than the restatement window (DESIGN §10). */
export const PAST_RESTATEMENT_WINDOW = 'past restatement window';

/** When the recommendation of an event was created; for an entry, when it was recorded (its recommendation was created no later). */
function createdAt(event: DecodedEvent): number {
  if (event.type === 'lifecycle') return event.createdAtMs;
  if (event.type === 'accounting') return event.recordedAtMs;
  return Number.POSITIVE_INFINITY;
}

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
export function partitionByPlatform(ordered: SequencedEvent[], count: number): SequencedEvent[][] {
  if (count <= 1) return [ordered];
  const partitions: SequencedEvent[][] = Array.from({ length: count }, () => []);
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

/**
 * Applies a batch of stream messages to the reporting read model: decodes them (invalid ones
 * are dead-lettered), orders them by stream sequence, splits them by platform, and has each
 * partition's BatchPlan written in its own transaction (ProjectionRepository).
 */
@Injectable()
export class ProjectionService {
  /**
   * @param partitions transactions a batch is split into (INGEST_CONCURRENCY). Any number is
   *   safe: a failure of one makes the batch be retried, and re-applying is a no-op.
   */
  constructor(
    private readonly repository: ProjectionRepository,
    @Optional() @Inject(PROJECTION_PARTITIONS) private readonly partitions: number = 1,
  ) {}

  async applyBatch(messages: InboundMessage[]): Promise<MessageOutcome[]> {
    const outcomes: MessageOutcome[] = messages.map(() => ({ kind: 'applied' }));
    const decoded: SequencedEvent[] = messages.map((message, index) => ({ index, event: decodeEvent(message) }));
    const horizon = this.repository.restatementHorizon();
    for (const item of decoded) {
      const { index, event } = item;
      if (event.type === 'invalid') outcomes[index] = { kind: 'dead-letter', reason: event.reason, cause: 'invalid' };
      else if (createdAt(event) < horizon) {
        // DESIGN §10: no longer changes any total; its week may already be gone.
        outcomes[index] = { kind: 'dead-letter', reason: PAST_RESTATEMENT_WINDOW, cause: 'past_restatement_window' };
        item.event = { type: 'not-ours' };
      }
    }
    // Stream order decides which event fixes a recommendation's identity.
    const ordered = decoded
      .filter(({ event }) => event.type === 'lifecycle' || event.type === 'accounting' || event.type === 'reconciled')
      .sort((a, b) => (a.event as { sequence: number }).sequence - (b.event as { sequence: number }).sequence);
    if (ordered.length === 0) return outcomes;

    // Partitions are applied at once, each in its own transaction, so PostgreSQL works on one
    // while Node prepares the other. Every event of a recommendation stays in one partition, in
    // stream order, and partitions follow platforms so their rollup rows rarely meet.
    // Every partition is waited for, failed or not: a batch that throws (and is retried or
    // isolated message by message) has no transaction of its own still under way.
    const written = await Promise.allSettled(partitionByPlatform(ordered, this.partitions).map((partition) => this.repository.write(new BatchPlan(partition))));
    for (const result of written) {
      if (result.status === 'rejected') throw result.reason;
      for (const [index, reason] of result.value) outcomes[index] = { kind: 'dead-letter', reason, cause: 'conflict' };
    }
    const perKind = new Map<string, number>();
    for (const { event } of ordered) {
      const kind = event.type === 'lifecycle' ? event.kind : event.type;
      perKind.set(kind, (perKind.get(kind) ?? 0) + 1);
    }
    for (const [kind, count] of perKind) eventsApplied.inc({ kind }, count);
    return outcomes;
  }
}
