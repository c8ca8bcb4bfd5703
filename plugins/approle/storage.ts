/**
 * Where the AppRole method keeps its state in the mount's storage view, and the JSON helpers every
 * path uses. The keys are Vault's, so a storage dump reads the same. Secret IDs are never stored:
 * an entry is found by the HMAC of its secret ID under the role's `hmac_key`.
 */
// Keyed with a KeyObject: on Node 24 node:crypto turns key bytes into a key object on every call
// at several times the cost of making one (bench/README.md, "Storage reads").
import { createHmac, createSecretKey } from 'node:crypto';
import { BadRequestError, type Storage } from '../../sdk/index.js';

export const STORAGE_KEYS = {
  /** Roles, by lower-cased name. */
  rolePrefix: 'role/',
  /** The role of each role ID, by the salted HMAC of the role ID: logins name a role by its role ID. */
  roleIdPrefix: 'role_id/',
  /** Secret IDs, by `<HMAC of the role name>/<HMAC of the secret ID>`, both under the role's hmac_key. */
  secretIdPrefix: 'secret_id/',
  /** The same, for roles with local_secret_ids (Vault keeps them out of replication; here only the key differs). */
  localSecretIdPrefix: 'secret_id_local/',
  /** The secret ID of each accessor, by the salted HMAC of the accessor. */
  accessorPrefix: 'accessor/',
  localAccessorPrefix: 'accessor_local/',
  /** The mount's random salt of the role ID and accessor indexes, made on first use. */
  salt: 'salt',
} as const;

/** The longest value hashed into a key (a role name, a secret ID), as in Vault. */
export const MAX_HMAC_INPUT_BYTES = 4096;

export async function readJson<T>(storage: Storage, key: string): Promise<T | undefined> {
  const raw = await storage.get(key);
  return raw ? (JSON.parse(Buffer.from(raw).toString('utf8')) as T) : undefined;
}

export async function writeJson(storage: Storage, key: string, value: unknown): Promise<void> {
  await storage.put(key, Buffer.from(JSON.stringify(value), 'utf8'));
}

/**
 * Hex HMAC-SHA256 of `value` under `key`.
 * @throws BadRequestError when `value` is longer than MAX_HMAC_INPUT_BYTES.
 */
export function hmacHex(key: string | Uint8Array, value: string, what: string): string {
  if (Buffer.byteLength(value, 'utf8') > MAX_HMAC_INPUT_BYTES) throw new BadRequestError(`${what} is longer than maximum of ${MAX_HMAC_INPUT_BYTES} bytes`);
  return createHmac('sha256', typeof key === 'string' ? key : createSecretKey(key)).update(value, 'utf8').digest('hex');
}
