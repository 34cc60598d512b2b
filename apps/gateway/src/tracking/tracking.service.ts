import { Inject, Injectable } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { LOGGER } from '#libs/bootstrap';
import type { Traffic } from '#libs/contracts';
import { NatsClient } from '#libs/nats';
import { counter, type Logger } from '#libs/observability';
import { IdentityCacheService } from '../auth/identity-cache.service.js';
import { GatewayEnv } from '../config/gateway.env.js';
import { ProblemException } from '../http/problem.js';
import { TrackingChecks } from './tracking-checks.service.js';
import { TrackingOutbox } from './tracking-outbox.js';
import { trackingEvent, trackingSubject, type TrackingEvent } from './tracking-events.js';
import { TRACKING_SECRETS, type TrackingSecrets } from './tracking-secrets.provider.js';
import {
  answerTokenSigner,
  trackingExpiry,
  trackingLinkExpiresAt,
  verifyTrackingToken,
  type SignedTrackingClaims,
  type TrackedRecommendation,
  type TrackingKind,
} from './tracking-token.js';

export const EXPOSURE_PATH = '/track/exposure';
export const CLICK_PATH = '/track/click';
/** How long a tracking route waits for JetStream's PubAck before keeping the event in the outbox. */
export const TRACKING_PUBLISH_TIMEOUT_MS = 2000;
/** Retry-After of a tracking route's 503. */
export const TRACKING_RETRY_AFTER_SECONDS = 1;
export const TRACKING_NOT_FOUND = 'This tracking link is not valid.';
export const TRACKING_UNAVAILABLE = 'Tracking is temporarily unavailable; retry later.';

/**
 * What became of a valid link's request: its event was published (or JetStream reported it a
 * duplicate inside its window), or kept in the gateway's outbox because JetStream did not
 * acknowledge (`deferred`: the relay publishes it later), or nothing was recorded because the
 * link expired, its platform is suspended, the client address is over its limit, or the event
 * was recorded before.
 */
export type TrackingOutcome = 'published' | 'duplicate' | 'deferred' | 'expired' | 'suspended' | 'rate_limited';

/** The tracking URLs of one recommendation. */
export interface TrackingLinks {
  exposure_url: string;
  click_url: string;
}

const trackingRequests = counter('weave_tracking_requests_total', 'Tracking URL requests by kind and outcome', ['kind', 'outcome']);

/**
 * The event could not be recorded (the platform lookup failed, or neither JetStream nor the
 * gateway's outbox took it): the route answers 503.
 */
export class TrackingUnavailableError extends Error {
  constructor(cause: unknown) {
    super(`tracking event not recorded: ${(cause as Error)?.message ?? String(cause)}`);
    this.name = 'TrackingUnavailableError';
  }
}

/**
 * Signs the tracking URLs of recommendations and turns verified tokens into lifecycle events.
 * The secrets live only here and in the env object; they are never logged.
 *
 * A valid link is recorded (DESIGN §5) only while it has not expired (TRACKING_LINK_TTL_DAYS),
 * its platform is active, its client address is under TRACKING_LIMIT_PER_IP_PER_MINUTE and its
 * (recommendation, kind) was not recorded before (TrackingChecks); otherwise it answers as
 * usual and records nothing, counted in weave_tracking_requests_total{outcome}.
 */
@Injectable()
export class TrackingService {
  private readonly encoder = new TextEncoder();
  private baseUrl?: string;

