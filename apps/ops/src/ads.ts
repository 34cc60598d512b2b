import { RECOMMENDATIONS_MIGRATIONS, RECOMMENDATIONS_SCHEMA, importCatalogAds, listCatalogAds, readCatalogFile } from '#libs/catalog-core';
import { openMigratedPool, transaction } from './schema-pool.js';

export { CatalogFileError, describeCatalogFileError } from '#libs/catalog-core';

/**
 * `ops ads import --file catalog.json` and `ops ads list`: the catalog of the recommendations
 * service, schema `recommendations`, with the statements of #libs/catalog-core on a plain `pg`
 * pool. When the database or a migration is missing, the schema's migrations run first through
 * the recommendations DataSource (#libs/catalog, TypeORM), as the service would run them.
 * The file format and its rules: libs/catalog-core/src/catalog-validation.ts.
 */
export type AdsCommand = { kind: 'ads.import'; file: string } | { kind: 'ads.list'; limit: number };

/** Runs the command against DATABASE_URL; returns the one JSON object to print. */
export async function runAdsCommand(command: AdsCommand, databaseUrl: string): Promise<Record<string, unknown>> {
  // Validate the whole file before touching the database: an invalid file writes nothing.
  const ads = command.kind === 'ads.import' ? await readCatalogFile(command.file) : [];
  const pool = await openMigratedPool(databaseUrl, {
    name: RECOMMENDATIONS_SCHEMA,
    migrations: RECOMMENDATIONS_MIGRATIONS,
    dataSource: async () => (await import('#libs/catalog')).createRecommendationsDataSource(databaseUrl, 2, 'ops'),
  });
  try {
    if (command.kind === 'ads.import') return { ...(await importCatalogAds((work) => transaction(pool, work), ads)) };
    return { ...(await listCatalogAds(pool, command.limit)) };
  } finally {
    await pool.end().catch(() => undefined);
  }
}
