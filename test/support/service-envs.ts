import 'reflect-metadata';
import { getMetadataStorage } from 'class-validator';
import { ConfigError, loadEnv } from '#libs/config';
import { GatewayEnv } from '../../apps/gateway/src/config/gateway.env.js';
import { PayoutsReadEnv } from '../../apps/payouts-read/src/config/payouts-read.env.js';
import { RecommendationsEnv } from '../../apps/recommendations/src/config/recommendations.env.js';
import { ReportingProjectionEnv } from '../../apps/reporting-projection/src/config/reporting-projection.env.js';
import { TimezoneSettingsEnv } from '../../apps/timezone-settings/src/config/timezone-settings.env.js';

/** Each service with an HTTP port: its settings class, the variable that sets the port and that port's default. */
export const SERVICE_ENVS = {
  gateway: { env: GatewayEnv, portVar: 'PORT', port: 3000 },
  'reporting-projection': { env: ReportingProjectionEnv, portVar: 'REPORTING_HTTP_PORT', port: 3101 },
  'payouts-read': { env: PayoutsReadEnv, portVar: 'PAYOUTS_HTTP_PORT', port: 3102 },
  'timezone-settings': { env: TimezoneSettingsEnv, portVar: 'TIMEZONE_HTTP_PORT', port: 3103 },
  recommendations: { env: RecommendationsEnv, portVar: 'RECOMMENDATIONS_HTTP_PORT', port: 3104 },
} as const;

/** The variables a settings class validates (its class-validator properties). */
export function declaredVariables(envClass: new () => object): Set<string> {
  return new Set(getMetadataStorage().getTargetValidationMetadatas(envClass, '', true, false).map((m) => m.propertyName));
}

/** What loadEnv refuses in `source` for `envClass` (ConfigError.problems), none when it loads. */
export function configProblems<T extends object>(envClass: new () => T, source: Record<string, string>): string[] {
  try {
    loadEnv(envClass, source);
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
}

/** The services as `{ name, portVariable }`, for tests run once per service (describe.each). */
export const SERVICE_PORT_VARIABLES = Object.entries(SERVICE_ENVS).map(([name, { portVar }]) => ({ name: name as keyof typeof SERVICE_ENVS, portVariable: portVar }));
