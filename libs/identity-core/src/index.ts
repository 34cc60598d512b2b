/**
 * The parts of the identity schema's rules that need no database library: the API key format
 * (api-key.ts), the identity errors and the checks of agent ids and owner uids, and the
 * `identity.v1.changed` broadcast. #libs/identity re-exports all of it beside its TypeORM
 * entities and repository; the ops CLI takes it from here so that a key command does not load
 * TypeORM.
 */
export {
  API_KEY_PREFIXES,
  API_KEY_RANDOM_LENGTH,
  KEY_ID_RANDOM_LENGTH,
  KEY_MODES,
  KEY_NAME_MAX_LENGTH,
  generateApiKey,
  generateKeyId,
  hashApiKey,
  hashApiKeyBase64,
  hashesEqual,
  isValidKeyId,
  keyNameProblem,
  lastFour,
  looksLikeJwt,
  parseApiKey,
  parseBearer,
  randomBase62,
  type BearerFailure,
  type BearerResult,
  type KeyMode,
} from './api-key.js';
export {
  IdentityError,
  invalidMode,
  isValidAgentId,
  isValidOwnerUid,
  keyNotFound,
  ownerConflict,
  platformNotFound,
  requireAgentId,
  requireOwnerUid,
  type IdentityErrorCode,
} from './identity-rules.js';
export { IDENTITY_CHANGED_SUBJECT, encodeIdentityChanged, decodeIdentityChanged, type IdentityChangedMessage } from './identity-changed.js';
