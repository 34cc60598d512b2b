import { prng } from '../../support/prng.js';
import type { ModelEvent } from '../../support/reference-model.js';

// Generated event streams (what producers publish) with the reference-model event of each message.

export interface WireMessage {
  subject: string;
  msgId: string;
  data: string;
}

export interface Workload {
  agents: string[];
  /** What producers publish, in publication order (shuffled, with duplicates). */
  messages: WireMessage[];
  /** One model event per wire message (duplicates included; the model drops them). */
  modelOf: ModelEvent[];
}

const LIFECYCLE = [
  { kind: 'generated', p: 0.6 },
  { kind: 'shown', p: 0.7 },
  { kind: 'mentioned', p: 0.15 },
  { kind: 'clicked', p: 0.4 },
  { kind: 'engaged', p: 0.2 },
  { kind: 'converted', p: 0.1 },
] as const;

/**
 * Many recommendations over a few platforms and both traffics, created over the last 100 days
 * (a third in the last 26 hours, so `today` and `1d` have data too), up to `newestAgeMs` before
 * now. Each recommendation gets a random subset of lifecycle events; accounting entries (USD,
 * foreign, unresolved currency, reversals, for unknown recommendations or another platform)
 * and reconciliation watermarks are mixed in. The whole stream is shuffled (levels and
 * accounting arrive out of order), then 3 % of events are published twice under another
 * Nats-Msg-Id (stored twice: the projection must absorb them) and 2 % twice under the same one
 * (JetStream drops the copy).
 */
export function buildWorkload(options: { seed: number; targetEvents: number; agents: string[]; newestAgeMs?: number; now?: number }): Workload {
  const random = prng(options.seed);
  const now = options.now ?? Date.now();
  const newestAgeMs = options.newestAgeMs ?? 3 * 60_000;
  const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)];
  const agents = options.agents;
  const items: { message: WireMessage; model: ModelEvent }[] = [];
  const push = (subject: string, msgId: string, payload: Record<string, unknown>, model: ModelEvent) =>
    items.push({ message: { subject, msgId, data: JSON.stringify(payload) }, model });
  const createdAt = () => {
    const span = random() < 0.35 ? 26 * 3_600_000 : 100 * 86_400_000;
    return new Date(now - newestAgeMs - Math.floor(random() * span));
  };

  let r = 0;
  let entries = 0;
  // Originals up to 95 % of the target; duplicates fill the rest.
  while (items.length < options.targetEvents * 0.95) {
    const id = `rec_${options.seed}_${r++}`;
    const agent = pick(agents);
    const traffic: 'live' | 'test' = random() < 0.25 ? 'test' : 'live';
    const created = createdAt();
    const kinds = LIFECYCLE.filter((l) => random() < l.p).map((l) => l.kind);
    if (kinds.length === 0) kinds.push('shown');
    for (const kind of kinds) {
      const billable = (kind === 'clicked' || kind === 'converted') && random() < 0.5 ? true : undefined;
      const eventId = `evt_${kind}_${id}`;
      const occurred = new Date(created.getTime() + Math.floor(random() * 60_000)).toISOString();
      const payload = {
        event_id: eventId,
        recommendation_id: id,
        agent_id: agent,
        traffic,
        recommendation_created_at: created.toISOString(),
        occurred_at: occurred,
        ...(billable ? { billable } : {}),
      };
      push(`events.recommendation.${kind}`, eventId, payload, {
        type: 'recommendation',
        kind,
        event_id: eventId,
        recommendation_id: id,
        agent_id: agent,
        traffic,
        recommendation_created_at: payload.recommendation_created_at,
        occurred_at: occurred,
        billable,
      });
    }
    if (random() < 0.2) {
      const count = random() < 0.25 ? 2 : 1;
      for (let i = 0; i < count; i++) {
        const entryId = `acc_${options.seed}_${entries++}`;
        const odd = random();
        const entry = {
          entry_id: entryId,
          // 3 %: recorded against another platform (never attributed: stays under review)
          agent_id: odd < 0.03 ? pick(agents.filter((a) => a !== agent).concat(`${agent}_other`)) : agent,
          traffic,
          // 4 %: no recommendation at all, 3 %: a recommendation nobody ever sends
          recommendation_id: odd >= 0.03 && odd < 0.07 ? null : odd >= 0.07 && odd < 0.1 ? `rec_unknown_${entryId}` : id,
          amount_micros: random() < 0.05 ? -Math.floor(random() * 500_000) : Math.floor(random() * 5_000_000),
          currency: random() < 0.04 ? 'EUR' : random() < 0.02 ? null : 'USD',
          recorded_at: new Date(created.getTime() + Math.floor(random() * 3_600_000)).toISOString(),
        };
        if (Date.parse(entry.recorded_at) > now - newestAgeMs) entry.recorded_at = created.toISOString();
        push('events.accounting.entry', entryId, entry, { type: 'accounting', ...entry });
      }
    }
  }
  for (let i = 0; i < 12; i++) {
    const eventId = `wm_${options.seed}_${i}`;
    const traffic = i % 2 === 0 ? 'live' : 'test';
    const agent = i % 3 === 0 ? pick(agents) : undefined;
    const through = new Date(now - newestAgeMs - Math.floor(random() * 3 * 86_400_000)).toISOString();
    const payload = { event_id: eventId, traffic, reconciled_through: through, ...(agent ? { agent_id: agent } : {}) };
    push('events.accounting.reconciled', eventId, payload, { type: 'reconciled', ...payload } as ModelEvent);
  }

  // Shuffle: levels, entries and watermarks arrive in any order.
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [items[i], items[j]] = [items[j], items[i]];
  }
  // Duplicates up to the target, each inserted after its original (one pass, no splicing).
  const originals = items.length;
  const insertedAfter = new Map<number, typeof items>();
  for (let i = 0; originals + i < options.targetEvents; i++) {
    const k = Math.floor(random() * originals);
    const { message, model } = items[k];
    const sameId = random() < 0.4;
    const after = k + Math.floor(random() * (originals - k));
    const copies = insertedAfter.get(after) ?? [];
    copies.push({ message: { ...message, msgId: sameId ? message.msgId : `${message.msgId}#copy${i}` }, model });
    insertedAfter.set(after, copies);
  }
  const ordered: typeof items = [];
  items.forEach((item, index) => ordered.push(item, ...(insertedAfter.get(index) ?? [])));
  return { agents, messages: ordered.map((i) => i.message), modelOf: ordered.map((i) => i.model) };
}

