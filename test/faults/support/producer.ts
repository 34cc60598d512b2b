import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { ModelEvent } from '../../support/reference-model.js';
import type { Workload } from './workload.js';

// A fast concurrent producer that keeps only what JetStream acknowledged.

export interface PublishResult {
  /** Model events of the messages whose publish got a PubAck (all of them: failures are retried). */
  acked: ModelEvent[];
  /** PubAcks that were not duplicates (a retry of a publish stored before its PubAck was lost counts as a duplicate). */
  stored: number;
  duplicates: number;
  /** Publishes that failed (timeout, NATS down) and were sent again with the same Nats-Msg-Id. */
  retries: number;
  /** The failures' messages and how often each came (no responders while a stream leader is elected, timeouts). */
  retryReasons: Record<string, number>;
}

export interface Producer {
  connection: NatsConnection;
  manager: JetStreamManager;
  /**
   * Publishes with `concurrency` publishes in flight. A failed publish is retried with the same
   * Nats-Msg-Id until JetStream acknowledges it (a retry of a message that was stored after all
   * comes back as a duplicate), so every message ends up acknowledged exactly once in the model.
   */
  publish(workload: Workload, options?: { concurrency?: number; from?: number; to?: number; onAck?: (count: number) => void }): Promise<PublishResult>;
  close(): Promise<void>;
}

/** `servers`: one URL, or every server of a cluster (the client moves to another when one dies). */
export async function connectFaultProducer(servers: string | string[]): Promise<Producer> {
  const connection = await connect({ servers, maxReconnectAttempts: -1, reconnectTimeWait: 250, name: 'fault-producer' });
  const js = jetstream(connection);
  const manager = await jetstreamManager(connection);
  const encoder = new TextEncoder();
  return {
    connection,
    manager,
    publish: async (workload, { concurrency = 256, from = 0, to = workload.messages.length, onAck } = {}) => {
      const result: PublishResult = { acked: [], stored: 0, duplicates: 0, retries: 0, retryReasons: {} };
      const ackedIndexes: number[] = [];
      let next = from;
      const worker = async () => {
        while (next < to) {
          const index = next++;
          const message = workload.messages[index];
          const data = encoder.encode(message.data);
          for (let attempt = 0; ; attempt++) {
            try {
              const ack = await js.publish(message.subject, data, { msgID: message.msgId, timeout: 5000 });
              if (ack.duplicate) result.duplicates++;
              else result.stored++;
              ackedIndexes.push(index);
              onAck?.(ackedIndexes.length);
              break;
            } catch (error) {
              // Closed by the test (it failed or ended): nothing will be acknowledged any more.
              if (connection.isClosed()) throw error;
              result.retries++;
              const reason = (error as Error)?.message ?? String(error);
              result.retryReasons[reason] = (result.retryReasons[reason] ?? 0) + 1;
              if (attempt > 600) throw new Error(`publish of ${message.msgId} kept failing`);
              await new Promise((r) => setTimeout(r, 100));
            }
          }
        }
      };
      await Promise.all(Array.from({ length: concurrency }, worker));
      result.acked = ackedIndexes.sort((a, b) => a - b).map((i) => workload.modelOf[i]);
      return result;
    },
    close: async () => {
      await connection.drain().catch(() => connection.close());
    },
  };
}
