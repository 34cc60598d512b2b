import { defineCommand, limitOption, OpsFailure, type OpsContext } from './definition.js';
import type { AdsCommand } from './ads.js';

async function runAds(command: AdsCommand, context: OpsContext): Promise<Record<string, unknown>> {
  const { CatalogFileError, describeCatalogFileError, runAdsCommand } = await import('./ads.js');
  try {
    return await runAdsCommand(command, await context.databaseUrl());
  } catch (error) {
    if (error instanceof CatalogFileError) throw new OpsFailure(error.message, 1, describeCatalogFileError(error));
    throw error;
  }
}

/** The recommendations catalog (DESIGN §3 `ads import`, and `ads list`). */
export const commands = [
  defineCommand({
    name: 'ads import',
    usage: '--file catalog.json  (validate the whole file, then upsert by ad_id)',
    required: ['file'],
    optional: [],
    parse: (o): AdsCommand => ({ kind: 'ads.import', file: o.file! }),
    run: runAds,
  }),
  defineCommand({
    name: 'ads list',
    usage: '[--limit N (default 100, max 1000)]',
    required: [],
    optional: ['limit'],
    parse: (o): AdsCommand => ({ kind: 'ads.list', limit: limitOption(o.limit, 100, 1000) }),
    run: runAds,
  }),
];
