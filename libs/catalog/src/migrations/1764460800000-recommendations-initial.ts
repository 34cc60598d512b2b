import { outboxTableDdl, sqlMigration } from '#libs/database';

/**
 * Schema `recommendations` (issue 5):
 * - `ads`: the catalog, upserted by `ops ads import`. `search_vector` is generated from the
 *   text fields with weights A (title), B (keywords), C (summaries and short description), under
 *   the `english` configuration, and GIN-indexed for full-text search.
 * - `recommendation_request` + `recommendation`: every answer given, keyed by platform, traffic,
 *   session and message, so the same question asked again (or twice at once) gets the same
 *   recommendations, ids and created_at included. A recommendation row keeps what was answered
 *   (title, summaries, creative, landing URL), so a later catalog change does not alter a replay.
 *   The end user's words (query, messages) are not stored.
 * - `outbox`: the `events.recommendation.generated` events, written in the transaction that
 *   records the recommendations and deleted once JetStream acknowledged them.
 */
export const RecommendationsInitial1764460800000 = sqlMigration(
  'RecommendationsInitial1764460800000',
  [
    `
      CREATE TABLE recommendations.ads (
        ad_id text PRIMARY KEY,
        product_id text NOT NULL,
        product_title text NOT NULL,
        weave_summary text,
        tail_summary text,
        creative_input jsonb NOT NULL CHECK (jsonb_typeof(creative_input) = 'object'),
        landing_url text NOT NULL CHECK (landing_url ~* '^https?://'),
        keywords jsonb NOT NULL DEFAULT '[]'::jsonb CHECK (jsonb_typeof(keywords) = 'array'),
        active boolean NOT NULL DEFAULT true,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        search_vector tsvector GENERATED ALWAYS AS (
          setweight(to_tsvector('english'::regconfig, product_title), 'A')
          || setweight(jsonb_to_tsvector('english'::regconfig, keywords, '["string"]'), 'B')
          || setweight(to_tsvector('english'::regconfig, coalesce(weave_summary, '')), 'C')
          || setweight(to_tsvector('english'::regconfig, coalesce(tail_summary, '')), 'C')
          || setweight(to_tsvector('english'::regconfig, coalesce(creative_input ->> 'short_description', '')), 'C')
        ) STORED
      )`,
    `CREATE INDEX ads_search_idx ON recommendations.ads USING gin (search_vector)`,
    `
      CREATE TABLE recommendations.recommendation_request (
        agent_id text NOT NULL,
        traffic text NOT NULL CHECK (traffic IN ('live', 'test')),
        session_id text NOT NULL,
        message_id text NOT NULL,
        request_id text NOT NULL,
        created_at timestamptz NOT NULL,
        PRIMARY KEY (agent_id, traffic, session_id, message_id)
      )`,
    `
      CREATE TABLE recommendations.recommendation (
        recommendation_id text PRIMARY KEY,
        agent_id text NOT NULL,
        traffic text NOT NULL,
        session_id text NOT NULL,
        message_id text NOT NULL,
        rank smallint NOT NULL CHECK (rank >= 1),
        ad_id text NOT NULL,
        product_id text NOT NULL,
        product_title text NOT NULL,
        weave_summary text,
        tail_summary text,
        creative_input jsonb NOT NULL,
        landing_url text NOT NULL,
        score numeric(4, 1) NOT NULL CHECK (score >= 0 AND score <= 100),
        created_at timestamptz NOT NULL,
        UNIQUE (agent_id, traffic, session_id, message_id, rank),
        FOREIGN KEY (agent_id, traffic, session_id, message_id)
          REFERENCES recommendations.recommendation_request (agent_id, traffic, session_id, message_id)
      )`,
    outboxTableDdl('recommendations'),
  ],
  ['outbox', 'recommendation', 'recommendation_request', 'ads'].map((table) => `DROP TABLE IF EXISTS recommendations.${table}`),
);
