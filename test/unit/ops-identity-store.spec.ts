import { createIdentityDataSource } from '#libs/identity';
import { IDENTITY_MIGRATIONS } from '../../apps/ops/src/identity-store.js';

/**
 * The ops CLI writes the identity schema with plain SQL when every migration has run, and
 * migrates through the identity DataSource otherwise: its list of the migrations must be the
 * DataSource's, or a new migration would never run from the CLI.
 */
describe('ops CLI identity store', () => {
  it('knows every migration of the identity DataSource, by the name TypeORM records', () => {
    const dataSource = createIdentityDataSource('postgres://postgres@127.0.0.1:5432/unused', 1, 'ops');
    const names = (dataSource.options.migrations as (new () => { name?: string })[]).map((migration) => new migration().name ?? migration.name);
    expect([...IDENTITY_MIGRATIONS]).toEqual(names);
  });
});
