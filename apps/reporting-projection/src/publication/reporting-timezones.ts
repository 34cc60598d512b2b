import type { EntityManager } from 'typeorm';

/** The zone of a platform that never set one (DESIGN §5). */
export const DEFAULT_TIMEZONE = 'UTC';

/** The reporting timezone of each platform that set one, as reporting knows it (settings consumer). */
// Raw SQL: one read of the projection schema, which has no entities.
export async function reportingTimezones(manager: EntityManager, agentIds: string[]): Promise<Map<string, string>> {
  const rows: { agent_id: string; timezone: string }[] = await manager.query(
    `SELECT agent_id, timezone FROM reporting.platform_timezone WHERE agent_id = ANY($1::text[])`,
    [agentIds],
  );
  return new Map(rows.map((r) => [r.agent_id, r.timezone]));
}
