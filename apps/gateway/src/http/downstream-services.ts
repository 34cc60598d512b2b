import type { DynamicModule } from '@nestjs/common';
import { ClientsModule } from '@nestjs/microservices';
import { NatsClient, NatsRpcClient, type NatsRpcClientOptions } from '#libs/nats';
import { GatewayEnv } from '../config/gateway.env.js';
import type { ProblemSlug } from './problem.js';

/**
 * A service behind the gateway (DESIGN §5): the injection token of its ClientProxy, and how its
 * failures are answered.
 */
export interface DownstreamService {
  /** Its name in the logs. */
  name: string;
  /** `@Inject(service.client) client: ClientProxy`, registered by downstreamClient(). */
  client: symbol;
  /** The first segment of its request/reply subjects (`payouts.v1.balance.get` → `payouts`). */
  subjectPrefix: string;
  /** The 503 when it does not answer in time, nobody listens, or it answers unavailable/internal. */
  unavailable: { slug: ProblemSlug; detail: string; retryAfterSeconds: number };
  /** The 422 of `invalid_request`: the service's message, or this fallback. */
  invalid: { slug: ProblemSlug; fallback: string };
  /** The answer to `not_found`, for a service whose routes have one (any other code is a 500). */
  notFound?: { slug: ProblemSlug; detail: string };
}

/** The services the gateway asks over NATS request/reply. */
export const DOWNSTREAM = {
  reporting: {
    name: 'reporting',
    client: Symbol('reporting client'),
    subjectPrefix: 'reporting',
    unavailable: { slug: 'reporting-unavailable', detail: 'Reporting is temporarily unavailable; retry later.', retryAfterSeconds: 5 },
    invalid: { slug: 'invalid-query', fallback: 'The report request is not valid.' },
  },
  timezoneSettings: {
    name: 'timezone-settings',
    client: Symbol('timezone-settings client'),
    subjectPrefix: 'timezone',
    unavailable: { slug: 'settings-unavailable', detail: 'Settings are temporarily unavailable; retry later.', retryAfterSeconds: 5 },
    invalid: { slug: 'invalid-body', fallback: 'The body is not valid.' },
  },
  payoutsRead: {
    name: 'payouts-read',
    client: Symbol('payouts-read client'),
    subjectPrefix: 'payouts',
    unavailable: { slug: 'payouts-unavailable', detail: 'Payouts are temporarily unavailable; retry later.', retryAfterSeconds: 5 },
    invalid: { slug: 'invalid-query', fallback: 'The request is not valid.' },
    notFound: { slug: 'statement-not-found', detail: 'No statement with this id exists for this platform.' },
  },
  recommendations: {
    name: 'recommendations',
    client: Symbol('recommendations client'),
    subjectPrefix: 'recommendations',
    // Answers are real-time: a retry a second later is worth it.
    unavailable: { slug: 'service-unavailable', detail: 'Recommendations are temporarily unavailable; retry later.', retryAfterSeconds: 1 },
    invalid: { slug: 'invalid-body', fallback: 'The recommendation request is not valid.' },
  },
} as const satisfies Record<string, DownstreamService>;

const BY_PREFIX = new Map<string, DownstreamService>(Object.values(DOWNSTREAM).map((service) => [service.subjectPrefix, service]));

/** The service a request/reply subject belongs to. */
export function downstreamOf(subject: string): DownstreamService | undefined {
  return BY_PREFIX.get(subject.slice(0, subject.indexOf('.')));
}

/**
 * The ClientProxy of a service, for a feature module's imports: our NatsRpcClient on the
 * process's one NATS connection (the connection's request multiplexer, not a subscription per
 * request), waiting `timeoutMs` of the gateway's env for each reply unless a request carries its
 * own timeout (withRequestId). `rawResults`: replies come back as RawJson bytes, for forwarding.
 */
export function downstreamClient(
  service: DownstreamService,
  options: { timeoutMs: (env: GatewayEnv) => number } & Pick<NatsRpcClientOptions, 'rawResults'>,
): DynamicModule {
  return ClientsModule.registerAsync([
    {
      name: service.client,
      inject: [NatsClient, GatewayEnv],
      useFactory: (nats: NatsClient, env: GatewayEnv) => ({
        customClass: NatsRpcClient,
        options: { connection: nats.connection, timeoutMs: options.timeoutMs(env), rawResults: options.rawResults } satisfies NatsRpcClientOptions,
      }),
    },
  ]);
}
