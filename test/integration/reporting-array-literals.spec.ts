import pg from 'pg';
import { arrayLiteral, quoteLiteral, textArrayLiteral } from '#libs/database';
import { POSTGRES_ADMIN_URL } from '../support/index.js';

// The projection sends its array arguments as literals it builds itself: PostgreSQL must read
// back exactly the values written, whatever an id holds.
describe('array literals of the ingest path', () => {
  let client: pg.Client;
  beforeAll(async () => {
    client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
    await client.connect();
  });
  afterAll(() => client.end());

  const roundTrip = async (values: (string | null)[]) =>
    (await client.query<{ v: (string | null)[] }>('SELECT $1::text[] AS v', [textArrayLiteral(values)])).rows[0].v;

  it('reads text arrays back exactly: quotes, backslashes, separators, blanks, NULL as a word, null and empty', async () => {
    const awkward = ['rec_1', "it's", "''", 'a"b', 'back\\slash', '\\"', 'a,b', '{x}', ' lead and trail ', '', 'NULL', 'null', 'tab\there', 'new\nline', 'ünï©ødé'];
    expect(await roundTrip(awkward)).toEqual(awkward);
    expect(await roundTrip([...awkward, null, 'after'])).toEqual([...awkward, null, 'after']);
    expect(await roundTrip(['plain', 'ids', 'only'])).toEqual(['plain', 'ids', 'only']);
    expect(await roundTrip([null])).toEqual([null]);
    expect(await roundTrip([])).toEqual([]);
  });

  it('reads the same arrays back when a large batch inlines them into its statements as quoted literals', async () => {
    const inlined = async (values: (string | null)[]) =>
      (await client.query<{ v: (string | null)[] }>(`SELECT ${quoteLiteral(textArrayLiteral(values))}::text[] AS v`)).rows[0].v;
    const awkward = ['rec_1', "it's", "''", 'a"b', 'back\\slash', "\\'", '\\"', 'a,b', '{x}', ' lead ', '', 'NULL', null];
    expect(await inlined(awkward)).toEqual(awkward);
    expect(await inlined(['plain', 'ids'])).toEqual(['plain', 'ids']);
  });

  it('reads number, boolean and timestamp arrays back exactly', async () => {
    const { rows } = await client.query<{ n: string[]; b: boolean[]; t: Date[] }>(
      'SELECT $1::bigint[] AS n, $2::boolean[] AS b, $3::timestamptz[] AS t',
      [arrayLiteral([0, -5, 9007199254740991, null]), arrayLiteral([true, false, null]), arrayLiteral(['2026-03-02T10:15:20.123Z', null])],
    );
    expect(rows[0].n).toEqual(['0', '-5', '9007199254740991', null]);
    expect(rows[0].b).toEqual([true, false, null]);
    expect(rows[0].t.map((t) => t?.toISOString() ?? null)).toEqual(['2026-03-02T10:15:20.123Z', null]);
  });
});
