import { plainToInstance } from 'class-transformer';
import { validate } from 'class-validator';
import { TimezoneChangedEventDto } from '#libs/contracts';

const decoder = new TextDecoder();

export type DecodedTimezoneChange = { ok: true; event: TimezoneChangedEventDto } | { ok: false; reason: string };

/** Validates a `settings.timezone.changed` payload against its contract (unknown fields are refused). */
export async function decodeTimezoneChanged(data: Uint8Array): Promise<DecodedTimezoneChange> {
  let payload: unknown;
  try {
    payload = JSON.parse(decoder.decode(data));
  } catch {
    return { ok: false, reason: 'payload is not JSON' };
  }
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return { ok: false, reason: 'payload must be a JSON object' };
  const event = plainToInstance(TimezoneChangedEventDto, payload);
  const problems = await validate(event, { whitelist: true, forbidNonWhitelisted: true });
  if (problems.length > 0) {
    return { ok: false, reason: problems.flatMap((p) => Object.values(p.constraints ?? {})).join('; ') };
  }
  return { ok: true, event };
}
