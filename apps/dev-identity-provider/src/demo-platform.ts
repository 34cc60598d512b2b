import { initializeDatabase } from '#libs/database';
import { DEMO_PLATFORM } from '#libs/demo';
import { IdentityRepository, createIdentityDataSource } from '#libs/identity';

/**
 * The demo platform of the development identity provider's demo owner (DESIGN §2): created
 * with owner demo-owner when missing (the identity schema's migrations run first, as the
 * gateway runs them), left as it is when it exists. Idempotent; `npm run demo` finds it and fills it.
 */
export async function ensureDemoPlatform(databaseUrl: string): Promise<{ agent_id: string; owner_uid: string; created: boolean }> {
  // Two connections: the migrations hold one (their advisory lock) while they run on another.
  const dataSource = createIdentityDataSource(databaseUrl, 2, 'dev-identity-provider');
  try {
    await initializeDatabase(dataSource);
    const platform = await new IdentityRepository(dataSource).createPlatform(DEMO_PLATFORM.agentId, DEMO_PLATFORM.ownerUid);
    return { agent_id: platform.agent_id, owner_uid: DEMO_PLATFORM.ownerUid, created: platform.created };
  } finally {
    if (dataSource.isInitialized) await dataSource.destroy();
  }
}
