import { createLogger } from '#libs/observability';

/** Services under test log only warnings and errors, to keep test output readable. */
export const testLogger = (service: string) => createLogger(service, process.env.TEST_LOG_LEVEL ?? 'warn');
