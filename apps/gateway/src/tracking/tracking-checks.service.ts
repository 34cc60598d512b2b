import { Inject, Injectable, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { LOGGER } from '#libs/bootstrap';
import { counter, type Logger } from '#libs/observability';
import { GatewayEnv } from '../config/gateway.env.js';
import type { FailOpenRedis } from '../rate-limit/fail-open-redis.js';
import { clientAddressKey } from '../rate-limit/client-address.js';
import { RATE_LIMIT_WINDOW_MS, gatewayRedis } from '../rate-limit/rate-limit.store.js';
import { ADMIT_SCRIPT } from './tracking-checks.scripts.js';

/**
 * How long a claim is held before its PubAck confirms it: longer than the publish may take
 * (TRACKING_PUBLISH_TIMEOUT_MS), short enough that a gateway which dies between the claim and
 * the publish does not keep the event from being recorded for long.
 */
export const PENDING_CLAIM_MS = 30_000;
/** A confirmed claim outlives its link by this much (clocks of the replicas and of Redis may differ). */
const CLAIM_MARGIN_MS = 24 * 60 * 60 * 1000;
const READY_WAIT_MS = 3000;

/** 'unchecked': Redis did not answer, the event is recorded without the two checks (fail open). */
export type Admission = 'admitted' | 'rate_limited' | 'duplicate' | 'unchecked';

const failOpens = counter(
  'weave_tracking_checks_fail_open_total',
  'Tracking events published without the per-address limit and the once-only check because Redis did not answer (fail open)',
);

interface TrackingCommands {
  trackingAdmit(addressKey: string, claimKey: string, limit: number, windowMs: number, pendingMs: number): Promise<number>;
}

/**
 * The checks in front of a tracking event's publication, in Redis (shared by every replica),
 * one round trip (ADMIT_SCRIPT):
 * - per client address (`request.ip`, TRUSTED_PROXIES; IPv6 by RATE_LIMIT_IPV6_PREFIX):
 *   TRACKING_LIMIT_PER_IP_PER_MINUTE requests that would record; beyond it the link still
 *   answers but records nothing;
 * - once per (recommendation, kind): the first request claims the event (SET NX, key
 *   `weave:tracking:{<deployment>}:event:<event_id>`), publishes it, and then keeps the claim
 *   until the link has expired (+ a day); a repeat finds the claim and publishes nothing, so a
 *   link replayed after JetStream's duplicate window stores no new message. A publication that
 *   fails releases its claim, so a retry can record; a claim not confirmed within
 *   PENDING_CLAIM_MS (the gateway died meanwhile) lapses for the same reason.
 *
 * Redis unavailable: fail open — the event is published unchecked (counted in
 * weave_tracking_checks_fail_open_total). The checks guard against abuse, not against double
 * counting: the event id is the same for every repeat, JetStream drops repeats inside its
 * duplicate window and the projection counts a recommendation once whatever is replayed; a
 * closed check would lose real clicks for as long as Redis is down.
 */
@Injectable()
export class TrackingChecks implements OnModuleInit, OnApplicationShutdown {
  private readonly redis: FailOpenRedis<TrackingCommands>;
  private readonly prefix: string;

  constructor(
    private readonly env: GatewayEnv,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    ({ redis: this.redis, prefix: this.prefix } = gatewayRedis<TrackingCommands>(env, 'tracking', {
      name: 'gateway-tracking',
      scripts: { trackingAdmit: { numberOfKeys: 2, lua: ADMIT_SCRIPT } },
      // The admissions of concurrent requests, and the confirmations their PubAcks bring together, share writes.
      autoPipelining: true,
      logger,
      countFailOpen: () => failOpens.inc(),
      warning: 'tracking checks: Redis unavailable, tracking events are published without the per-address limit and the once-only check',
    }));
  }

  async onModuleInit(): Promise<void> {
    if (!(await this.redis.ready(READY_WAIT_MS))) this.logger.warn('tracking Redis not reachable at start: events are published unchecked until it is');
  }

  async onApplicationShutdown(): Promise<void> {
    await this.redis.close();
  }

  /** Whether the event `eventId`, requested from `address`, may be published now. */
  async admit(address: string, eventId: string): Promise<Admission> {
    const code = await this.redis.run((redis) =>
      redis.trackingAdmit(this.addressKey(address), this.claimKey(eventId), this.env.TRACKING_LIMIT_PER_IP_PER_MINUTE, RATE_LIMIT_WINDOW_MS, PENDING_CLAIM_MS),
    );
    if (code === undefined) return 'unchecked';
    return code === 0 ? 'admitted' : code === 1 ? 'rate_limited' : 'duplicate';
  }

  /**
   * After the PubAck: holds the claim until the link has expired (not awaited; lost, the claim
   * lapses and a repeat may publish again). SET rather than PEXPIRE, so that an event published
   * unchecked (Redis did not answer the admission in time) is claimed too once Redis answers, and
   * its repeats are not published again after JetStream's duplicate window.
   */
  confirm(eventId: string, linkExpiresAtMs: number): void {
    const keepMs = Math.max(PENDING_CLAIM_MS, linkExpiresAtMs - Date.now() + CLAIM_MARGIN_MS);
    void this.redis.run((redis) => redis.set(this.claimKey(eventId), '1', 'PX', Math.ceil(keepMs)), false);
  }

  /** After a failed publication: the claim goes, so that a retry can record. */
  async release(eventId: string): Promise<void> {
    await this.redis.run((redis) => redis.del(this.claimKey(eventId)), false);
  }

  private addressKey(address: string): string {
    return `${this.prefix}:ip:${clientAddressKey(address, this.env.RATE_LIMIT_IPV6_PREFIX)}`;
  }

  private claimKey(eventId: string): string {
    return `${this.prefix}:event:${eventId}`;
  }
}
