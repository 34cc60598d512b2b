import { Column, PrimaryColumn, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * The columns of a transactional outbox table: an event written in the same transaction as the
 * change it announces, deleted once JetStream acknowledged it. Each service that has an outbox
 * declares its own entity on its own schema by extending this class.
 */
export abstract class OutboxEventEntity {
  @PrimaryColumn({ type: 'text', primaryKeyConstraintName: 'outbox_pkey' })
  event_id: string;

  @Column({ type: 'text' })
  subject: string;

  @Column({ type: 'jsonb' })
  payload: object;

  @Column({ type: 'timestamptz', default: () => 'now()' })
  created_at: Date;
}

/** An outbox row as written and as relayed (created_at is the database's). */
export interface OutboxEventRow<Payload extends object = object> {
  event_id: string;
  subject: string;
  payload: Payload;
}

/** The DDL of an outbox table `<schema>.outbox` (the columns of OutboxEventEntity), for migrations. */
export function outboxTableDdl(schema: string): string {
  return `
      CREATE TABLE ${schema}.outbox (
        event_id text PRIMARY KEY,
        subject text NOT NULL,
        payload jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`;
}

/** A migration that adds the outbox table of `schema` (a subclass names the migration and the schema). */
export abstract class OutboxTableMigration implements MigrationInterface {
  abstract readonly name: string;
  protected abstract readonly schema: string;

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(outboxTableDdl(this.schema));
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE IF EXISTS ${this.schema}.outbox`);
  }
}
