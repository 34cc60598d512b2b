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
