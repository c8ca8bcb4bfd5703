/**
 * Where the Kubernetes auth method keeps its state in the mount's storage view, and the JSON
 * helpers its paths use. The keys are Vault's, so a storage dump reads the same.
 */
import type { Storage } from '../../sdk/index.js';

export const STORAGE_KEYS = {
  /** How the API server is reached and tokens are checked; one per mount. */
  config: 'config',
  /** Roles, by lower-cased name. */
  rolePrefix: 'role/',
} as const;

export async function readJson<T>(storage: Storage, key: string): Promise<T | undefined> {
  const raw = await storage.get(key);
  return raw ? (JSON.parse(Buffer.from(raw).toString('utf8')) as T) : undefined;
}

export async function writeJson(storage: Storage, key: string, value: unknown): Promise<void> {
  await storage.put(key, Buffer.from(JSON.stringify(value), 'utf8'));
}
