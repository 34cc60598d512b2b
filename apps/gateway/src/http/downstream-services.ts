import type { DynamicModule } from '@nestjs/common';
import { ClientsModule, type ClientProxy } from '@nestjs/microservices';
import { firstValueFrom } from 'rxjs';
import { NatsClient, NatsRpcClient, withRequestId, type NatsRpcClientOptions, type RawJson } from '#libs/nats';
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

type Unavailable = [slug: ProblemSlug, detail: string, retryAfterSeconds: number];
type Answer = [slug: ProblemSlug, detail: string];

function service(name: string, subjectPrefix: string, unavailable: Unavailable, invalid: Answer): DownstreamService;
function service(name: string, subjectPrefix: string, unavailable: Unavailable, invalid: Answer, notFound: Answer): Required<DownstreamService>;
function service(name: string, subjectPrefix: string, unavailable: Unavailable, invalid: Answer, notFound?: Answer): DownstreamService {
  return {
    name,
    client: Symbol(`${name} client`),
    subjectPrefix,
    unavailable: { slug: unavailable[0], detail: unavailable[1], retryAfterSeconds: unavailable[2] },
    invalid: { slug: invalid[0], fallback: invalid[1] },
    notFound: notFound && { slug: notFound[0], detail: notFound[1] },
  };
}

/** The services the gateway asks over NATS request/reply. */
export const DOWNSTREAM = {
  reporting: service('reporting', 'reporting', ['reporting-unavailable', 'Reporting is temporarily unavailable; retry later.', 5], ['invalid-query', 'The report request is not valid.']),
  timezoneSettings: service('timezone-settings', 'timezone', ['settings-unavailable', 'Settings are temporarily unavailable; retry later.', 5], ['invalid-body', 'The body is not valid.']),
  payoutsRead: service(
    'payouts-read',
    'payouts',
    ['payouts-unavailable', 'Payouts are temporarily unavailable; retry later.', 5],
    ['invalid-query', 'The request is not valid.'],
    ['statement-not-found', 'No statement with this id exists for this platform.'],
  ),
  // Answers are real-time: a retry a second later is worth it.
  recommendations: service('recommendations', 'recommendations', ['service-unavailable', 'Recommendations are temporarily unavailable; retry later.', 1], ['invalid-body', 'The recommendation request is not valid.']),
};

const BY_PREFIX = new Map<string, DownstreamService>(Object.values(DOWNSTREAM).map((service) => [service.subjectPrefix, service]));

/** The service a request/reply subject belongs to. */
export function downstreamOf(subject: string): DownstreamService | undefined {
  return BY_PREFIX.get(subject.slice(0, subject.indexOf('.')));
}

/** The JSON bytes of the reply of a `rawResults` client, unparsed, to forward as they are (failures: RpcCallFilter). */
export async function replyBytes(client: ClientProxy, subject: string, payload: object, requestId: string): Promise<Buffer> {
  const { bytes } = await firstValueFrom(client.send<RawJson>(subject, withRequestId(payload, requestId)));
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
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
        options: {
          connection: nats.connection,
          timeoutMs: options.timeoutMs(env),
          rawResults: options.rawResults,
        } satisfies NatsRpcClientOptions,
      }),
    },
  ]);
}
