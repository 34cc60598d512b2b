import pg from 'pg';

/** One table or partition of the reporting schema and what it takes on disk. */
interface RelationSize {
  total_bytes: number;
  table_bytes: number;
  index_bytes: number;
  /** PostgreSQL's estimate (pg_class.reltuples, as of the last ANALYZE or VACUUM); null when never analyzed. */
  rows_estimate: number | null;
}

interface RelationRow {
  name: string;
  parent: string | null;
  partitioned: boolean;
  bound: string | null;
  total_bytes: string;
  table_bytes: string;
  index_bytes: string;
  reltuples: number;
}

const sizeOf = (row: RelationRow): RelationSize => ({
  total_bytes: Number(row.total_bytes),
  table_bytes: Number(row.table_bytes),
  index_bytes: Number(row.index_bytes),
  rows_estimate: row.reltuples < 0 ? null : Math.round(row.reltuples),
});

/**
 * `ops storage` (DESIGN §10): the size of each table of the reporting schema and, for a
 * partitioned table, of each partition (its range of creation time) and their sum. Read-only
 * catalog queries; the CLI never migrates the reporting schema.
 */
export async function reportingStorage(databaseUrl: string): Promise<Record<string, unknown>> {
  const client = new pg.Client({ connectionString: databaseUrl, application_name: 'ops' });
  await client.connect();
  try {
    const { rows: schema } = await client.query(`SELECT to_regnamespace('reporting') IS NOT NULL AS present`);
    if (!schema[0].present) throw new Error('schema reporting does not exist (start reporting-projection once to create it)');
    const { rows } = await client.query<RelationRow>(
      `SELECT c.relname AS name, p.relname AS parent, c.relkind = 'p' AS partitioned,
              pg_get_expr(c.relpartbound, c.oid) AS bound,
              pg_total_relation_size(c.oid) AS total_bytes, pg_relation_size(c.oid) AS table_bytes,
              pg_indexes_size(c.oid) AS index_bytes, c.reltuples
         FROM pg_class c
         LEFT JOIN pg_inherits i ON i.inhrelid = c.oid
         LEFT JOIN pg_class p ON p.oid = i.inhparent
        WHERE c.relnamespace = 'reporting'::regnamespace AND c.relkind IN ('r', 'p')
        ORDER BY c.relname`,
    );
    const tables = rows
      .filter((row) => row.parent === null)
      .map((row) => {
        if (!row.partitioned) return { table: row.name, partitioned: false, ...sizeOf(row) };
        const partitions = rows
          .filter((child) => child.parent === row.name)
          .map((child) => ({ partition: child.name, range: child.bound, ...sizeOf(child) }));
        const sum = (key: 'total_bytes' | 'table_bytes' | 'index_bytes') => partitions.reduce((total, p) => total + p[key], 0);
        const estimates = partitions.map((p) => p.rows_estimate);
        return {
          table: row.name,
          partitioned: true,
          total_bytes: sum('total_bytes'),
          table_bytes: sum('table_bytes'),
          index_bytes: sum('index_bytes'),
          rows_estimate: estimates.includes(null) ? null : estimates.reduce((a, b) => a! + b!, 0),
          partitions,
        };
      })
      .sort((a, b) => b.total_bytes - a.total_bytes);
    return { schema: 'reporting', total_bytes: tables.reduce((total, t) => total + t.total_bytes, 0), tables };
  } finally {
    await client.end();
  }
}
