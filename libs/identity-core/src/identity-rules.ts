export type IdentityErrorCode = 'invalid_argument' | 'platform_not_found' | 'key_not_found' | 'owner_conflict' | 'key_limit_reached';

/** A failure the caller can act on (the ops CLI prints its message and exits non-zero). */
export class IdentityError extends Error {
  constructor(
    readonly code: IdentityErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'IdentityError';
  }
}

// Agent ids travel in NATS payloads, logs and report rows: keep them to a plain, bounded shape
// (the reporting contract caps agent_id at 200 characters).
const AGENT_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,199}$/;
// Owner uids are the `sub` of an ID token: any string of 1–255 characters without controls.
const OWNER_UID_PATTERN = /^[^\u0000-\u001f\u007f]{1,255}$/;

export function isValidAgentId(agentId: string): boolean {
  return AGENT_ID_PATTERN.test(agentId);
}

export function isValidOwnerUid(ownerUid: string): boolean {
  return OWNER_UID_PATTERN.test(ownerUid) && ownerUid.trim() === ownerUid;
}

/** Throws invalid_argument unless `agentId` is a valid agent id. */
export function requireAgentId(agentId: string): void {
  if (!isValidAgentId(agentId)) {
    throw new IdentityError(
      'invalid_argument',
      'agent id must be 1-200 characters of letters, digits, "_", ".", ":" or "-", starting with a letter or digit',
    );
  }
}

/** Throws invalid_argument when an owner uid is given and is not a valid one. */
export function requireOwnerUid(ownerUid: string | null | undefined): void {
  if (ownerUid !== undefined && ownerUid !== null && !isValidOwnerUid(ownerUid)) {
    throw new IdentityError('invalid_argument', 'owner uid must be 1-255 characters without control characters or surrounding spaces');
  }
}

export function platformNotFound(agentId: string): IdentityError {
  return new IdentityError('platform_not_found', `no platform with agent id ${agentId}`);
}

export function keyNotFound(keyId: string): IdentityError {
  return new IdentityError('key_not_found', `no API key with key id ${keyId}`);
}

export function ownerConflict(agentId: string): IdentityError {
  return new IdentityError('owner_conflict', `platform ${agentId} already has a different owner uid`);
}

export function invalidMode(): IdentityError {
  return new IdentityError('invalid_argument', 'mode must be live or test');
}
