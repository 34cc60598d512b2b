/**
 * The publisher of bench:mixed and bench:soak, in a worker thread: the live stream of
 * live-workload.ts at a steady rate to JetStream, each event awaited for its PubAck as internal
 * producers do; a publish that fails is sent again under the same Nats-Msg-Id until it is
 * acknowledged (JetStream stores it once), so that every event drawn is in the stream and the
 * model of the run is exact. When told to stop it publishes the later events still owed, waits
 * for every acknowledgement and hands back what the model needs.
 */
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import type { ModelEvent } from '../test/support/reference-model.js';
import { connectProducer } from '../test/support/index.js';
import { LiveStream, type LiveEvent } from './live-workload.js';

interface Settings {
  natsUrl: string;
  eventsPerSecond: number;
  platforms: number;
}

export interface PublisherProgress {
  /** Events handed to JetStream (first attempts). */
  published: number;
  acked: number;
  /** Publishes that failed and were sent again. */
  retried: number;
  /** Events the steady rate wanted out but the in-flight bound held back (the publisher's own lag). */
  behind: number;
  /** Since publishing began (its own clock, without connecting and draining). */
  elapsedMs: number;
}

export interface PublisherDone extends PublisherProgress {
  /** Creation time of every recommendation published, by number (live-workload.ts). */
  created: number[];
  watermarks: ModelEvent[];
}

type Message = { type: 'ready' } | ({ type: 'progress' } & PublisherProgress) | ({ type: 'done' } & PublisherDone);

async function publish(settings: Settings): Promise<void> {
  const producer = await connectProducer(settings.natsUrl);
  const encoder = new TextEncoder();
  const stream = new LiveStream(settings.platforms);
  const counts: PublisherProgress = { published: 0, acked: 0, retried: 0, behind: 0, elapsedMs: 0 };
  const maxInFlight = Math.max(1000, settings.eventsPerSecond);
  const retries: LiveEvent[] = [];
  let inFlight = 0;
  let stopping = false;
  let go: () => void = () => undefined;
  const started = new Promise<void>((resolve) => (go = resolve));
  parentPort!.on('message', (message) => {
    if (message === 'start') go();
    if (message === 'stop') stopping = true;
  });
  const send = (event: LiveEvent) => {
    inFlight++;
    producer.js.publish(event.subject, encoder.encode(JSON.stringify(event.payload)), { msgID: event.msgId }).then(
      () => {
        counts.acked++;
        inFlight--;
      },
      () => {
        counts.retried++;
        inFlight--;
        retries.push(event);
      },
    );
  };
  parentPort!.postMessage({ type: 'ready' } satisfies Message);
  await started;
  const startedAt = Date.now();
  const progress = setInterval(() => parentPort!.postMessage({ type: 'progress', ...counts, elapsedMs: Date.now() - startedAt } satisfies Message), 1000);
  while (!stopping) {
    // Publish what the steady rate says is due by now; never more than maxInFlight unacknowledged.
    for (const event of retries.splice(0, maxInFlight - inFlight)) send(event);
    const due = Math.floor(((Date.now() - startedAt) * settings.eventsPerSecond) / 1000) - counts.published;
    const room = maxInFlight - inFlight;
    counts.behind = Math.max(0, due - room);
    for (let i = 0; i < Math.min(due, room); i++) {
      counts.published++;
      send(stream.next());
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  counts.elapsedMs = Date.now() - startedAt;
  const owed = stream.rest();
  counts.published += owed.length;
  retries.push(...owed);
  while (inFlight > 0 || retries.length > 0) {
    for (const event of retries.splice(0, maxInFlight - inFlight)) send(event);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  clearInterval(progress);
  await producer.close();
  parentPort!.postMessage({ type: 'done', ...counts, created: stream.created, watermarks: stream.watermarks } satisfies Message);
}

export interface LivePublisher {
  progress: PublisherProgress;
  /** Publishing begins (the thread is connected by now). */
  start(): void;
  /** Stops drawing new events; resolves once every event drawn is acknowledged. */
  stop(): Promise<PublisherDone>;
  terminate(): Promise<number>;
}

/** Starts the publisher thread and resolves once it is connected, ready to `start()`. */
export async function startLivePublisher(settings: Settings): Promise<LivePublisher> {
  const worker = new Worker(new URL(import.meta.url), { workerData: settings });
  const progress: PublisherProgress = { published: 0, acked: 0, retried: 0, behind: 0, elapsedMs: 0 };
  let done: (report: PublisherDone) => void = () => undefined;
  let failed: (error: Error) => void = () => undefined;
  let ready: () => void = () => undefined;
  const connected = new Promise<void>((resolve) => (ready = resolve));
  const finished = new Promise<PublisherDone>((resolve, reject) => {
    done = resolve;
    failed = reject;
  });
  worker.on('message', (message: Message) => {
    const { type, ...figures } = message;
    if (type === 'ready') ready();
    else if (type === 'done') done(figures as PublisherDone);
    else Object.assign(progress, figures);
  });
  worker.on('error', (error) => failed(error));
  await Promise.race([connected, finished]);
  return {
    progress,
    start: () => worker.postMessage('start'),
    stop: () => {
      worker.postMessage('stop');
      return finished;
    },
    terminate: () => worker.terminate(),
  };
}

if (!isMainThread) await publish(workerData as Settings);
