import { startPayoutsRead, startRecommendations, startReportingProjection, type ServiceUnderTest } from './apps.js';
import { startTimezoneSettings } from './oidc.js';
import { startGateway, type TestStack } from './stack.js';

/**
 * What the HTTP fuzzers run against: every service behind the gateway, in this process, on the
 * stack's servers, and the gateway in front with the given identity provider and limits its
 * thousands of requests and failures from one address cannot reach (the limits themselves:
 * gateway-rate-limit.spec.ts). Ended with the stack.
 */
export async function startFuzzedPlatform(stack: TestStack, jwksUrl: string): Promise<{ gateway: string; services: ServiceUnderTest<unknown>[] }> {
  const services: ServiceUnderTest<unknown>[] = [
    stack.track(await startReportingProjection({ ...stack.urls, REPORTING_PUBLISH_INTERVAL_MS: 1000 })),
    stack.track(await startPayoutsRead(stack.urls)),
    stack.track(await startTimezoneSettings(stack.urls)),
    stack.track(await startRecommendations(stack.urls)),
  ];
  const { base } = await startGateway(stack, {
    jwksUrl,
    extra: {
      AUTH_FAILURE_LIMIT_PER_IP_PER_MINUTE: '100000000',
      RATE_LIMIT_PER_KEY_PER_MINUTE: '100000000',
      RATE_LIMIT_PER_TOKEN_PER_MINUTE: '100000000',
      TRACKING_LIMIT_PER_IP_PER_MINUTE: '100000000',
    },
  });
  return { gateway: base, services };
}
