import { USAGE, UsageError, resolveOpsCommand } from './cli.js';
import { ProcessContext } from './context.js';
import { EXIT_USAGE, describeFailure } from './definition.js';

/**
 * The operations CLI of DESIGN §3. stdout carries exactly one JSON object (nothing else: no
 * logs); errors and warnings go to stderr. Exit codes: 0 done, 1 failed, 2 bad usage.
 * `ops batch` runs JSON lines of commands in this one process (batch.ts).
 *
 * Only the command line parser loads at start: each command imports the libraries it needs
 * when it runs (context.ts), so a command costs little more than Node's own start.
 */
async function main(argv: string[]): Promise<number> {
  let resolved;
  try {
    resolved = resolveOpsCommand(argv);
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`error: ${error.message}\n\n${USAGE}\n`);
      return EXIT_USAGE;
    }
    throw error;
  }
  const { definition, command } = resolved;
  if (command.kind === 'help') {
    process.stderr.write(`${USAGE}\n`);
    return 0;
  }

  const context = new ProcessContext((line) => process.stderr.write(`${line}\n`), definition !== undefined);
  try {
    if (!definition) {
      const { runBatch } = await import('./batch.js');
      return await runBatch(command.kind === 'batch' ? command.file : undefined, context);
    }
    const output = await definition.run(command, context);
    process.stdout.write(`${JSON.stringify(output)}\n`);
    return 0;
  } catch (error) {
    const failure = describeFailure(error);
    if (failure.output) process.stdout.write(`${JSON.stringify(failure.output)}\n`);
    process.stderr.write(failure.text);
    return failure.exitCode;
  } finally {
    await context.close();
  }
}

process.exitCode = await main(process.argv.slice(2));
