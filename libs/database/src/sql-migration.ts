import type { MigrationInterface, QueryRunner } from 'typeorm';

/** A TypeORM migration class, as a DataSource's `migrations` lists it. */
export type MigrationClass = new () => MigrationInterface;

/**
 * A migration written in SQL: `up` runs its statements in order, `down` its own. TypeORM records
 * it under `name` (ending in its timestamp), as it does a generated migration class.
 */
export function sqlMigration(name: string, up: readonly string[], down: readonly string[]): MigrationClass {
  return class implements MigrationInterface {
    readonly name = name;

    async up(queryRunner: QueryRunner): Promise<void> {
      for (const statement of up) await queryRunner.query(statement);
    }

    async down(queryRunner: QueryRunner): Promise<void> {
      for (const statement of down) await queryRunner.query(statement);
    }
  };
}

/** The DDL of the outbox table of `schema` (the columns of OutboxEventEntity). */
export function outboxTableDdl(schema: string): string {
  return `
      CREATE TABLE ${schema}.outbox (
        event_id text PRIMARY KEY,
        subject text NOT NULL,
        payload jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`;
}

/** A migration that adds the outbox table of `schema`. */
export function outboxTableMigration(name: string, schema: string): MigrationClass {
  return sqlMigration(name, [outboxTableDdl(schema)], [`DROP TABLE IF EXISTS ${schema}.outbox`]);
}
