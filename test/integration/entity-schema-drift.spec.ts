import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import pg from 'pg';
import { RECOMMENDATIONS_MIGRATIONS } from '#libs/catalog-core';
import { newTestDatabase, type TestDatabase } from '../support/index.js';

/**
 * The entities equal the schema the migrations create (the drift check), through the commands
 * of README "Operations": `npm run migration:run -- <schema>` on a fresh database, then
 * `npm run migration:generate -- <schema> --check`, which asks TypeORM to generate a migration
 * from the entities and fails when it would not be empty. Runs the built dist/ (`npm run build`
 * first; `npm test` does), like the ops CLI spec.
 */
const SCRIPT = resolve('scripts/migration.mjs');

/** Each schema with the migrations its data source lists, in order. */
const SCHEMAS: Record<string, string[]> = {
  identity: [
    'IdentityInitial1764201600000',
    'IdentityGeneratedSecret1795686268941',
    'IdentityOwnerKeys1795740000000',
    'IdentityOutbox1795750000000',
    'IdentityVersion1795760000000',
  ],
  // The list createRecommendationsDataSource runs (test/unit/recommendations-catalog.spec.ts holds them equal).
  recommendations: [...RECOMMENDATIONS_MIGRATIONS],
  timezone_settings: ['TimezoneSettingsInitial1764201600001', 'TimezoneSettingsOutbox1764288000000'],
  // No entities (raw SQL on the projection and payout hot paths): the check has nothing to compare,
  // but migration:run must work for them too.
  reporting: ['ReportingInitial1764115200000', 'ReportingSeries1795740000001', 'ReportingPartitioned1795800000000', 'ReportingQuarterRollups1795910000000', 'ReportingBreakdowns1795920000000', 'ReportingBreakdownPairs1795930000000', 'ReportingBreakdownArchive1795940000000'],
  payouts: ['PayoutsInitial1764201600000'],
};

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function migration(args: string[]): Promise<Run> {
  return new Promise((done) => {
    execFile(process.execPath, [SCRIPT, ...args], { env: { ...process.env, DATABASE_URL: db.url }, timeout: 60000 }, (error, stdout, stderr) =>
      done({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

let db: TestDatabase;
let sql: pg.Client;

beforeAll(async () => {
  if (!existsSync(resolve('dist/libs/identity/src/identity.cli-data-source.js'))) throw new Error('dist/ is missing: run npm run build first');
  db = newTestDatabase();
  // The five schemas share one database, as the services do.
  for (const schema of Object.keys(SCHEMAS)) {
    const run = await migration(['run', schema]);
    if (run.code !== 0) throw new Error(`migration:run ${schema} failed (${run.code}): ${run.stderr}${run.stdout.slice(-2000)}`);
  }
  sql = new pg.Client({ connectionString: db.url });
  await sql.connect();
});

afterAll(async () => {
  await sql?.end();
  await db?.drop();
});

describe.each(Object.entries(SCHEMAS))('schema %s', (schema, migrations) => {
  test('migration:run created the schema and ran every migration once', async () => {
    const { rows } = await sql.query<{ name: string }>(`SELECT name FROM "${schema}".migrations ORDER BY id`);
    expect(rows.map((row) => row.name)).toEqual(migrations);
  });

  test('migration:generate --check finds nothing to change: the entities equal the migrated schema', async () => {
    const run = await migration(['generate', schema, '--check']);
    expect(`${run.stdout}${run.stderr}`).toContain('No changes in database schema were found');
    expect(run.code).toBe(0);
  });
});

test('migration:run again is a no-op', async () => {
  const run = await migration(['run', 'identity']);
  expect(run.code).toBe(0);
  expect(run.stdout).toContain('No migrations are pending');
});

test('the check fails, naming the change, when the schema differs from the entities', async () => {
  await sql.query('ALTER TABLE identity.api_key DROP CONSTRAINT api_key_mode_check');
  try {
    const run = await migration(['generate', 'identity', '--check']);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/ADD CONSTRAINT "api_key_mode_check" CHECK \(mode IN \('live', 'test'\)\)/);
  } finally {
    await sql.query(`ALTER TABLE identity.api_key ADD CONSTRAINT api_key_mode_check CHECK (mode IN ('live', 'test'))`);
  }
});

test('an unknown schema is refused with the usage', async () => {
  const run = await migration(['run', 'nope']);
  expect(run.code).toBe(2);
  expect(run.stderr).toMatch(/unknown schema "nope"[\s\S]*usage: /);
});
