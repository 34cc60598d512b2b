// The rules that need no database library (the ops CLI takes them from #libs/identity-core itself).
export * from '#libs/identity-core';
export { ApiKeyEntity } from './api-key.entity.js';
export { GatewayOutboxEntity } from './gateway-outbox.entity.js';
export { GeneratedSecretEntity } from './generated-secret.entity.js';
export { IdentityVersionEntity } from './identity-version.entity.js';
export { GeneratedSecretRepository } from './generated-secret.repository.js';
export { ApiKeyAuditEntity, KEY_AUDIT_ACTIONS, type KeyActor, type KeyAuditAction } from './api-key-audit.entity.js';
export { PlatformEntity, PLATFORM_STATUSES, type PlatformStatus } from './platform.entity.js';
export { createIdentityDataSource, IDENTITY_SCHEMA } from './identity.data-source.js';
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
