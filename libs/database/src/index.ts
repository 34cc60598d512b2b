export {
  ServiceDataSource,
  createServiceDataSource,
  ensureDatabase,
  initializeDatabase,
  isTransientDatabaseError,
  pgPoolOf,
  type ServiceDataSourceOptions,
} from './data-source.js';
export { OutboxEventEntity, type OutboxEventRow } from './outbox-event.entity.js';
export { outboxTableDdl, outboxTableMigration, sqlMigration, type MigrationClass } from './sql-migration.js';
export { OutboxRepository, OutboxRepositoryOf } from './outbox.repository.js';
export { arrayLiteral, quoteLiteral, quotedTextArray, textArrayLiteral } from './sql-literals.js';
