import { sqlMigration } from '#libs/database';

const FIGURES = ['exposures', 'clicks', 'engagements', 'conversions', 'earnings_micros'] as const;

/**
 * The breakdown rows of old weeks folded into one row per (platform, traffic, ad, product)
 * (docs/decisions/breakdown-archive.md): once a week of `breakdown_pair` is older than every
 * period edge but `all`'s (the 90d window's start, with margins) and than the restatement window
 * (nothing writes it any more), the projection adds its rows to `breakdown_archive` and drops the
 * partition, in one transaction (StoragePartitions.foldBreakdowns). `breakdown_archive_window`
 * holds the bound: the archive sums exactly the pair rows of buckets before `archived_before`,
 * and pair rows only exist at or after it. It starts at -infinity (nothing folded): an existing
 * store is folded by the service's first maintenance run, not by this migration.
 *
 * Down: the archived rows go back into `breakdown_pair` as rows of the last hour before the
 * bound (a Monday 00:00 UTC, so that hour is whole), so the `all` breakdown, the only one that reaches that far, is unchanged.
 */
export const ReportingBreakdownArchive1795940000000 = sqlMigration(
  'ReportingBreakdownArchive1795940000000',
  [
    `
      CREATE TABLE reporting.breakdown_archive (
        agent_id text NOT NULL,
        traffic text NOT NULL,
        ad_id text NOT NULL,
        product_id text NOT NULL,
        ${FIGURES.map((figure) => `${figure} bigint NOT NULL DEFAULT 0`).join(',\n        ')},
        PRIMARY KEY (agent_id, traffic, ad_id, product_id)
      )`,
    `CREATE TABLE reporting.breakdown_archive_window (id smallint PRIMARY KEY CHECK (id = 1), archived_before timestamptz NOT NULL)`,
    `INSERT INTO reporting.breakdown_archive_window VALUES (1, '-infinity')`,
  ],
  [
    `SELECT reporting.ensure_breakdown_partitions(ARRAY[w.archived_before - interval '1 hour'])
       FROM reporting.breakdown_archive_window w WHERE EXISTS (SELECT 1 FROM reporting.breakdown_archive)`,
    `INSERT INTO reporting.breakdown_pair AS t (agent_id, traffic, bucket, ad_id, product_id, ${FIGURES.join(', ')})
     SELECT a.agent_id, a.traffic, w.archived_before - interval '1 hour', a.ad_id, a.product_id, ${FIGURES.map((f) => `a.${f}`).join(', ')}
       FROM reporting.breakdown_archive a CROSS JOIN reporting.breakdown_archive_window w
     ON CONFLICT (agent_id, traffic, bucket, ad_id, product_id) DO UPDATE SET ${FIGURES.map((f) => `${f} = t.${f} + excluded.${f}`).join(', ')}`,
    `DROP TABLE reporting.breakdown_archive`,
    `DROP TABLE reporting.breakdown_archive_window`,
  ],
);
