/**
 * Recommendation path contracts (issue 5): the reply of the recommendations service, the answer
 * of `POST /agent/recommend` and the tracking token the gateway signs into `exposure_url` /
 * `click_url`. The HTTP body and the request of `recommendations.v1.recommend` are DTO classes
 * (libs/recommend-request).
 *
 * The gateway validates the HTTP body and resolves the caller's platform and traffic from the API
 * key; the service never sees the key and trusts only `agent_id` / `traffic` from the gateway.
 */
import type { Traffic } from './recommendation-event.dto.js';

/** Latency budget when the caller gives none, and the bounds a given one is clamped to. */
export const RECOMMEND_DEFAULT_LATENCY_BUDGET_MS = 1000;
export const RECOMMEND_MIN_LATENCY_BUDGET_MS = 50;
export const RECOMMEND_MAX_LATENCY_BUDGET_MS = 10000;
/** At most this many recommendations per answer ("at most a few"). */
export const RECOMMEND_MAX_RESULTS = 3;

/** One ranked ad as the service returns it; the gateway adds the signed tracking URLs. */
export interface RankedRecommendation {
  recommendation_id: string;
  ad_id: string;
  product_id: string;
  product_title: string;
  weave_summary?: string;
  tail_summary?: string;
  creative_input: { short_description?: string; [key: string]: unknown };
  /** 0–100. */
  contextual_relevance_score: number;
  /** Where a click is redirected; never shown to the caller directly. */
  landing_url: string;
  /** Creation time of the recommendation (ISO 8601 UTC): fixes its reporting period. */
  created_at: string;
}

export interface RecommendResult {
  request_id: string;
  query: string;
  recommendations: RankedRecommendation[];
}

/** A recommendation as `POST /agent/recommend` answers it (SPEC "Recommendation"). */
export interface RecommendationView {
  recommendation_id: string;
  ad_id: string;
  product_id: string;
  product_title: string;
  click_url: string;
  exposure_url: string;
  weave_summary?: string;
  tail_summary?: string;
  creative_input: { short_description?: string; [key: string]: unknown };
  contextual_relevance_score: number;
}

/** 200 body of `POST /agent/recommend`; an empty list means "none found" (with `error`). */
export interface RecommendHttpResponse {
  request_id: string;
  query: string;
  recommendations: RecommendationView[];
  error?: string;
}

/** What a tracking token carries (signed with TRACKING_SIGNING_SECRET, HMAC-SHA256). */
export interface TrackingClaims {
  recommendation_id: string;
  agent_id: string;
  traffic: Traffic;
  recommendation_created_at: string;
  ad_id: string;
  product_id: string;
}
