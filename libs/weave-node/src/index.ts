/**
 * @vendor/weave-node — Node.js client for contextual recommendations of the Weave network.
 *
 * Runtime: Node.js 16 or higher, no runtime dependencies. The transport is node:http/node:https
 * (not the global fetch), the per-attempt timeout is a timer that destroys the request (not
 * AbortSignal.timeout), and nothing relies on structuredClone.
 *
 * The declaration output of every file must stay readable by TypeScript 4.0: no `satisfies`, no
 * template-literal types, no `import type` name modifiers, no variadic-tuple tricks.
 */
// The public API: the client and its defaults, the error classes, the types. transport.ts and
// wire.ts are internal (the package's exports map only exposes this entry point).
export * from './client.js';
export * from './errors.js';
export * from './types.js';
