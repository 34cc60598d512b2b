import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { KEY_MODES, type IdentityRepository, type KeyMode } from '#libs/identity';

export interface DemoKey {
  key_id: string;
  api_key: string;
  mode: KeyMode;
  /** Created by this run (else kept from an earlier one). */
  created: boolean;
}

type StoredKeys = Partial<Record<KeyMode, { key_id: string; api_key: string }>>;

/**
 * The demo platform's two API keys (live and test). A secret is shown only when its key is
 * created (DESIGN §3), so the demo keeps the secrets of its own keys in a file beside the
 * private servers' data (mode 0600, gitignored) and shows them again on every run. A run
 * creates a key only when the stored one no longer works: revoked, made against another
 * database, or the file deleted. Re-runs therefore add no keys.
 */
export async function demoKeys(identity: IdentityRepository, agentId: string, file: string): Promise<Record<KeyMode, DemoKey>> {
  const stored: StoredKeys = await readFile(file, 'utf8')
    .then((text) => JSON.parse(text) as StoredKeys)
    .catch(() => ({}));
  const keys = {} as Record<KeyMode, DemoKey>;
  for (const mode of KEY_MODES) {
    const previous = stored[mode];
    const active = previous ? await identity.findActiveKeyBySecret(previous.api_key) : null;
    if (previous && active && active.agent_id === agentId && active.mode === mode && active.key_id === previous.key_id) {
      keys[mode] = { ...previous, mode, created: false };
    } else {
      const created = await identity.createKey(agentId, mode);
      keys[mode] = { key_id: created.key_id, api_key: created.api_key, mode, created: true };
    }
  }
  if (KEY_MODES.some((mode) => keys[mode].created)) {
    await mkdir(dirname(file), { recursive: true, mode: 0o700 });
    const toStore: StoredKeys = Object.fromEntries(KEY_MODES.map((mode) => [mode, { key_id: keys[mode].key_id, api_key: keys[mode].api_key }]));
    await writeFile(file, `${JSON.stringify(toStore, null, 2)}\n`, { mode: 0o600 });
  }
  return keys;
}
