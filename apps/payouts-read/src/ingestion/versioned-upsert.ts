/**
 * The statement that writes a batch of read-model records, given as one JSON array ($1): a
 * record is inserted, or replaces the stored row of its key only when its `version` is newer
 * (`WHERE stored.version < excluded.version`); one row is returned per record written. Every
 * column but the key's is replaced. `columns` maps each column to its PostgreSQL type, in the
 * table's order.
 */
export function versionedUpsertSql(table: string, key: readonly string[], columns: Readonly<Record<string, string>>): string {
  const names = Object.keys(columns);
  const list = names.join(', ');
  return `INSERT INTO ${table} AS stored (${list})
       SELECT ${list}
         FROM jsonb_to_recordset($1::jsonb) AS x(${names.map((name) => `${name} ${columns[name]}`).join(', ')})
       ON CONFLICT (${key.join(', ')}) DO UPDATE SET
         ${names
           .filter((name) => !key.includes(name))
           .map((name) => `${name} = excluded.${name}`)
           .join(', ')}
       WHERE stored.version < excluded.version
       RETURNING 1`;
}
