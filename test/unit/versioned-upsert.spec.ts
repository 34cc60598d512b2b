import { versionedUpsertSql } from '../../apps/payouts-read/src/ingestion/versioned-upsert.js';

describe('versionedUpsertSql (payouts-read read model)', () => {
  it('inserts the JSON records, replacing every non-key column only for a newer version', () => {
    const sql = versionedUpsertSql('payouts.thing', ['a', 'b'], { a: 'text', b: 'text', n: 'bigint', version: 'bigint' }).replace(/\s+/g, ' ');
    expect(sql).toBe(
      'INSERT INTO payouts.thing AS stored (a, b, n, version) SELECT a, b, n, version FROM jsonb_to_recordset($1::jsonb) AS x(a text, b text, n bigint, version bigint) ' +
        'ON CONFLICT (a, b) DO UPDATE SET n = excluded.n, version = excluded.version WHERE stored.version < excluded.version RETURNING 1',
    );
  });
});
