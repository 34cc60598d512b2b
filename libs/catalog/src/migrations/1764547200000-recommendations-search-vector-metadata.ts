import type { MigrationInterface, QueryRunner } from 'typeorm';

const EXPRESSION =
  `setweight(to_tsvector('english'::regconfig, product_title), 'A')` +
  ` || setweight(jsonb_to_tsvector('english'::regconfig, keywords, '["string"]'), 'B')` +
  ` || setweight(to_tsvector('english'::regconfig, coalesce(weave_summary, '')), 'C')` +
  ` || setweight(to_tsvector('english'::regconfig, coalesce(tail_summary, '')), 'C')` +
  ` || setweight(to_tsvector('english'::regconfig, coalesce(creative_input ->> 'short_description', '')), 'C')`;

/**
 * Records the expression of the generated column `ads.search_vector` (migration 1764460800000)
 * in TypeORM's metadata table, which is where TypeORM reads a generated column's expression
 * when it compares the schema with the entities (PostgreSQL reformats its own copy). Without
 * this row `migration:generate` would propose to drop and re-create the column. Data unchanged.
 */
export class RecommendationsSearchVectorMetadata1764547200000 implements MigrationInterface {
  name = 'RecommendationsSearchVectorMetadata1764547200000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // The table TypeORM itself creates (MigrationExecutor) for entities with generated columns.
    await queryRunner.query(`
      CREATE TABLE IF NOT EXISTS recommendations.typeorm_metadata (
        "type" character varying NOT NULL,
        "database" character varying,
        "schema" character varying,
        "table" character varying,
        "name" character varying,
        "value" text
      )`);
    await queryRunner.query(
      `INSERT INTO recommendations.typeorm_metadata ("type", "database", "schema", "table", "name", "value")
       VALUES ('GENERATED_COLUMN', current_database(), 'recommendations', 'ads', 'search_vector', $1)`,
      [EXPRESSION],
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `DELETE FROM recommendations.typeorm_metadata
        WHERE "type" = 'GENERATED_COLUMN' AND "schema" = 'recommendations' AND "table" = 'ads' AND "name" = 'search_vector'`,
    );
  }
}
