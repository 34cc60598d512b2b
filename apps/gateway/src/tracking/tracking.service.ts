import { Inject, Injectable } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { LOGGER } from '#libs/bootstrap';
import type { RankedRecommendation, Traffic } from '#libs/contracts';
import { NatsClient } from '#libs/nats';
import { counter, type Logger } from '#libs/observability';
import { GatewayEnv } from '../config/gateway.env.js';
import { trackingEvent, trackingSubject, type TrackingEvent } from './tracking-events.js';
import { signTrackingToken, verifyTrackingToken, type SignedTrackingClaims, type TrackingKind } from './tracking-token.js';

export const EXPOSURE_PATH = '/track/exposure';
export const CLICK_PATH = '/track/click';
/** How long a tracking route waits for JetStream's PubAck before answering 503. */
export const TRACKING_PUBLISH_TIMEOUT_MS = 2000;

const trackingRequests = counter('weave_tracking_requests_total', 'Tracking URL requests by kind and outcome', ['kind', 'outcome']);

/** JetStream did not acknowledge a tracking event (NATS down or slow): the route answers 503. */
export class TrackingPublishError extends Error {
  constructor(cause: unknown) {
    super(`tracking event not acknowledged: ${(cause as Error)?.message ?? String(cause)}`);
    this.name = 'TrackingPublishError';
  }
}

/**
 * Signs the tracking URLs of recommendations and turns verified tokens into lifecycle events.
 * The secrets live only here and in the env object; they are never logged.
 */
@Injectable()
export class TrackingService {
  private readonly encoder = new TextEncoder();
  private readonly secrets: readonly string[];
  private baseUrl?: string;

  constructor(
    private readonly env: GatewayEnv,
    private readonly nats: NatsClient,
    private readonly adapterHost: HttpAdapterHost,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.secrets = [env.TRACKING_SIGNING_SECRET, env.TRACKING_SIGNING_SECRET_PREVIOUS].filter((s): s is string => !!s);
  }

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

  /** The exposure and click URLs of one recommendation made for this platform and traffic. */
  links(recommendation: RankedRecommendation, agentId: string, traffic: Traffic): { exposure_url: string; click_url: string } {
    const common = {
      v: 1 as const,
      recommendation_id: recommendation.recommendation_id,
      agent_id: agentId,
      traffic,
      recommendation_created_at: recommendation.created_at,
      ad_id: recommendation.ad_id,
      product_id: recommendation.product_id,
    };
    const secret = this.secrets[0];
    const exposure = signTrackingToken({ ...common, kind: 'shown' }, secret);
    const click = signTrackingToken({ ...common, kind: 'clicked', landing_url: recommendation.landing_url }, secret);
    const base = this.publicBaseUrl();
    return { exposure_url: `${base}${EXPOSURE_PATH}?t=${exposure}`, click_url: `${base}${CLICK_PATH}?t=${click}` };
  }

  /** The claims of a valid token of this kind, else null (counted, not logged: tokens are not logged). */
  verify(token: string | undefined, kind: TrackingKind): SignedTrackingClaims | null {
    const claims = token === undefined ? null : verifyTrackingToken(token, kind, this.secrets);
    if (!claims) trackingRequests.inc({ kind, outcome: 'invalid' });
    return claims;
  }

  /**
   * Publishes the event of a verified token to JetStream and waits for the PubAck (header
   * Nats-Msg-Id = event_id). Throws TrackingPublishError when JetStream does not acknowledge.
   */
  async publish(kind: TrackingKind, claims: SignedTrackingClaims, requestId: string): Promise<TrackingEvent> {
    const event = trackingEvent(kind, claims, new Date());
    try {
      const ack = await this.nats.jetstream.publish(trackingSubject(kind), this.encoder.encode(JSON.stringify(event)), {
        msgID: event.event_id,
        timeout: TRACKING_PUBLISH_TIMEOUT_MS,
      });
      trackingRequests.inc({ kind, outcome: ack.duplicate ? 'duplicate' : 'published' });
      return event;
    } catch (error) {
      trackingRequests.inc({ kind, outcome: 'unavailable' });
      this.logger.warn({ requestId, kind, event_id: event.event_id, err: (error as Error).message }, 'tracking event not published');
      throw new TrackingPublishError(error);
    }
  }
}
