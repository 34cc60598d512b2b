import { existsSync } from 'node:fs';
import { ConfigError, loadEnv } from '#libs/config';
import { CatalogFileError, describeCatalogFileError } from '#libs/catalog';
import { IdentityError } from '#libs/identity';
import { DemoEnv } from './config/demo.env.js';
import { DemoFailure, runDemo } from './demo.js';
import { summary } from './summary.js';

/**
 * `npm run demo [-- --json]`: the demo platform, its keys and a week of activity (see demo.ts).
 * Progress and status go to stderr; the summary (or with --json one JSON object: the keys, the
 * published counts and the expected reports, for scripts) to stdout. Exit 0 done, 1 failed
 * (one line per cause, no stack trace), 2 bad usage.
 */
async function main(argv: string[]): Promise<number> {
  const unknown = argv.filter((arg) => arg !== '--json');
  if (unknown.length > 0) {
    process.stderr.write(`unknown argument(s): ${unknown.join(' ')}\nusage: npm run demo [-- --json]\n`);
    return 2;
  }
  try {
    const env = loadEnv(DemoEnv);
    const result = await runDemo(env, (line) => process.stderr.write(`${line}\n`));
    process.stdout.write(argv.includes('--json') ? `${JSON.stringify(result)}\n` : summary(result, existsSync('dist/dashboard')));
    return 0;
  } catch (error) {
    if (error instanceof ConfigError) process.stderr.write(`invalid configuration: ${error.problems.join('; ')}\n`);
    else if (error instanceof CatalogFileError) process.stderr.write(describeCatalogFileError(error));
    else if (error instanceof DemoFailure || error instanceof IdentityError) process.stderr.write(`${error.message}\n`);
    else process.stderr.write(`demo failed: ${(error as Error).message ?? String(error)}\n`);
    return 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
