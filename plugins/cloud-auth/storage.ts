/**
 * Where the cloud auth method keeps its state in the mount's storage view, and the JSON helpers
 * every path uses. The keys are Vault's, so a storage dump reads the same.
 */
import type { Storage } from '../../sdk/index.js';

export const STORAGE_KEYS = {
  /** The client configuration (credentials, endpoints, login header rules); one per mount. */
  clientConfig: 'config/client',
  /** Which alias and metadata iam and ec2 logins produce; absent means the defaults. */
  identityConfig: 'config/identity',
  /** Registered public certificates for ec2 signatures, by name. */
  certificatePrefix: 'config/certificate/',
  /** The role to assume for each satellite account, by account ID. */
  stsPrefix: 'config/sts/',
  /** Tidy settings of the identity access list (Vault's pre-1.7 word kept, as Vault keeps it). */
  tidyAccessList: 'config/tidy/identity-whitelist',
  /** Tidy settings of the role-tag deny list (Vault's pre-1.7 word kept). */
  tidyDenyList: 'config/tidy/roletag-blacklist',
  /** Roles, by lower-cased name. */
  rolePrefix: 'role/',
  /** The identity access list: the last successful ec2 login of each instance, by instance ID (Vault's word kept). */
  accessListPrefix: 'whitelist/identity/',
  /**
   * Deny-listed role tags, by the tag in URL-safe base64: a role tag (and its standard base64)
   * can hold `/`, which would make a key a folder of the storage listing.
   */
  denyListPrefix: 'blacklist/roletag/',
  /**
   * Present once every deny-list entry is keyed by its tag's canonical form (deny-list.ts): until
   * then, entries written by earlier versions under another spelling are found by scanning the list.
   * Outside denyListPrefix, so it is never listed as a tag.
   */
  denyListKeyedCanonically: 'blacklist/roletag-keyed-canonically',
} as const;

export async function readJson<T>(storage: Storage, key: string): Promise<T | undefined> {
  const raw = await storage.get(key);
  return raw ? (JSON.parse(Buffer.from(raw).toString('utf8')) as T) : undefined;
}

export async function writeJson(storage: Storage, key: string, value: unknown): Promise<void> {
  await storage.put(key, Buffer.from(JSON.stringify(value), 'utf8'));
}
