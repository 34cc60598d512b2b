import { initializeDatabase } from '#libs/database';
import { createRecommendationsDataSource, importCatalog, listCatalog, readCatalogFile } from '#libs/catalog';

export { CatalogFileError, describeCatalogFileError } from '#libs/catalog';

/**
 * `ops ads import --file catalog.json` and `ops ads list`: the catalog of the recommendations
 * service, schema `recommendations` (its migrations run first, as the service would run them).
 * The file format and its rules: libs/catalog/src/catalog-validation.ts.
 */
export type AdsCommand = { kind: 'ads.import'; file: string } | { kind: 'ads.list'; limit: number };

/** Runs the command against DATABASE_URL; returns the one JSON object to print. */
export async function runAdsCommand(command: AdsCommand, databaseUrl: string): Promise<Record<string, unknown>> {
  // Validate the whole file before touching the database: an invalid file writes nothing.
  const ads = command.kind === 'ads.import' ? await readCatalogFile(command.file) : [];
  const dataSource = createRecommendationsDataSource(databaseUrl, 2, 'ops');
  try {
    await initializeDatabase(dataSource);
    if (command.kind === 'ads.import') return { ...(await importCatalog(dataSource, ads)) };
    return { ...(await listCatalog(dataSource, command.limit)) };
  } finally {
    if (dataSource.isInitialized) await dataSource.destroy().catch(() => undefined);
  }
}
