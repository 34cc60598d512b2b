import {
  generateApiKey,
  generateKeyId,
  hashApiKey,
  hashApiKeyBase64,
  hashesEqual,
  isValidAgentId,
  isValidKeyId,
  looksLikeJwt,
  parseApiKey,
  parseBearer,
  randomBase62,
} from '#libs/identity';

const JWT =
  'eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwiaWF0IjoxNTE2MjM5MDIyfQ.' +
  'NHVaYe26MbtOYhSKkoKYdFVomg4i8ZJd8_-RU8VNbftc4TSMb4bXP3l3YlNWACwyXPGffz5aXHc6lty1Y2t4SWRqGteragsVdZufDn5BlnJl9pdR_kdVFUsra2rWKEofkZeIC4yWytE58sMIihvo9H1ScmmVwBcQP6XETqYd0aSHp1gOa9RdUPDvoXQ5oqygTqVtxaDr6wUFKrKItgBMzWIdNZ6y7O9E0DhEPTbE9rfBo6KTFsHAZnMg4k68CDp2woYIaXbmYTWcvbzIuHO7_37GT79XdIwkm95QJ7hYC9RiwrV7mesbY4PAahERJawntho0my942XheVLmGwLMBkQ';

describe('API key format', () => {
  it('generates sk_live_/sk_test_ + 40 base62 characters that parse back to their mode', () => {
    for (const mode of ['live', 'test'] as const) {
      const key = generateApiKey(mode);
      expect(key).toMatch(new RegExp(`^sk_${mode}_[0-9A-Za-z]{40}$`));
      expect(parseApiKey(key)).toEqual({ mode });
    }
    expect(generateApiKey('live')).not.toBe(generateApiKey('live'));
  });

  it('generates key ids key_ + 20 base62 characters', () => {
    const id = generateKeyId();
    expect(id).toMatch(/^key_[0-9A-Za-z]{20}$/);
    expect(isValidKeyId(id)).toBe(true);
    expect(isValidKeyId('key_short')).toBe(false);
  });

  it('rejects bytes >= 248 instead of reducing them modulo 62 (no bias)', () => {
    // 247 = 3*62 + 61 → 'z'; 248..255 must be skipped, 0 → '0'.
    const bytes = Buffer.from([255, 248, 247, 0, 250, 61, 62]);
    const out = randomBase62(4, () => bytes);
    expect(out).toBe('z0z0');
  });

  it('draws every base62 character about equally often', () => {
    const counts = new Map<string, number>();
    const sample = randomBase62(62 * 2000);
    for (const ch of sample) counts.set(ch, (counts.get(ch) ?? 0) + 1);
    expect(counts.size).toBe(62);
    for (const n of counts.values()) expect(Math.abs(n - 2000)).toBeLessThan(400);
  });

  it('rejects other shapes', () => {
    for (const bad of ['', 'sk_live_', 'sk_live_short', 'sk_prod_' + 'a'.repeat(40), 'SK_LIVE_' + 'a'.repeat(40), 'sk_live_' + 'a'.repeat(39) + '!', ' sk_live_' + 'a'.repeat(40)]) {
      expect(parseApiKey(bad)).toBeNull();
    }
  });

  it('hashes with SHA-256 of the whole secret and compares in constant time', () => {
    const key = generateApiKey('test');
    const hash = hashApiKey(key);
    expect(hash).toHaveLength(32);
    expect(hash.toString('hex')).not.toContain(Buffer.from(key).toString('hex'));
    expect(hashesEqual(hash, hashApiKey(key))).toBe(true);
    expect(hashesEqual(hash, hashApiKey(generateApiKey('test')))).toBe(false);
    expect(hashesEqual(hash, hash.subarray(0, 16))).toBe(false);
    // The base64 form (the gateway's cache key) is the same digest, and SHA-256 of a known input.
    expect(hashApiKeyBase64(key)).toBe(hash.toString('base64'));
    expect(hashApiKey('abc').toString('hex')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('validates agent ids', () => {
    expect(isValidAgentId('agent_123')).toBe(true);
    expect(isValidAgentId('')).toBe(false);
    expect(isValidAgentId('a b')).toBe(false);
    expect(isValidAgentId('a'.repeat(201))).toBe(false);
  });
});

describe('parseBearer', () => {
  const key = generateApiKey('live');

  it('accepts "Bearer <key>" with any scheme case', () => {
    expect(parseBearer(`Bearer ${key}`)).toEqual({ ok: true, apiKey: key, mode: 'live' });
    expect(parseBearer(`bearer ${key}`)).toEqual({ ok: true, apiKey: key, mode: 'live' });
    expect(parseBearer(`BEARER  ${key}`)).toMatchObject({ ok: true, apiKey: key });
  });

  it.each([
    [undefined, 'missing'],
    ['', 'missing'],
    ['   ', 'missing'],
    [key, 'not_bearer'],
    [`Basic ${Buffer.from('a:b').toString('base64')}`, 'not_bearer'],
    [`Token ${key}`, 'not_bearer'],
    ['Bearer', 'empty'],
    ['Bearer    ', 'empty'],
    [`Bearer ${JWT}`, 'id_token'],
    ['Bearer aaa.bbb.ccc', 'id_token'],
    ['Bearer sk_live_tooshort', 'malformed'],
    [`Bearer ${key} extra`, 'malformed'],
    [`Bearer ${key.replace('sk_live_', 'sk_prod_')}`, 'malformed'],
  ])('%s → %s', (header, reason) => {
    expect(parseBearer(header)).toEqual({ ok: false, reason });
  });

  it('detects JWT-looking tokens (three base64url segments)', () => {
    expect(looksLikeJwt(JWT)).toBe(true);
    expect(looksLikeJwt('a.b.')).toBe(true);
    expect(looksLikeJwt(key)).toBe(false);
    expect(looksLikeJwt('a.b')).toBe(false);
    expect(looksLikeJwt('a.b.c.d')).toBe(false);
  });
});
