export { createServiceDataSource, ensureDatabase, initializeDatabase, isTransientDatabaseError, type ServiceDataSourceOptions } from './data-source.js';
