import { join } from 'node:path';
import SlowFirstSequencer, { KNOWN_DURATIONS } from '../support/slow-first-sequencer.js';

/** The test order on a clean clone (no Jest cache): known slow files first, longest first, then by size. */
describe('slow-first test sequencer', () => {
  const context = { config: { cache: false }, hasteFS: { getSize: (path: string) => (path.endsWith('big.spec.ts') ? 9000 : 100) } };
  const test = (path: string) => ({ path: join(process.cwd(), path), context });

  it('starts the known slow files first, longest first, then the others largest first', () => {
    const sequencer = new SlowFirstSequencer({});
    const paths = [
      'test/integration/small.spec.ts',
      'test/integration/ops-cli.spec.ts',
      'test/integration/big.spec.ts',
      'test/integration/projection-property.spec.ts',
      'test/integration/launcher.spec.ts',
      'test/e2e/secured-stack.spec.ts',
    ];
    const order = sequencer.sort(paths.map(test)).map((t: { path: string }) => t.path.slice(process.cwd().length + 1));
    expect(order).toEqual([
      'test/integration/launcher.spec.ts',
      'test/e2e/secured-stack.spec.ts',
      'test/integration/projection-property.spec.ts',
      'test/integration/ops-cli.spec.ts',
      'test/integration/big.spec.ts',
      'test/integration/small.spec.ts',
    ]);
  });

  it('lists only files that exist', async () => {
    const { existsSync } = await import('node:fs');
    for (const path of Object.keys(KNOWN_DURATIONS)) expect({ path, exists: existsSync(path) }).toEqual({ path, exists: true });
  });
});
