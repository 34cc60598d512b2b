import pg from 'pg';
import { DataSource, type EntitySchema, type MixedList } from 'typeorm';

export interface ServiceDataSourceOptions {
  url: string;
  /** The PostgreSQL schema this service owns; no other service reads it (DESIGN §6). */
  schema: string;
  entities: MixedList<Function | string | EntitySchema>;
  migrations: MixedList<Function | string>;
  poolSize?: number;
  applicationName: string;
}

function databaseName(url: string): string {
  return decodeURIComponent(new URL(url).pathname.replace(/^\//, '')) || 'postgres';
}

/**
 * Creates the database of DATABASE_URL when it is missing (DESIGN §2). A service's own role
 * (deploy/postgres/least-privilege.sql) finds it there and needs no other database; creating
 * it takes CREATEDB and a connection to `postgres`. Raw SQL on plain pg clients: the DataSource
 * cannot connect to a database that does not exist yet.
 */
export async function ensureDatabase(url: string): Promise<void> {
  const probe = new pg.Client({ connectionString: url });
  try {
    await probe.connect();
    return;
  } catch (error) {
    if ((error as { code?: string }).code !== '3D000') throw error; // 3D000: no such database
  } finally {
    await probe.end().catch(() => undefined);
  }
  const name = databaseName(url);
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (rowCount === 0) {
      try {
        await client.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
      } catch (error) {
        // Another replica created it between our check and our create.
        if ((error as { code?: string }).code !== '42P04' && (error as { code?: string }).code !== '23505') throw error;
      }
    }
  } finally {
    await client.end();
  }
}

/**
 * The DataSource of one service schema, never synchronized: the schema comes from migrations.
 * Whoever runs them — a service at start, the ops CLI, or `npm run migration:run` through the
 * TypeORM CLI — gets the same preparation: the database is created when missing (initialize),
 * and the migrations run after the schema is created when missing, one transaction each, under an
 * advisory lock per schema, so replicas (and a CLI run) starting together migrate once.
 */
export class ServiceDataSource extends DataSource {
  constructor(
    /** The schema this DataSource's entities and migrations live in. */
    readonly schema: string,
    private readonly url: string,
    options: ConstructorParameters<typeof DataSource>[0],
  ) {
    super(options);
  }

  override async initialize(): Promise<this> {
    await ensureDatabase(this.url);
    return super.initialize();
  }

  override async runMigrations(options?: Parameters<DataSource['runMigrations']>[0]): ReturnType<DataSource['runMigrations']> {
    const runner = this.createQueryRunner();
    await runner.connect();
    const lockKey = `migrations:${this.schema}`;
    try {
      // Raw SQL: TypeORM has no API for advisory locks or for creating a schema.
      await runner.query('SELECT pg_advisory_lock(hashtext($1))', [lockKey]);
      // Only when missing: even with IF NOT EXISTS, CREATE SCHEMA needs CREATE on the database,
      // which a role that owns its existing schema does not have (least-privilege.sql).
      const quoted = `"${this.schema.replace(/"/g, '""')}"`;
      const [{ missing }] = (await runner.query('SELECT to_regnamespace($1) IS NULL AS missing', [quoted])) as { missing: boolean }[];
      if (missing) await runner.query(`CREATE SCHEMA IF NOT EXISTS ${quoted}`);
      return await super.runMigrations(options);
    } finally {
      await runner.query('SELECT pg_advisory_unlock(hashtext($1))', [lockKey]).catch(() => undefined);
      await runner.release();
    }
  }
}

export function createServiceDataSource(options: ServiceDataSourceOptions): ServiceDataSource {
  return new ServiceDataSource(options.schema, options.url, {
    type: 'postgres',
    url: options.url,
    schema: options.schema,
    entities: options.entities,
    migrations: options.migrations,
    migrationsTableName: 'migrations',
    migrationsTransactionMode: 'each',
    synchronize: false,
    migrationsRun: false,
    logging: false,
    applicationName: options.applicationName,
    extra: {
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: 5000,
      // Without this, a statement stuck behind a dead server holds a batch forever.
      statement_timeout: 60000,
    },
  });
}

/**
 * The DataSource's own pg pool (TypeORM's PostgresDriver keeps it as `master`), for the hot paths
 * that send raw SQL on a connection of their own rather than through a query runner.
 */
export function pgPoolOf(dataSource: DataSource): pg.Pool {
  return (dataSource.driver as unknown as { master: pg.Pool }).master;
}

/** Connects (creating the database when missing) and runs the pending migrations of its schema. */
export async function initializeDatabase(dataSource: DataSource): Promise<void> {
  if (!dataSource.isInitialized) await dataSource.initialize();
  await dataSource.runMigrations();
}

/** Whether a failure is the database being unreachable rather than something about the data. */
export function isTransientDatabaseError(error: unknown): boolean {
  const e = error as { code?: string; message?: string };
  const code = e?.code ?? '';
  if (code.startsWith('08') || code.startsWith('57P') || code === '53300' || code === '40001' || code === '40P01') return true;
  if (['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE'].includes(code)) return true;
  return /Connection terminated|connect ECONNREFUSED|timeout exceeded when trying to connect|Client has encountered a connection error|Connection is not established/i.test(
    e?.message ?? '',
  );
}
