import { parseArgs } from 'node:util';
import { UsageError, type OpsCommandDefinition, type ParsedCommand } from './definition.js';
import { COMMANDS } from './registry.js';

export { UsageError };

/** `ops batch`: JSON lines of commands from a file or stdin (batch.ts). */
export interface BatchCommand {
  kind: 'batch';
  file?: string;
}

/** What a command line asks for: a command of the registry, a batch, or the usage. */
export type OpsCommand = ParsedCommand & Record<string, unknown>;

const BATCH_USAGE = '[--file FILE]       (JSON lines, one command each, from FILE or stdin; one JSON result per line)';

export const USAGE = `usage: npm run --silent ops -- <command>

${[...COMMANDS.map((c) => [c.name, c.usage]), ['batch', BATCH_USAGE]].map(([name, usage]) => `  ${name.padEnd(19)} ${usage}`).join('\n')}

Prints one JSON object on stdout and exits 0, or an error on stderr and exits non-zero.`;

/** Every option any command takes, each a string that may be given (and is then refused) more than once. */
const OPTIONS = Object.fromEntries(
  [...new Set([...COMMANDS.flatMap((c) => [...c.required, ...c.optional]), 'file'])].map((name) => [name, { type: 'string', multiple: true }] as const),
) as Record<string, { type: 'string'; multiple: true }>;

export type ResolvedCommand =
  | { definition: OpsCommandDefinition; command: ParsedCommand }
  | { definition: undefined; command: BatchCommand | { kind: 'help' } };

/** Parses argv (without node and the script) into a command and its definition. Pure: throws UsageError, never exits. */
export function resolveOpsCommand(argv: string[]): ResolvedCommand {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: { ...OPTIONS, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help) return { definition: undefined, command: { kind: 'help' } };
  if (positionals.length === 0) throw new UsageError('missing command');
  const two = positionals.slice(0, 2).join(' ');
  const definition = COMMANDS.find((c) => c.name === two) ?? COMMANDS.find((c) => c.name === positionals[0]);
  const name = definition?.name ?? (positionals[0] === 'batch' ? 'batch' : undefined);
  if (!name) throw new UsageError(`unknown command: ${two}`);
  const extra = positionals.slice(name.split(' ').length);
  if (extra.length > 0) throw new UsageError(`unexpected argument: ${extra[0]}`);

  const required = definition?.required ?? [];
  const allowed = new Set([...required, ...(definition?.optional ?? ['file'])]);
  const options: Record<string, string | undefined> = {};
  for (const [option, given] of Object.entries(values as Record<string, string[] | boolean | undefined>)) {
    if (!Array.isArray(given)) continue;
    if (!allowed.has(option)) throw new UsageError(`option --${option} does not apply to "${name}"`);
    if (given.length > 1) throw new UsageError(`option --${option} given more than once`);
    if (given[0].trim() === '') throw new UsageError(`option --${option} must not be empty`);
    options[option] = given[0];
  }
  for (const option of required) {
    if (options[option] === undefined) throw new UsageError(`"${name}" needs --${option}`);
  }
  if (!definition) return { definition: undefined, command: { kind: 'batch', ...(options.file !== undefined ? { file: options.file } : {}) } };
  return { definition, command: definition.parse(options) };
}

/** The command of a command line (resolveOpsCommand without its definition). */
export function parseOpsCommand(argv: string[]): OpsCommand {
  return resolveOpsCommand(argv).command as OpsCommand;
}
