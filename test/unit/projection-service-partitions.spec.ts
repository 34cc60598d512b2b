import { ProjectionService, partitionByPlatform } from '../../apps/reporting-projection/src/ingestion/projection.service.js';
import type { BatchPlan } from '../../apps/reporting-projection/src/ingestion/batch-plan.js';
import { decodeEvent } from '../../apps/reporting-projection/src/ingestion/event-decoder.js';
import type { ProjectionRepository } from '../../apps/reporting-projection/src/ingestion/projection.repository.js';
import { EventSubjects } from '#libs/contracts';
import type { InboundMessage } from '#libs/nats';

const encoder = new TextEncoder();

/** A reconciliation watermark of `agentId`: an event that goes to its platform's partition. */
function watermark(agentId: string, sequence: number): InboundMessage {
  const payload = { event_id: `wm-${sequence}`, traffic: 'live', reconciled_through: '2026-01-01T00:00:00.000Z', agent_id: agentId };
  return { subject: EventSubjects.accountingReconciled, data: encoder.encode(JSON.stringify(payload)), sequence, deliveries: 1 };
}

/** Two platforms that the batch splits into different partitions of two. */
function platformsInTwoPartitions(): [string, string] {
  const first = 'agent_a';
  for (let i = 0; ; i++) {
    const other = `agent_${i}`;
    const split = partitionByPlatform([watermark(first, 1), watermark(other, 2)].map((message, index) => ({ index, event: decodeEvent(message) })), 2);
    if (split.length === 2) return [first, other];
  }
}

describe('ProjectionService with a batch split into partitions', () => {
  it('throws a partition\'s failure only once every partition\'s transaction has ended', async () => {
    const [a, b] = platformsInTwoPartitions();
    const events: string[] = [];
    const repository = {
      restatementHorizon: () => 0,
      write: async (plan: BatchPlan) => {
        if (plan.watermarks[0].agentId === a) {
          events.push('failed');
          throw new Error('serialization failure');
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
        events.push('other committed');
        return new Map<number, string>();
      },
    } as unknown as ProjectionRepository;
    const service = new ProjectionService(repository, 2);

    await expect(service.applyBatch([watermark(a, 1), watermark(b, 2)])).rejects.toThrow('serialization failure');
    // The consumer retries or isolates the batch only after this; no write of it is still under way.
    expect(events).toEqual(['failed', 'other committed']);
  });

  it('resolves to every partition\'s outcomes when all commit', async () => {
    const [a, b] = platformsInTwoPartitions();
    const repository = {
      restatementHorizon: () => 0,
      write: async (plan: BatchPlan) => new Map<number, string>(plan.watermarks[0].agentId === b ? [[1, 'conflict in b']] : []),
    } as unknown as ProjectionRepository;
    const outcomes = await new ProjectionService(repository, 2).applyBatch([watermark(a, 1), watermark(b, 2)]);
    expect(outcomes).toEqual([{ kind: 'applied' }, { kind: 'dead-letter', reason: 'conflict in b', cause: 'conflict' }]);
  });
});
