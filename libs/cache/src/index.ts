export {
  ScopedCache,
  ENTRY_OVERHEAD_BYTES,
  type ScopedCacheOptions,
  type ScopedCacheStats,
  type FetchOptions,
  type LookupOutcome,
} from './scoped-cache.js';
export { invalidateOnBroadcast, type BroadcastInvalidation, type BroadcastInvalidationOptions, type Invalidatable } from './broadcast-invalidation.js';
export { BroadcastCache } from './broadcast-cache.js';
