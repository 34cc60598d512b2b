import { isUtcTimestamp, parseEventJson } from '#libs/contracts';

const bytes = (text: string) => new TextEncoder().encode(text);

describe('parseEventJson', () => {
  it('parses UTF-8 JSON', () => {
    expect(parseEventJson(bytes('{"agent_id":"agent_é"}'))).toEqual({ ok: true, value: { agent_id: 'agent_é' } });
  });

  it('refuses invalid UTF-8 and invalid JSON with one reason', () => {
    expect(parseEventJson(new Uint8Array([0x7b, 0xff, 0x7d]))).toEqual({ ok: false, reason: 'payload is not valid UTF-8 JSON' });
    expect(parseEventJson(bytes('{"agent_id":'))).toEqual({ ok: false, reason: 'payload is not valid UTF-8 JSON' });
  });

  it('refuses a NUL character anywhere (PostgreSQL text cannot hold it), so it is dead-lettered at once', () => {
    const parsed = parseEventJson(bytes('{"recommendation_id":"rec_\\u0000x"}'));
    expect(parsed.ok).toBe(false);
    expect(parsed.ok === false && parsed.reason).toMatch(/NUL/);
    expect(parseEventJson(bytes('{"k":{"nested":["a\\u0000"]}}')).ok).toBe(false);
  });
});

describe('isUtcTimestamp', () => {
  it('refuses year 0000, which JavaScript parses but PostgreSQL does not store', () => {
    expect(Number.isNaN(Date.parse('0000-01-01T00:00:00Z'))).toBe(false);
    expect(isUtcTimestamp('0000-01-01T00:00:00Z')).toBe(false);
    expect(isUtcTimestamp('0001-01-01T00:00:00Z')).toBe(true);
    expect(isUtcTimestamp('2026-11-25T10:15:42.120Z')).toBe(true);
  });
});
