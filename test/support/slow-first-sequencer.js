// Jest's test sequencer for this repository: the slowest files start first, so that with two
// workers no long file starts last and runs alone while the other worker idles.
//
// Jest orders by the durations of the previous run, kept in its cache; a clean clone (CI) has no
// cache, and Jest then orders by file size, which here says little (a 100-line file that starts
// the whole stack outlasts a 400-line one of pure HTTP checks). So the durations of the files
// known to be slow (seconds, on an idle 2-core machine) stand in for a missing cache entry.
// Files neither cached nor listed come after, largest first, as Jest would order them.
import { relative } from 'node:path';
import Sequencer from '@jest/test-sequencer';

/**
 * Seconds a file takes on a 2-core machine (jest --verbose); the slow ones only. Their order is
 * what counts: the first six alone on an idle machine, the others beside other files.
 */
export const KNOWN_DURATIONS = {
  // integration (npm run test:integration)
  'test/integration/launcher.spec.ts': 178,
  'test/e2e/secured-stack.spec.ts': 173,
  'test/integration/projection-property.spec.ts': 111,
  'test/integration/ops-npm-script.spec.ts': 40,
  'test/integration/ops-dead-letters.spec.ts': 35,
  'test/integration/ops-cli.spec.ts': 30,
  // Small files that are slow (by size they would start last and end alone): two workers, in a
  // CI run on a loaded machine.
  'test/integration/reporting-minute-coarsening.spec.ts': 127,
  'test/integration/gateway-hostile-paging.spec.ts': 94,
  'test/e2e/recommendation-loop.spec.ts': 67,
  'test/integration/gateway-rate-limit.spec.ts': 54,
  'test/integration/openapi-fuzz.spec.ts': 48,
  'test/e2e/newcomer-example.spec.ts': 46,
  'test/integration/entity-schema-drift.spec.ts': 45,
  'test/integration/payouts-property.spec.ts': 41,
  // faults (npm run test:faults; measured on three workers: the cluster file takes most of the run)
  'test/faults/nats-cluster.spec.ts': 233,
  'test/faults/nats-restart.spec.ts': 97,
  'test/faults/postgres-restart.spec.ts': 94,
  'test/faults/projection-replicas.spec.ts': 85,
  'test/faults/projection-kill.spec.ts': 83,
  'test/faults/gateway-degraded.spec.ts': 73,
  'test/faults/poison-message.spec.ts': 63,
  'test/faults/recommendations-kill.spec.ts': 49,
};

const ROOT = process.cwd();

export default class SlowFirstSequencer extends (Sequencer.default ?? Sequencer) {
  sort(tests) {
    const sizes = new Map();
    const size = (test) => {
      if (!sizes.has(test.path)) sizes.set(test.path, test.context.hasteFS.getSize(test.path) ?? 0);
      return sizes.get(test.path);
    };
    const known = (test) => {
      const cached = this.time(test);
      if (cached != null) return cached;
      const listed = KNOWN_DURATIONS[relative(ROOT, test.path).split('\\').join('/')];
      return listed === undefined ? undefined : listed * 1000;
    };
    for (const test of tests) test.duration = known(test);
    return [...tests].sort((a, b) => {
      const failedA = this.hasFailed(a);
      const failedB = this.hasFailed(b);
      // A file that failed last time first: the quickest answer while fixing it.
      if (failedA !== failedB) return failedA ? -1 : 1;
      if ((a.duration != null) !== (b.duration != null)) return a.duration != null ? -1 : 1;
      if (a.duration != null && b.duration != null) return b.duration - a.duration;
      return size(b) - size(a);
    });
  }
}
