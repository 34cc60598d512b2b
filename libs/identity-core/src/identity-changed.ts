/**
 * Payload of the core-NATS broadcast `BroadcastSubjects.identityChanged` (`identity.v1.changed`):
 * sent by whoever changes a platform or a key, so that every gateway replica drops its cached
 * lookups at once instead of waiting for their TTL.
 */
/**
 * The subject itself, here as well as in `BroadcastSubjects` (#libs/contracts) so that a writer
 * such as the ops CLI can announce a change without loading every contract; a unit test keeps
 * the two equal.
 */
export const IDENTITY_CHANGED_SUBJECT = 'identity.v1.changed';

export interface IdentityChangedMessage {
  agent_id?: string;
  key_id?: string;
}

export function encodeIdentityChanged(message: IdentityChangedMessage): Uint8Array {
  const clean: IdentityChangedMessage = {};
  if (message.agent_id) clean.agent_id = message.agent_id;
  if (message.key_id) clean.key_id = message.key_id;
  return new TextEncoder().encode(JSON.stringify(clean));
}

/** Lenient: an unreadable message still means "something changed" (an empty object). */
export function decodeIdentityChanged(data: Uint8Array): IdentityChangedMessage {
  try {
    const parsed: unknown = JSON.parse(new TextDecoder().decode(data));
    if (typeof parsed !== 'object' || parsed === null) return {};
    const { agent_id, key_id } = parsed as Record<string, unknown>;
    return {
      ...(typeof agent_id === 'string' ? { agent_id } : {}),
      ...(typeof key_id === 'string' ? { key_id } : {}),
    };
  } catch {
    return {};
  }
}
