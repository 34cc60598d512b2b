export {
  ServiceDataSource,
  createServiceDataSource,
  ensureDatabase,
  initializeDatabase,
  isTransientDatabaseError,
  type ServiceDataSourceOptions,
} from './data-source.js';
export { OutboxEventEntity, OutboxTableMigration, outboxTableDdl, type OutboxEventRow } from './outbox-event.entity.js';
export { OutboxRepository } from './outbox.repository.js';
