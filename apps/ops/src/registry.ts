import type { OpsCommandDefinition } from './definition.js';

/**
 * Every command of the CLI: each module exports `commands`, its definitions (definition.ts),
 * and imports what its commands need only when one runs. A new command is a new module and one
 * line here.
 */
const modules: { commands: readonly OpsCommandDefinition[] }[] = await Promise.all([
  import('./identity-commands.js'),
  import('./ads-commands.js'),
  import('./dead-letter-commands.js'),
  import('./reporting-commands.js'),
]);

export const COMMANDS: readonly OpsCommandDefinition[] = modules.flatMap((module) => module.commands);