  constructor(
    private readonly env: GatewayEnv,
    private readonly nats: NatsClient,
    private readonly adapterHost: HttpAdapterHost,
    private readonly identity: IdentityCacheService,
    private readonly checks: TrackingChecks,
    private readonly outbox: TrackingOutbox,
    @Inject(TRACKING_SECRETS) private readonly secrets: TrackingSecrets,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /**
   * PUBLIC_BASE_URL without a trailing slash; unset, `http://127.0.0.1:<port>` with the port the
   * server really listens on (PORT, or the one the system chose for PORT=0).
   */
  publicBaseUrl(): string {
    if (this.baseUrl) return this.baseUrl;
    if (this.env.PUBLIC_BASE_URL) {
      this.baseUrl = this.env.PUBLIC_BASE_URL.replace(/\/+$/, '');
      return this.baseUrl;
    }
    const address = this.adapterHost.httpAdapter?.getHttpServer()?.address();
    const port = address && typeof address === 'object' ? address.port : this.env.PORT;
    const base = `http://127.0.0.1:${port}`;
    // Cache only a real listening port (the address is null before listen).
    if (address && typeof address === 'object') this.baseUrl = base;
    return base;
  }

  /**
   * The exposure and click URLs of an answer's recommendations, made for this platform and
   * traffic and signed now: the answer's fragments (platform, expiry, base URL) are built once
   * (answerTokenSigner), each recommendation then costs its two tokens.
   */
  linker(agentId: string, traffic: Traffic): (recommendation: TrackedRecommendation) => TrackingLinks {
    const sign = answerTokenSigner(agentId, traffic, trackingExpiry(new Date(), this.env.TRACKING_LINK_TTL_DAYS), this.secrets.signing);
    const base = this.publicBaseUrl();
    const exposure = `${base}${EXPOSURE_PATH}?t=`;
    const click = `${base}${CLICK_PATH}?t=`;
    return (recommendation) => {
      const { shown, clicked } = sign(recommendation);
      return { exposure_url: exposure + shown, click_url: click + clicked };
    };
  }

  /** The claims of a valid token of this kind, else null (counted, not logged: tokens are not logged). */
  verify(token: string | undefined, kind: TrackingKind): SignedTrackingClaims | null {
    const claims = token === undefined ? null : verifyTrackingToken(token, kind, this.secrets.accepted);
    if (!claims) trackingRequests.inc({ kind, outcome: 'invalid' });
    return claims;
  }

  /**
   * Records the event of a verified token when it may be recorded (see the class), and says
   * what happened. Throws TrackingUnavailableError when it should have been recorded but could
   * not be: the platform lookup failed, or JetStream did not acknowledge and the outbox write
   * failed too (nothing is recorded then, and a retry can record it).
   */
  async record(kind: TrackingKind, claims: SignedTrackingClaims, address: string, requestId: string): Promise<TrackingOutcome> {
    const outcome = await this.decide(kind, claims, address, requestId);
    trackingRequests.inc({ kind, outcome });
    return outcome;
  }

  /**
   * The answer to a request of a tracking link: its token (`t`) verified for this kind (404
   * otherwise, nothing recorded), its event recorded when it may be (503 when it should have
   * been and could be kept nowhere); the landing URL of a click.
   */
  async follow(kind: TrackingKind, token: string | undefined, address: string, requestId: string): Promise<string> {
    const claims = this.verify(token, kind);
    if (!claims) throw new ProblemException('not-found', TRACKING_NOT_FOUND);
    try {
      await this.record(kind, claims, address, requestId);
    } catch (error) {
      if (error instanceof TrackingUnavailableError) {
        throw new ProblemException('service-unavailable', TRACKING_UNAVAILABLE, { 'Retry-After': String(TRACKING_RETRY_AFTER_SECONDS) });
      }
      throw error;
    }
    return claims.landing_url ?? '';
  }

  private async decide(kind: TrackingKind, claims: SignedTrackingClaims, address: string, requestId: string): Promise<TrackingOutcome> {
    const expiresAt = trackingLinkExpiresAt(claims, this.env.TRACKING_LINK_TTL_DAYS);
    if (!(Date.now() < expiresAt)) return 'expired';
    if ((await this.platformStatus(kind, claims.agent_id, requestId)) !== 'active') return 'suspended';
    const event = trackingEvent(kind, claims, new Date());
    const admission = await this.checks.admit(address, event.event_id);
    if (admission === 'rate_limited' || admission === 'duplicate') return admission;
    let outcome: 'published' | 'duplicate' | 'deferred';
    try {
      outcome = await this.publish(kind, event, requestId);
    } catch (error) {
      if (admission === 'admitted') await this.checks.release(event.event_id);
      throw error;
    }
    // Unchecked (Redis did not answer the admission): claimed now if Redis answers, so a later repeat is not published again.
    this.checks.confirm(event.event_id, expiresAt);
    return outcome;
  }

  /** The platform's status through the identity cache (a suspension is seen within a second). */
  private async platformStatus(kind: TrackingKind, agentId: string, requestId: string): Promise<string | null> {
    try {
      return await this.identity.platformStatus(agentId);
    } catch (error) {
      trackingRequests.inc({ kind, outcome: 'unavailable' });
      this.logger.warn({ requestId, kind, err: (error as Error).message }, 'tracking: platform status unavailable, nothing recorded');
      throw new TrackingUnavailableError(error);
    }
  }

  /**
   * Publishes a tracking event to JetStream and waits for the PubAck (header Nats-Msg-Id =
   * event_id): `duplicate` when JetStream reported it one. When JetStream does not acknowledge
   * (no stream, no permission, NATS down, timeout), the event goes to the gateway's outbox
   * (`deferred`), which TrackingEventsRelay publishes later with the same Nats-Msg-Id. Throws
   * TrackingUnavailableError only when the outbox write fails too.
   */
  private async publish(kind: TrackingKind, event: TrackingEvent, requestId: string): Promise<'published' | 'duplicate' | 'deferred'> {
    const subject = trackingSubject(kind);
    try {
      const ack = await this.nats.pubAcks.publish(subject, this.encoder.encode(JSON.stringify(event)), {
        msgID: event.event_id,
        timeout: TRACKING_PUBLISH_TIMEOUT_MS,
      });
      return ack.duplicate ? 'duplicate' : 'published';
    } catch (error) {
      this.logger.warn({ requestId, kind, event_id: event.event_id, err: (error as Error).message }, 'tracking event not published; keeping it in the outbox');
    }
    try {
      await this.outbox.write([{ event_id: event.event_id, subject, payload: event }]);
      return 'deferred';
    } catch (error) {
      trackingRequests.inc({ kind, outcome: 'unavailable' });
      this.logger.warn({ requestId, kind, event_id: event.event_id, err: (error as Error).message }, 'tracking event neither published nor kept in the outbox');
      throw new TrackingUnavailableError(error);
    }
  }
}
