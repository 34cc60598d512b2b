/**
 * Payload of the core-NATS broadcast `BroadcastSubjects.payoutsChanged` (`payouts.v1.changed`):
 * the platforms whose payout read model a payouts-read replica just committed, so that every
 * cache of their replies (payouts-read replicas, gateway replicas) drops them at once.
 */
export interface PayoutsChangedMessage {
  agent_ids: readonly string[];
}

export function encodePayoutsChanged(agentIds: readonly string[]): string {
  return JSON.stringify({ agent_ids: agentIds } satisfies PayoutsChangedMessage);
}

/** The platforms named, or null when the message cannot be read (a cache then drops everything). */
export function decodePayoutsChanged(data: Uint8Array): string[] | null {
  let agentIds: unknown;
  try {
    agentIds = (JSON.parse(new TextDecoder().decode(data)) as { agent_ids?: unknown } | null)?.agent_ids;
  } catch {
    return null;
  }
  if (!Array.isArray(agentIds)) return null;
  return agentIds.filter((agentId): agentId is string => typeof agentId === 'string');
}
