/**
 * The V8 flags reporting-projection runs with, wherever it is started: the launcher of `npm start`
 * passes them on its command line, the Kubernetes Deployment as NODE_OPTIONS (a unit test holds
 * the manifest to this list), bench:ingest to the process it measures.
 *
 * A young generation of 32 MB semi-spaces instead of V8's 16: a batch being applied and the one
 * fetched ahead (2,000 messages each) outlive a 16 MB semi-space, so every scavenge copied them,
 * and the collector took about a quarter of the service's CPU. With 32 MB, Node's CPU per event
 * fell by about a quarter on the streaming workload, for about 30 MB more resident memory
 * (docs/decisions/projection-young-generation.md).
 */
export const REPORTING_PROJECTION_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=32'];

/**
 * The environment reporting-projection's process starts with, beside its own settings, wherever it
 * is started (the launcher of `npm start`, the Kubernetes Deployment, bench:ingest): glibc's malloc
 * limited to two arenas and large blocks (≥ 128 KB) mapped and unmapped on their own instead of
 * kept in the heap. Without them, malloc outside V8's heap grew to 34–40 MB at the peak of a large
 * backlog, against 23–24 MB with them (docs/decisions/projection-young-generation.md). They must
 * be in the environment when the process starts: glibc reads them once, before any JavaScript runs.
 * Ignored where the C library is not glibc.
 */
export const REPORTING_PROJECTION_PROCESS_ENV: Readonly<Record<string, string>> = {
  GLIBC_TUNABLES: 'glibc.malloc.arena_max=2:glibc.malloc.mmap_threshold=131072:glibc.malloc.trim_threshold=131072',
};
