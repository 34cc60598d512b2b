export * from './subjects.js';
export * from './validators.js';
export * from './recommendation-event.dto.js';
export * from './accounting-event.dto.js';
export * from './reporting.dto.js';
export * from './rpc.js';
export * from './fast-validation.js';