/**
 * Events that make concurrent transactions meet: event j names recommendation j/10 + 0…39, so
 * every batch holds recommendations that already have rows and ones that do not, and the same
 * ones as the batches other replicas apply at that moment (about ten events each, any level, in
 * any order). Two replicas on this stream deadlocked before the projection created missing rows
 * before locking (test/faults/projection-replicas.spec.ts).
 */
export function contentionWorkload(options: { seed: number; events: number; agents: string[]; now?: number }): Workload {
  const random = prng(options.seed);
  const now = options.now ?? Date.now();
  const messages: WireMessage[] = [];
  const modelOf: ModelEvent[] = [];
  const kinds = LIFECYCLE.map((l) => l.kind);
  for (let j = 0; j < options.events; j++) {
    const r = Math.floor(j / 10) + Math.floor(random() * 40);
    const recommendationId = `hot_${options.seed}_${String(r).padStart(7, '0')}`;
    const agent = options.agents[r % options.agents.length];
    const traffic: 'live' | 'test' = r % 5 === 0 ? 'test' : 'live';
    // Fixed per recommendation, as producers send it: created between 5 min and ~2 days ago.
    const created = new Date(Math.floor((now - 5 * 60_000 - ((r * 7_919_000) % (2 * 86_400_000))) / 1000) * 1000).toISOString();
    const kind = kinds[Math.floor(random() * kinds.length)];
    const eventId = `hot_evt_${options.seed}_${j}`;
    const payload = { event_id: eventId, recommendation_id: recommendationId, agent_id: agent, traffic, recommendation_created_at: created, occurred_at: created };
    messages.push({ subject: `events.recommendation.${kind}`, msgId: eventId, data: JSON.stringify(payload) });
    modelOf.push({ type: 'recommendation', kind, ...payload });
  }
  return { agents: options.agents, messages, modelOf };
}

/** Workloads one after the other, as one stream. */
export function concatenate(...workloads: Workload[]): Workload {
  return {
    agents: [...new Set(workloads.flatMap((w) => w.agents))],
    messages: workloads.flatMap((w) => w.messages),
    modelOf: workloads.flatMap((w) => w.modelOf),
  };
}
