import { Writable } from 'node:stream';
import { createLogger, type Logger } from '#libs/observability';

/** Services under test log only warnings and errors, to keep test output readable. */
export const testLogger = (service: string) => createLogger(service, process.env.TEST_LOG_LEVEL ?? 'warn');

/** A logger at `level` whose lines are kept in memory (e.g. to prove that a secret never reaches a log). */
export function capturingLogger(service: string, level = 'trace'): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  return { logger: createLogger(service, level, destination), lines };
}
