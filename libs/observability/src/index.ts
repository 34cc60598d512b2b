export { createLogger, LOGGER, PinoNestLogger, REDACTED_PATHS, prettyWanted, type LogFormat, type Logger } from './logger.js';
export { metricsRegistry, collectProcessMetrics, counter, gauge, histogram } from './metrics.js';
export { HealthController, ObservabilityModule, DEPENDENCY_CHECKS, type DependencyCheck } from './health.js';
