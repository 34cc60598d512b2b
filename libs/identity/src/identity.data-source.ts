import { createServiceDataSource, type ServiceDataSource } from '#libs/database';
import { ApiKeyAuditEntity } from './api-key-audit.entity.js';
import { ApiKeyEntity } from './api-key.entity.js';
import { GatewayOutboxEntity } from './gateway-outbox.entity.js';
import { GeneratedSecretEntity } from './generated-secret.entity.js';
import { IdentityVersionEntity } from './identity-version.entity.js';
import { IdentityInitial1764201600000 } from './migrations/1764201600000-identity-initial.js';
import { IdentityGeneratedSecret1795686268941 } from './migrations/1795686268941-identity-generated-secret.js';
import { IdentityOwnerKeys1795740000000 } from './migrations/1795740000000-identity-owner-keys.js';
import { IdentityOutbox1795750000000 } from './migrations/1795750000000-identity-outbox.js';
import { IdentityVersion1795760000000 } from './migrations/1795760000000-identity-version.js';
import { IDENTITY_SCHEMA, PlatformEntity } from './platform.entity.js';

export { IDENTITY_SCHEMA };

/** The identity schema's DataSource: the gateway owns it, the ops CLI writes through it. */
export function createIdentityDataSource(url: string, poolSize: number, applicationName = 'gateway'): ServiceDataSource {
  return createServiceDataSource({
    url,
    schema: IDENTITY_SCHEMA,
    entities: [PlatformEntity, ApiKeyEntity, GeneratedSecretEntity, ApiKeyAuditEntity, GatewayOutboxEntity, IdentityVersionEntity],
    migrations: [
      IdentityInitial1764201600000,
      IdentityGeneratedSecret1795686268941,
      IdentityOwnerKeys1795740000000,
      IdentityOutbox1795750000000,
      IdentityVersion1795760000000,
    ],
    poolSize,
    applicationName,
  });
}
