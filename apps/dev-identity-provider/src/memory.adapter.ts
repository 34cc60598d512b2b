import { LRUCache } from 'lru-cache';
import type { Adapter, AdapterPayload } from 'oidc-provider';

/** Models whose artifacts belong to a grant and are revoked with it. */
const GRANTABLE = new Set(['AccessToken', 'AuthorizationCode', 'RefreshToken', 'DeviceCode', 'BackchannelAuthenticationRequest']);
const MAX_ENTRIES = 10_000;

type Entry = AdapterPayload | string | Set<string>;

/**
 * oidc-provider's storage for the development identity provider: in memory (a restart signs
 * everybody out, which is what a development provider should do), bounded (lru-cache: at most
 * MAX_ENTRIES artifacts, each dropped at its own expiry).
 *
 * Why not oidc-provider's built-in memory adapter: the library prints a "you MUST change it"
 * warning whenever it is used, which would greet every newcomer at `npm start`; its replacement
 * is this adapter (the library documents the interface; this is the whole of it).
 */
export function memoryAdapterFactory(): (model: string) => Adapter {
  const store = new LRUCache<string, Entry>({ max: MAX_ENTRIES });
  const grantKey = (grantId: string) => `grant:${grantId}`;
  const uidKey = (uid: string) => `sessionUid:${uid}`;
  const userCodeKey = (code: string) => `userCode:${code}`;
  const ttl = (expiresIn?: number) => (typeof expiresIn === 'number' && expiresIn > 0 ? { ttl: expiresIn * 1000 } : {});

  return (model: string): Adapter => {
    const key = (id: string) => `${model}:${id}`;
    const find = async (id: string | undefined) => (id === undefined ? undefined : (store.get(key(id)) as AdapterPayload | undefined));
    return {
      async upsert(id, payload, expiresIn) {
        store.set(key(id), payload, ttl(expiresIn));
        if (model === 'Session' && payload.uid) store.set(uidKey(payload.uid), id, ttl(expiresIn));
        if (payload.userCode) store.set(userCodeKey(payload.userCode), id, ttl(expiresIn));
        if (GRANTABLE.has(model) && payload.grantId) {
          const members = (store.get(grantKey(payload.grantId)) as Set<string> | undefined) ?? new Set<string>();
          members.add(key(id));
          store.set(grantKey(payload.grantId), members);
        }
      },
      find,
      findByUid: async (uid) => find(store.get(uidKey(uid)) as string | undefined),
      findByUserCode: async (code) => find(store.get(userCodeKey(code)) as string | undefined),
      async consume(id) {
        const payload = store.get(key(id)) as AdapterPayload | undefined;
        if (payload) payload.consumed = Math.floor(Date.now() / 1000);
      },
      async destroy(id) {
        store.delete(key(id));
      },
      async revokeByGrantId(grantId) {
        const members = store.get(grantKey(grantId)) as Set<string> | undefined;
        for (const member of members ?? []) store.delete(member);
        store.delete(grantKey(grantId));
      },
    };
  };
}
