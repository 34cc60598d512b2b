export {
  API_KEY_PREFIXES,
  API_KEY_RANDOM_LENGTH,
  KEY_ID_RANDOM_LENGTH,
  KEY_MODES,
  KEY_NAME_MAX_LENGTH,
  generateApiKey,
  generateKeyId,
  hashApiKey,
  hashApiKeyBase64,
  hashesEqual,
  isValidKeyId,
  keyNameProblem,
  lastFour,
  looksLikeJwt,
  parseApiKey,
  parseBearer,
  randomBase62,
  type BearerFailure,
  type BearerResult,
  type KeyMode,
} from '#libs/identity-core';
export { ApiKeyEntity } from './api-key.entity.js';
export { GatewayOutboxEntity } from './gateway-outbox.entity.js';
export { GeneratedSecretEntity } from './generated-secret.entity.js';
export { IdentityVersionEntity } from './identity-version.entity.js';
export { GeneratedSecretRepository } from './generated-secret.repository.js';
export { ApiKeyAuditEntity, KEY_AUDIT_ACTIONS, type KeyActor, type KeyAuditAction } from './api-key-audit.entity.js';
export { PlatformEntity, PLATFORM_STATUSES, type PlatformStatus } from './platform.entity.js';
export { createIdentityDataSource, IDENTITY_SCHEMA } from './identity.data-source.js';
export { IdentityError, isValidAgentId, isValidOwnerUid, type IdentityErrorCode } from '#libs/identity-core';
export {
  IdentityRepository,
  type ActiveKey,
  type CreateKeyOptions,
  type CreatedKey,
  type KeyAuditEntry,
  type KeyRecord,
  type KeyUse,
  type PlatformRecord,
  type RevokeKeyOptions,
  type RevokedKey,
} from './identity.repository.js';
export { IDENTITY_CHANGED_SUBJECT, encodeIdentityChanged, decodeIdentityChanged, type IdentityChangedMessage } from '#libs/identity-core';
