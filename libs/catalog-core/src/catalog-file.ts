import { readFile, stat } from 'node:fs/promises';
import { validateCatalog, type CatalogAd } from './catalog-validation.js';

/** A catalog file refused before anything was written: every problem found, one per line. */
export class CatalogFileError extends Error {
  constructor(
    message: string,
    readonly problems: string[] = [],
  ) {
    super(message);
    this.name = 'CatalogFileError';
  }
}

const MAX_FILE_BYTES = 64 * 1024 * 1024;
/** Problems printed at most; the count of the rest follows. */
const MAX_PROBLEMS_SHOWN = 100;

/** Reads and validates a whole catalog file; throws CatalogFileError listing every problem. */
export async function readCatalogFile(path: string): Promise<CatalogAd[]> {
  let size: number;
  try {
    size = (await stat(path)).size;
  } catch (error) {
    throw new CatalogFileError(`cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  if (size > MAX_FILE_BYTES) throw new CatalogFileError(`${path} is larger than ${MAX_FILE_BYTES} bytes`);
  let document: unknown;
  try {
    document = JSON.parse(await readFile(path, 'utf8'));
  } catch (error) {
    throw new CatalogFileError(`${path} is not valid JSON: ${(error as Error).message}`);
  }
  const result = validateCatalog(document);
  if (!result.ok) {
    const n = result.problems.length;
    throw new CatalogFileError(`${path} is not a valid catalog (${n} problem${n === 1 ? '' : 's'}); nothing was imported`, result.problems);
  }
  return result.ads;
}

/** Formats a CatalogFileError for stderr. */
export function describeCatalogFileError(error: CatalogFileError): string {
  const shown = error.problems.slice(0, MAX_PROBLEMS_SHOWN).map((problem) => `  ${problem}\n`);
  const more = error.problems.length > MAX_PROBLEMS_SHOWN ? `  … and ${error.problems.length - MAX_PROBLEMS_SHOWN} more\n` : '';
  return `error: ${error.message}${shown.length > 0 ? ':' : ''}\n${shown.join('')}${more}`;
}
