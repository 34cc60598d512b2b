import { randomBytes } from 'node:crypto';
import type { Provider } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { LOGGER } from '#libs/bootstrap';
import { GeneratedSecretRepository } from '#libs/identity';
import type { Logger } from '#libs/observability';
import { GatewayEnv } from '../config/gateway.env.js';

/** Injection token of the gateway's TrackingSecrets. */
export const TRACKING_SECRETS = Symbol('TRACKING_SECRETS');

/** The name of the generated signing secret in identity.generated_secret. */
export const GENERATED_TRACKING_SECRET = 'tracking_signing_secret';

export interface TrackingSecrets {
  /** Signs every new link. */
  readonly signing: string;
  /** Verify links: the signing secret, then TRACKING_SIGNING_SECRET_PREVIOUS during a rotation. */
  readonly accepted: readonly string[];
  /** True when the signing secret is the generated one (no TRACKING_SIGNING_SECRET). */
  readonly generated: boolean;
}

/**
 * The tracking secrets, resolved once at start. TRACKING_SIGNING_SECRET when set. Otherwise
 * (development: the code holds no default) a random 256-bit secret that the first replica to
 * start stores in identity.generated_secret and every replica then reads, so the links one
 * replica signs verify on all of them and survive restarts; a warning says so at every start,
 * without the value. TRACKING_SIGNING_SECRET_REQUIRED (the production overlay) makes a
 * missing secret a configuration error instead (GatewayEnv), so this never runs there.
 */
export async function resolveTrackingSecrets(env: GatewayEnv, dataSource: DataSource, logger: Logger): Promise<TrackingSecrets> {
  const previous = env.TRACKING_SIGNING_SECRET_PREVIOUS ? [env.TRACKING_SIGNING_SECRET_PREVIOUS] : [];
  if (env.TRACKING_SIGNING_SECRET) return { signing: env.TRACKING_SIGNING_SECRET, accepted: [env.TRACKING_SIGNING_SECRET, ...previous], generated: false };
  if (env.TRACKING_SIGNING_SECRET_REQUIRED) throw new Error('TRACKING_SIGNING_SECRET is required (TRACKING_SIGNING_SECRET_REQUIRED) and not set');
  const { secret, created } = await new GeneratedSecretRepository(dataSource).getOrCreate(GENERATED_TRACKING_SECRET, randomBytes(32).toString('base64url'));
  logger.warn(
    { generatedNow: created, table: 'identity.generated_secret' },
    'TRACKING_SIGNING_SECRET is not set: tracking links are signed with a secret generated at first start and kept in the identity schema (development only; set TRACKING_SIGNING_SECRET in production)',
  );
  return { signing: secret, accepted: [secret, ...previous], generated: true };
}

export const trackingSecretsProvider: Provider = {
  provide: TRACKING_SECRETS,
  inject: [GatewayEnv, DataSource, LOGGER],
  useFactory: resolveTrackingSecrets,
};
