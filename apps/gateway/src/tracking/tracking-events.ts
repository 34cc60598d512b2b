import { createHash } from 'node:crypto';
import { EventSubjects, type Traffic } from '#libs/contracts';
import type { SignedTrackingClaims, TrackingKind } from './tracking-token.js';

/** Payload of `events.recommendation.shown|clicked` as DESIGN §4 fixes it. */
export interface TrackingEvent {
  event_id: string;
  recommendation_id: string;
  agent_id: string;
  traffic: Traffic;
  recommendation_created_at: string;
  occurred_at: string;
  billable: boolean;
  ad_id: string;
  product_id: string;
}

const MAX_EVENT_ID_LENGTH = 200;

/**
 * One event id per (kind, recommendation): `evt_shown_<recommendation_id>` and
 * `evt_clicked_<recommendation_id>` (a SHA-256 of the id instead when that would pass the
 * contract's 200 characters). A repeated exposure or click of the same recommendation
 * publishes the same id, which JetStream drops inside its duplicate window (Nats-Msg-Id) and the
 * projection absorbs after it (a recommendation's level only rises): a reloaded page or a
 * double click counts once, and the event is "the recommendation was shown", not "a view".
 */
export function trackingEventId(kind: TrackingKind, recommendationId: string): string {
  const readable = `evt_${kind}_${recommendationId}`;
  if (readable.length <= MAX_EVENT_ID_LENGTH) return readable;
  return `evt_${kind}_h${createHash('sha256').update(recommendationId, 'utf8').digest('hex')}`;
}

export function trackingSubject(kind: TrackingKind): string {
  return `${EventSubjects.recommendationPrefix}${kind}`;
}

/** The event a verified token stands for; a click is billable (it is expected to be paid for). */
export function trackingEvent(kind: TrackingKind, claims: SignedTrackingClaims, occurredAt: Date): TrackingEvent {
  return {
    event_id: trackingEventId(kind, claims.recommendation_id),
    recommendation_id: claims.recommendation_id,
    agent_id: claims.agent_id,
    traffic: claims.traffic,
    recommendation_created_at: claims.recommendation_created_at,
    occurred_at: occurredAt.toISOString(),
    billable: kind === 'clicked',
    ad_id: claims.ad_id,
    product_id: claims.product_id,
  };
}
