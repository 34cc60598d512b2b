import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { JetStreamManager } from '@nats-io/jetstream';

interface Marker {
  stream: string;
  /** Stream sequence and Nats-Msg-Id of the week's last message. */
  sequence: number;
  id: string;
}

/**
 * Whether the week whose last message is `lastId` is already in `stream`: a file beside the
 * keys remembers where its last message was stored, and the stream itself confirms it (the
 * message at that sequence carries that Nats-Msg-Id), so a wiped store or another NATS server
 * is never mistaken for a published week. JetStream's own duplicate detection only spans two
 * minutes; without this a later run would store the week's messages again (harmless, the
 * consumers are idempotent, but the stream would grow with every run).
 */
export async function alreadyInStream(manager: JetStreamManager, file: string, stream: string, lastId: string): Promise<number | undefined> {
  const marker = await readFile(file, 'utf8')
    .then((text) => JSON.parse(text) as Marker)
    .catch(() => undefined);
  if (!marker || marker.stream !== stream || marker.id !== lastId) return undefined;
  const stored = await manager.streams.getMessage(stream, { seq: marker.sequence }).catch(() => null);
  return stored?.header?.get('Nats-Msg-Id') === lastId ? marker.sequence : undefined;
}

export async function rememberInStream(file: string, marker: Marker): Promise<void> {
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  await writeFile(file, `${JSON.stringify(marker)}\n`, { mode: 0o600 });
}
