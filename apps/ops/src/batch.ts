import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { resolveOpsCommand } from './cli.js';
import { EXIT_FAILED, UsageError, describeFailure, type OpsContext } from './definition.js';

/**
 * `ops batch [--file FILE]`: one command per line of FILE (stdin without it), run one after the
 * other in this process, over one database connection and one NATS connection. A line is either
 * the command line as a JSON array (`["key","create","--agent-id","agent_a","--mode","test"]`)
 * or an object naming the command and its options (`{"command":"key create","agent-id":
 * "agent_a","mode":"test"}`; `agent_id` is read as `agent-id`). Blank lines are skipped.
 *
 * Prints one JSON line per command, in order: `{"line":N,"ok":true,"result":{…}}` with the
 * object the command alone would print, or `{"line":N,"ok":false,"exit_code":C,"error":"…"}`
 * with the exit code and message it would have ended with. A failed command does not stop the
 * batch; the batch exits 1 when any failed, 0 otherwise.
 */
export async function runBatch(file: string | undefined, context: OpsContext): Promise<number> {
  const input = file === undefined || file === '-' ? process.stdin : createReadStream(file);
  if (input !== process.stdin) {
    // A missing file is the batch's error, before any command runs.
    await new Promise<void>((resolve, reject) => {
      input.once('open', () => resolve());
      input.once('error', reject);
    });
  }
  let failed = false;
  let number = 0;
  for await (const line of createInterface({ input, crlfDelay: Infinity })) {
    number += 1;
    if (line.trim() === '') continue;
    let result: Record<string, unknown>;
    try {
      result = { line: number, ok: true, result: await runLine(line, context) };
    } catch (error) {
      failed = true;
      const { exitCode, text, output } = describeFailure(error);
      result = { line: number, ok: false, exit_code: exitCode, error: text.replace(/^error: /, '').trimEnd(), ...(output ? { result: output } : {}) };
    }
    // Written as each command ends, so that a consumer sees progress (and backpressure holds the batch).
    if (!process.stdout.write(`${JSON.stringify(result)}\n`)) await new Promise((resolve) => process.stdout.once('drain', resolve));
  }
  return failed ? EXIT_FAILED : 0;
}

async function runLine(line: string, context: OpsContext): Promise<Record<string, unknown>> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch (error) {
    throw new UsageError(`not a JSON line: ${(error as Error).message}`);
  }
  const { definition, command } = resolveOpsCommand(commandLine(parsed));
  if (!definition) throw new UsageError(`"${command.kind}" cannot run inside a batch`);
  return definition.run(command, context);
}

/** The argv of a batch line: an array of strings, or `{command, ...options}`. */
function commandLine(parsed: unknown): string[] {
  if (Array.isArray(parsed) && parsed.every((word) => typeof word === 'string')) return parsed;
  if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) {
    const { command, ...options } = parsed as Record<string, unknown>;
    if (typeof command !== 'string') throw new UsageError('a batch line object needs "command", e.g. "key create"');
    const argv = command.trim().split(/\s+/);
    for (const [name, value] of Object.entries(options)) {
      if (typeof value !== 'string' && typeof value !== 'number') throw new UsageError(`option ${name} must be a string or a number`);
      argv.push(`--${name.replace(/_/g, '-')}`, String(value));
    }
    return argv;
  }
  throw new UsageError('a batch line is a JSON array of strings or an object with "command"');
}
