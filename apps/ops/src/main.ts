import { connect } from '@nats-io/transport-node';
import { ConfigError, loadEnv, natsServers } from '#libs/config';
import { BroadcastSubjects } from '#libs/contracts';
import { initializeDatabase } from '#libs/database';
import {
  IdentityError,
  IdentityRepository,
  createIdentityDataSource,
  encodeIdentityChanged,
  type IdentityChangedMessage,
} from '#libs/identity';
import { CatalogFileError, describeCatalogFileError, runAdsCommand } from './ads.js';
import { USAGE, UsageError, parseOpsCommand } from './cli.js';
import { runOpsCommand } from './commands.js';
import { listDeadLetters, redriveDeadLetter } from './dead-letters.js';
import { NatsClient, ensureStreams, natsAuthOptions } from '#libs/nats';
import { OpsEnv, opsNatsIdentity } from './config/ops.env.js';

/**
 * The operations CLI of DESIGN §3. stdout carries exactly one JSON object (nothing else: no
 * logs); errors and warnings go to stderr. Exit codes: 0 done, 1 failed, 2 bad usage.
 */
const EXIT_FAILED = 1;
const EXIT_USAGE = 2;

/** Best effort: the gateways' cache TTL bounds staleness when NATS cannot be reached. */
async function announce(env: OpsEnv, change: IdentityChangedMessage): Promise<void> {
  let nc: Awaited<ReturnType<typeof connect>> | undefined;
  try {
    nc = await connect({
      servers: natsServers(env.NATS_URL),
      name: 'ops',
      reconnect: false,
      timeout: env.OPS_NATS_TIMEOUT_MS,
      ...(await natsAuthOptions(opsNatsIdentity(env), 'ops')),
    });
    nc.publish(BroadcastSubjects.identityChanged, encodeIdentityChanged(change));
    await Promise.race([
      nc.flush(),
      new Promise((_, reject) => setTimeout(() => reject(new Error('flush timed out')), env.OPS_NATS_TIMEOUT_MS).unref()),
    ]);
  } catch (error) {
    process.stderr.write(
      `warning: the change is saved but gateways could not be notified over NATS (${(error as Error).message}); ` +
        'their cached entries expire within a second\n',
    );
  } finally {
    await nc?.close().catch(() => undefined);
  }
}

async function main(argv: string[]): Promise<number> {
  let command;
  try {
    command = parseOpsCommand(argv);
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`error: ${error.message}\n\n${USAGE}\n`);
      return EXIT_USAGE;
    }
    throw error;
  }
  if (command.kind === 'help') {
    process.stderr.write(`${USAGE}\n`);
    return 0;
  }

  let env: OpsEnv;
  try {
    env = loadEnv(OpsEnv);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`error: ${error.message}\n`);
      return EXIT_FAILED;
    }
    throw error;
  }

  if (command.kind === 'ads.import' || command.kind === 'ads.list') {
    try {
      process.stdout.write(`${JSON.stringify(await runAdsCommand(command, env.DATABASE_URL))}\n`);
      return 0;
    } catch (error) {
      process.stderr.write(error instanceof CatalogFileError ? describeCatalogFileError(error) : `error: ${(error as Error).message ?? String(error)}\n`);
      return EXIT_FAILED;
    }
  }

  if (command.kind === 'storage' || command.kind === 'reporting.verify') {
    try {
      // Loaded only for these commands: the other commands start without the reporting code.
      if (command.kind === 'storage') {
        const { reportingStorage } = await import('./storage.js');
        process.stdout.write(`${JSON.stringify(await reportingStorage(env.DATABASE_URL))}\n`);
        return 0;
      }
      const { verifyReporting } = await import('./reporting-verify.js');
      const outcome = await verifyReporting(env.DATABASE_URL, command.agentId, command.traffics);
      process.stdout.write(`${JSON.stringify(outcome.output)}\n`);
      if (outcome.exitCode !== 0) process.stderr.write(`error: ${outcome.output.mismatches.length} figure(s) of the rollups differ from the state\n`);
      return outcome.exitCode;
    } catch (error) {
      process.stderr.write(`error: ${(error as Error).message ?? String(error)}\n`);
      return EXIT_FAILED;
    }
  }

  if (command.kind === 'deadletters.list' || command.kind === 'deadletters.redrive') {
    let nats: NatsClient | undefined;
    try {
      nats = await NatsClient.connect({ servers: natsServers(env.NATS_URL), name: 'ops', identity: opsNatsIdentity(env) });
      // No retention here: the operator's shell need not carry the services' settings.
      await ensureStreams(nats.manager);
      const output =
        command.kind === 'deadletters.list'
          ? await listDeadLetters(nats, { limit: command.limit, subject: command.subject })
          : await redriveDeadLetter(nats, command.sequence);
      process.stdout.write(`${JSON.stringify(output)}\n`);
      return 0;
    } catch (error) {
      process.stderr.write(`error: ${(error as Error).message}\n`);
      return EXIT_FAILED;
    } finally {
      await nats?.drain();
    }
  }

  const dataSource = createIdentityDataSource(env.DATABASE_URL, 2, 'ops');
  try {
    await initializeDatabase(dataSource);
    const outcome = await runOpsCommand(command, new IdentityRepository(dataSource));
    if (outcome.change) await announce(env, outcome.change);
    process.stdout.write(`${JSON.stringify(outcome.output)}\n`);
    return 0;
  } catch (error) {
    if (error instanceof IdentityError) {
      process.stderr.write(`error: ${error.message}\n`);
      return error.code === 'invalid_argument' ? EXIT_USAGE : EXIT_FAILED;
    }
    process.stderr.write(`error: ${(error as Error).message ?? String(error)}\n`);
    return EXIT_FAILED;
  } finally {
    if (dataSource.isInitialized) await dataSource.destroy().catch(() => undefined);
  }
}

process.exitCode = await main(process.argv.slice(2));
