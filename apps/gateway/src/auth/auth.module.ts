import { Module } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { IdentityRepository } from '#libs/identity';
import { RateLimitService } from '../rate-limit/rate-limit.service.js';
import { IdTokenVerifier } from './id-token.verifier.js';
import { IdentityCacheService } from './identity-cache.service.js';
import { KeyUsageService } from './key-usage.service.js';

/**
 * Authentication of the gateway's routes: API keys (ApiKeyGuard, which records each key's uses
 * for `last_used_at`: KeyUsageService) and identity-provider ID tokens (IdTokenGuard), under the
 * rate limits. A feature module imports it for what its
 * routes' guards need; the guards themselves are listed on the routes (`@UseGuards`).
 */
@Module({
  providers: [
    { provide: IdentityRepository, inject: [DataSource], useFactory: (dataSource: DataSource) => new IdentityRepository(dataSource) },
    IdentityCacheService,
    IdTokenVerifier,
    RateLimitService,
    KeyUsageService,
  ],
  exports: [IdentityRepository, IdentityCacheService, IdTokenVerifier, RateLimitService, KeyUsageService],
})
export class AuthModule {}
