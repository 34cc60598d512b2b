import type { IdentityChangedMessage } from '#libs/identity-core';
import type { IdentityWrites } from './commands.js';
import type { NatsClient } from '#libs/nats';
import type { OpsEnv } from './config/ops.env.js';

export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;

/** Wrong command line: printed with the usage, exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/**
 * A command that ran and failed: `text` goes to stderr as it is, `exitCode` is the exit code, and
 * `output`, when the command has a result to show all the same (`reporting verify` with
 * mismatches), is the JSON object printed on stdout.
 */
export class OpsFailure extends Error {
  constructor(
    message: string,
    readonly exitCode = EXIT_FAILED,
    readonly text = `error: ${message}\n`,
    readonly output?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'OpsFailure';
  }
}

/** The exit code and the stderr text of a failed command. */
export function describeFailure(error: unknown): { exitCode: number; text: string; output?: Record<string, unknown> } {
  if (error instanceof UsageError) return { exitCode: EXIT_USAGE, text: `error: ${error.message}\n` };
  if (error instanceof OpsFailure) return { exitCode: error.exitCode, text: error.text, ...(error.output ? { output: error.output } : {}) };
  return { exitCode: EXIT_FAILED, text: `error: ${(error as Error)?.message ?? String(error)}\n` };
}

/** A parsed command: its kind and its arguments. */
export interface ParsedCommand {
  kind: string;
}

/**
 * What a command may use. Everything is opened on first use and kept for the rest of the
 * process, so that `ops batch` connects once for a thousand commands and a single command
 * loads only the libraries it needs (the pg client for the identity schema, the JetStream client
 * for dead letters, neither for `--help`).
 */
export interface OpsContext {
  /** The CLI's settings (the services' variables); throws ConfigError when one is invalid. */
  env(): Promise<OpsEnv>;
  /** DATABASE_URL with the TLS settings applied (DATABASE_SSL_MODE, DATABASE_SSL_ROOT_CERT). */
  databaseUrl(): Promise<string>;
  /** The identity schema, its migrations run. */
  identity(): Promise<IdentityWrites>;
  /** A JetStream client with the streams ensured. */
  nats(): Promise<NatsClient>;
  /** Best effort: tells the gateways that a platform or key changed (a warning when NATS cannot be reached). */
  announce(change: IdentityChangedMessage): Promise<void>;
  /** Anything else opened once per process and closed at its end. */
  resource<T>(key: string, open: () => Promise<T>, close: (value: T) => Promise<void>): Promise<T>;
}

/**
 * One command of the CLI. A definition module imports nothing heavy at its top (types and
 * node: built-ins only): `run` imports what the command needs, so that parsing the command line
 * of any command costs nothing.
 */
export interface OpsCommandDefinition<C extends ParsedCommand = ParsedCommand> {
  /** The words that name it: `key create`, `storage`. */
  name: string;
  /** Its options after the name, as the usage shows them. */
  usage: string;
  required: readonly string[];
  optional: readonly string[];
  /** Builds the command from its options (each given at most once, never empty); throws UsageError. */
  parse(options: Record<string, string | undefined>): C;
  /** Runs it; returns the one JSON object printed on stdout. Throws OpsFailure, UsageError or anything. */
  run(command: C, context: OpsContext): Promise<Record<string, unknown>>;
}

/** Types a definition and erases its command type for the registry. */
export function defineCommand<C extends ParsedCommand>(definition: OpsCommandDefinition<C>): OpsCommandDefinition {
  return definition as unknown as OpsCommandDefinition;
}

export function positiveInteger(name: string, value: string): number {
  if (!/^[1-9][0-9]{0,15}$/.test(value)) throw new UsageError(`--${name} must be a positive integer`);
  return Number(value);
}

/** `--limit`: a positive integer, `fallback` when absent, at most `max`. */
export function limitOption(value: string | undefined, fallback: number, max: number): number {
  const limit = value === undefined ? fallback : positiveInteger('limit', value);
  if (limit > max) throw new UsageError(`--limit must be at most ${max}`);
  return limit;
}
