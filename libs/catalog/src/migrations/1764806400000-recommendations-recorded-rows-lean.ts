import { sqlMigration } from '#libs/database';

const TABLE = 'recommendations.recommendation';
const KEY = 'agent_id, traffic, session_id, message_id';
const FOREIGN_KEY = 'recommendation_agent_id_traffic_session_id_message_id_fkey';
const UNIQUE_RANK = 'recommendation_agent_id_traffic_session_id_message_id_rank_key';

/**
 * A recorded recommendation costs one index and no foreign-key check to write
 * (docs/decisions/recommend-lean-recording-and-rescoring.md):
 *
 * - the primary key is the answer's key and the rank (the index every replay reads), instead of
 *   `recommendation_id` (an index no statement reads; the ids are 96 random bits drawn by the
 *   service, and the outbox's primary key on `evt_gen_<recommendation_id>` still refuses a
 *   repeated id while its event waits to be published);
 * - no foreign key to `recommendation_request`: the answer's statement inserts the recommendation
 *   rows only from the request row it has just inserted (its CTE's RETURNING), nothing else
 *   writes them and nothing deletes requests, so the check (an index probe and a row lock, with its
 *   WAL record, per recommendation) could only ever pass.
 */
export const RecommendationsRecordedRowsLean1764806400000 = sqlMigration(
  'RecommendationsRecordedRowsLean1764806400000',
  [
    `ALTER TABLE ${TABLE}
       DROP CONSTRAINT ${FOREIGN_KEY},
       DROP CONSTRAINT recommendation_pkey,
       DROP CONSTRAINT ${UNIQUE_RANK},
       ADD CONSTRAINT recommendation_pkey PRIMARY KEY (${KEY}, rank)`,
  ],
  [
    `ALTER TABLE ${TABLE}
       DROP CONSTRAINT recommendation_pkey,
       ADD CONSTRAINT recommendation_pkey PRIMARY KEY (recommendation_id),
       ADD CONSTRAINT ${UNIQUE_RANK} UNIQUE (${KEY}, rank),
       ADD CONSTRAINT ${FOREIGN_KEY} FOREIGN KEY (${KEY}) REFERENCES recommendations.recommendation_request (${KEY})`,
  ],
);
