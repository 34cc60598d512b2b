import pg from 'pg';
import type { DataSource } from 'typeorm';

/** A service schema the CLI writes with plain SQL, and how to migrate it when it is behind. */
export interface MigratedSchema {
  /** The schema, whose table `migrations` TypeORM keeps. */
  name: string;
  /** Its migrations, by the names TypeORM records: those of its DataSource. */
  migrations: readonly string[];
  /** The schema's DataSource, not initialized (its library is imported only to migrate). */
  dataSource(): Promise<DataSource>;
}

/**
 * A `pg` pool on DATABASE_URL whose schema has every migration run. Only when the database or
 * a migration is missing does it load TypeORM, to create the database and migrate the schema
 * through its DataSource exactly as the service would at start.
 */
export async function openMigratedPool(url: string, schema: MigratedSchema): Promise<pg.Pool> {
  // The DataSources' pool settings for the CLI (libs/database createServiceDataSource): a pool,
  // so that a batch outlives a dropped connection as it did on a DataSource.
  const pool = new pg.Pool({ connectionString: url, application_name: 'ops', max: 2, connectionTimeoutMillis: 5000, statement_timeout: 60000 });
  pool.on('error', () => undefined); // an idle connection that drops is replaced on next use
  try {
    if (!(await migrated(pool, schema))) await migrate(schema);
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw error;
  }
  return pool;
}

/** Whether the database exists and every migration of the schema has run. */
async function migrated(pool: pg.Pool, schema: MigratedSchema): Promise<boolean> {
  const table = `${schema.name}.migrations`;
  let present;
  try {
    ({ rows: [{ present }] } = await pool.query<{ present: boolean }>(`SELECT to_regclass($1) IS NOT NULL AS present`, [table]));
  } catch (error) {
    if ((error as { code?: string }).code === '3D000') return false; // no such database: migrating creates it
    throw error;
  }
  if (!present) return false;
  const done = await pool.query<{ name: string }>(`SELECT name FROM ${table}`);
  const names = new Set(done.rows.map((row) => row.name));
  return schema.migrations.every((name) => names.has(name));
}

/** Creates the database when missing and runs the pending migrations, as the service does at start. */
async function migrate(schema: MigratedSchema): Promise<void> {
  const [dataSource, { initializeDatabase }] = await Promise.all([schema.dataSource(), import('#libs/database')]);
  try {
    await initializeDatabase(dataSource);
  } finally {
    if (dataSource.isInitialized) await dataSource.destroy().catch(() => undefined);
  }
}

/** Runs `work` on one connection in one transaction: committed when it resolves, rolled back when it rejects. */
export async function transaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    try {
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      // A connection that cannot even roll back is closed, not returned to the pool.
      await client.query('ROLLBACK').catch((rollback: Error) => (broken = rollback));
      throw error;
    }
  } finally {
    client.release(broken);
  }
}
