/**
 * Vault's transit backup blob (docs/transit.md, "Export, backup and bring your own key") ↔ our
 * policy and versions, so a backup taken from Vault restores here and ours restores in Vault.
 *
 * The blob is std-base64 of Go's JSON of `{"policy": Policy, "archived_keys": {"keys":
 * [KeyEntry]}}`: Go field names (some untagged, like `Imported`), the key type as Vault's number
 * (hmac = 11), `auto_rotate_period` in nanoseconds, and ECDSA/RSA parameters as bare JSON big
 * integers — read and written with lossless-json, since JSON.parse would round them to doubles.
 * `policy.keys` holds the working set (versions ≥ min_decryption_version); the archive holds every
 * version from min_available_version on, at index version − min_available_version (index 0 is an
 * empty entry while nothing was trimmed). We write both, as Vault does, and read a version from
 * either.
 *
 * Post-quantum keys (ml-dsa 14, hybrid 15, slh-dsa 17) are Vault Enterprise types whose entries
 * Vault does not document: the policy carries `parameter_set` and, for hybrid keys,
 * `hybrid_config` {PQCKeyType, ECKeyType} as Go would write Vault's HybridKeyConfig; an entry's
 * `key` is the private key as export gives it and `public_key` the raw public key, base64
 * (docs/transit.md, "Post-quantum signing keys").
 */
import { createPrivateKey, createPublicKey, randomBytes, sign, verify, type JsonWebKey, type KeyObject } from 'node:crypto';
import { parse, parseNumberAndBigInt, stringify } from 'lossless-json';
import { BadRequestError } from '../../../sdk/index.js';
import { decodeBase64 } from '../crypto/base64.js';
import { kemMaterialFromImport, kemPublicKeyFromImport, parameterSetFor } from '../crypto/kem.js';
import { x25519FromRaw, x25519PublicFromRaw, x25519RawPrivate } from '../crypto/x25519.js';
import { KeyPolicy, type BackupInfo, type PolicySettings } from './key-policy.js';
import { keyTypeByVaultId, type KeyTypeInfo } from './key-types.js';
import type { KeyVersion } from './key-version.js';
import { checkKeyMatchesType, ed25519FromGoPrivateKey, ed25519GoPrivateKey, exportPublicKey, exportSigningKey } from './key-material.js';
import { KEY_TYPES } from './key-types.js';
import { HYBRID_EC_TYPES, pqParameters, pqVersionFromBackup, pqPublicKeyBytes, type PqParameters } from '../crypto/pq-signing.js';

const NANOS_PER_SECOND = 1_000_000_000n;
/** Go's zero time.Time, as the empty archive entry at index 0 carries it. */
const GO_ZERO_TIME = '0001-01-01T00:00:00Z';
/** Byte length of an ECDSA coordinate per curve (JWK wants them at full width). */
const COORDINATE_BYTES: Readonly<Record<string, number>> = { 'P-256': 32, 'P-384': 48, 'P-521': 66 };

type JsonObject = Record<string, unknown>;

// ---------------------------------------------------------------------------------------------
// Ours → Vault

/** The backup blob of a key (the caller has checked exportable and allow_plaintext_backup). */
export function encodeBackup(policy: KeyPolicy): string {
  const s = policy.settings;
  const keys: JsonObject = {};
  for (const [version, v] of [...policy.versions].sort((a, b) => a[0] - b[0])) {
    if (version >= s.minDecryptionVersion) keys[String(version)] = goKeyEntry(policy.info, v, policy.pq);
  }
  const archive: JsonObject[] = [];
  for (let version = s.minAvailableVersion; version <= s.latestVersion; version++) {
    const v = policy.versions.get(version);
    archive.push(v ? goKeyEntry(policy.info, v, policy.pq) : emptyGoKeyEntry());
  }
  const goPolicy: JsonObject = {
    name: s.name,
    ...(s.keySize ? { key_size: s.keySize } : {}),
    ...(s.parameterSet ? { parameter_set: s.parameterSet } : {}),
    keys,
    derived: s.derived,
    kdf: s.kdf,
    convergent_encryption: s.convergentEncryption,
    exportable: s.exportable,
    min_decryption_version: s.minDecryptionVersion,
    min_encryption_version: s.minEncryptionVersion,
    latest_version: s.latestVersion,
    archive_version: s.latestVersion,
    archive_min_version: s.minAvailableVersion,
    min_available_version: s.minAvailableVersion,
    deletion_allowed: s.deletionAllowed,
    convergent_version: s.convergentVersion,
    type: policy.info.vaultId,
    backup_info: s.backupInfo ?? null,
    restore_info: s.restoreInfo ?? null,
    allow_plaintext_backup: s.allowPlaintextBackup,
    version_template: '',
    storage_prefix: '',
    auto_rotate_period: BigInt(s.autoRotatePeriod) * NANOS_PER_SECOND,
    Imported: s.imported,
    AllowImportedKeyRotation: s.allowImportedKeyRotation,
    ...(s.parameterSet ? { parameter_set: s.parameterSet } : {}),
    ...(s.hybridEc ? { hybrid_config: { PQCKeyType: KEY_TYPES['ml-dsa'].vaultId, ECKeyType: KEY_TYPES[s.hybridEc].vaultId } } : {}),
  };
  const json = stringify({ policy: goPolicy, archived_keys: { keys: archive } })!;
  return Buffer.from(json, 'utf8').toString('base64');
}

function goKeyEntry(info: KeyTypeInfo, v: KeyVersion, pq: PqParameters | undefined): JsonObject {
  const entry: JsonObject = { key: null, hmac_key: v.hmacKey.toString('base64'), time: v.time };
  switch (info.family) {
    case 'ml-dsa':
    case 'slh-dsa':
    case 'hybrid':
      if (v.privateKey) entry.key = exportSigningKey(info, v, pq);
      entry.public_key = pqPublicKeyBytes(info.family, { publicKey: v.publicKey!, ...(v.ecPublicKey ? { ecPublicKey: v.ecPublicKey } : {}) }).toString('base64');
      break;
    case 'aes-gcm':
    case 'chacha':
    case 'hmac':
    case 'cmac':
      entry.key = v.key!.toString('base64');
      break;
    case 'kem':
      if (v.key) entry.key = v.key.toString('base64');
      entry.public_key = v.encapsulationKey!.toString('base64');
      break;
    case 'ed25519':
      if (v.privateKey) entry.key = ed25519GoPrivateKey(v.privateKey).toString('base64');
      entry.public_key = exportPublicKey(info, v);
      break;
    case 'x25519':
      // Our own type (key-types.ts): the raw 32-byte private and public keys, as RFC 7748 writes them.
      if (v.privateKey) entry.key = x25519RawPrivate(v.privateKey).toString('base64');
      entry.public_key = exportPublicKey(info, v);
      break;
    case 'ecdsa': {
      const jwk = (v.privateKey ?? v.publicKey!).export({ format: 'jwk' });
      entry.ec_x = bigFromBase64Url(jwk.x!);
      entry.ec_y = bigFromBase64Url(jwk.y!);
      if (jwk.d) entry.ec_d = bigFromBase64Url(jwk.d);
      entry.public_key = `${exportPublicKey(info, v)}\n`;
      break;
    }
    case 'rsa': {
      const jwk = (v.privateKey ?? v.publicKey!).export({ format: 'jwk' });
      const N = bigFromBase64Url(jwk.n!);
      const E = Number(bigFromBase64Url(jwk.e!));
      if (jwk.d) {
        entry.rsa_key = {
          N,
          E,
          D: bigFromBase64Url(jwk.d),
          Primes: [bigFromBase64Url(jwk.p!), bigFromBase64Url(jwk.q!)],
          Precomputed: { Dp: bigFromBase64Url(jwk.dp!), Dq: bigFromBase64Url(jwk.dq!), Qinv: bigFromBase64Url(jwk.qi!), CRTValues: [] },
        };
      }
      entry.rsa_public_key = { N, E };
      break;
    }
  }
  if (v.convergentVersion) entry.convergent_version = v.convergentVersion;
  entry.creation_time = v.creationTime;
  if (v.certificateChain.length > 0) entry.certificate_chain = [...v.certificateChain];
  return entry;
}

function emptyGoKeyEntry(): JsonObject {
  return { key: null, hmac_key: null, time: GO_ZERO_TIME, creation_time: 0 };
}

// ---------------------------------------------------------------------------------------------
// Vault → ours

/**
 * Reads a backup blob into a key (named as in the blob). Every problem with the blob is the
 * caller's and answers 400 naming it; nothing here touches storage.
 */
export function decodeBackup(blob: string): KeyPolicy {
  const bytes = decodeBase64(blob.trim(), 'backup');
  let root: unknown;
  try {
    root = parse(bytes.toString('utf8'), null, parseNumberAndBigInt);
  } catch (err) {
    throw new BadRequestError(`backup is not valid JSON: ${(err as Error).message}`);
  }
  const policy = objectField(asObject(root, 'backup'), 'policy', 'backup');
  const typeId = intField(policy, 'type', 0);
  const info = keyTypeByVaultId(typeId);
  if (!info) {
    throw new BadRequestError(
      typeId === 10 ? 'backup names key type 10 (managed_key), which is not available here' : `backup names an unknown key type ${typeId}`,
    );
  }
  const name = stringField(policy, 'name', '');
  const latestVersion = intField(policy, 'latest_version', 0);
  if (latestVersion < 1) throw new BadRequestError('backup policy has no key versions (latest_version < 1)');
  const minAvailableVersion = intField(policy, 'min_available_version', 0);
  const minDecryptionVersion = Math.max(intField(policy, 'min_decryption_version', 1), 1);
  const minEncryptionVersion = intField(policy, 'min_encryption_version', 0);
  if (minAvailableVersion < 0 || minAvailableVersion > latestVersion || minDecryptionVersion > latestVersion || minEncryptionVersion < 0) {
    throw new BadRequestError('backup policy has inconsistent versions (min_available/min_decryption/min_encryption vs latest_version)');
  }
  const kdf = intField(policy, 'kdf', 0);
  if (kdf !== 0 && kdf !== 1) throw new BadRequestError(`backup policy has an unknown kdf ${kdf}`);
  const autoRotateNanos = bigField(policy, 'auto_rotate_period', 0n);
  const parameterSet = parameterSetFor(info, stringField(policy, 'parameter_set', ''));
  if (info.family === 'kem' && (boolField(policy, 'derived') || boolField(policy, 'convergent_encryption'))) {
    throw new BadRequestError(`backup policy of key type ${info.name} is derived or convergent, which that type does not support`);
  }
  if (autoRotateNanos < 0n) throw new BadRequestError('backup policy has a negative auto_rotate_period');

  const pq = backupPqParameters(info, policy);
  const entries = objectField(policy, 'keys', 'policy', true);
  const archivedKeys = lookup(asObject(root, 'backup'), 'archived_keys');
  const archive = archivedKeys === undefined || archivedKeys === null ? [] : arrayField(asObject(archivedKeys, 'archived_keys'), 'keys');
  const versions = new Map<number, KeyVersion>();
  for (let version = Math.max(minAvailableVersion, 1); version <= latestVersion; version++) {
    const raw = lookup(entries, String(version)) ?? archive[version - minAvailableVersion];
    if (raw === undefined || raw === null) throw new BadRequestError(`backup is missing key version ${version}`);
    versions.set(version, versionFromGo(info, version, asObject(raw, `key version ${version}`), pq, parameterSet));
  }

  const settings: PolicySettings = {
    name,
    type: info.name,
    ...(parameterSet ? { parameterSet } : {}),
    derived: boolField(policy, 'derived'),
    kdf,
    convergentEncryption: boolField(policy, 'convergent_encryption'),
    convergentVersion: intField(policy, 'convergent_version', 0),
    exportable: boolField(policy, 'exportable'),
    allowPlaintextBackup: boolField(policy, 'allow_plaintext_backup'),
    deletionAllowed: boolField(policy, 'deletion_allowed'),
    minDecryptionVersion,
    minEncryptionVersion,
    minAvailableVersion,
    latestVersion,
    autoRotatePeriod: Number(autoRotateNanos / NANOS_PER_SECOND),
    keySize: info.family === 'hmac' ? intField(policy, 'key_size', versions.get(latestVersion)!.key!.length) : 0,
    imported: boolField(policy, 'Imported'),
    allowImportedKeyRotation: boolField(policy, 'AllowImportedKeyRotation'),
    ...infoField(policy, 'backup_info', 'backupInfo'),
    ...infoField(policy, 'restore_info', 'restoreInfo'),
    ...(pq ?? {}),
  };
  return new KeyPolicy(settings, versions);
}

/** The parameter set (and hybrid EC type) a post-quantum key's backup names, checked as creation checks them. */
function backupPqParameters(info: KeyTypeInfo, policy: JsonObject): PqParameters | undefined {
  if (info.family !== 'ml-dsa' && info.family !== 'slh-dsa' && info.family !== 'hybrid') return undefined;
  const config = lookup(policy, 'hybrid_config');
  let hybridEc: string | undefined;
  if (info.family === 'hybrid') {
    const ecId = config && typeof config === 'object' ? intField(config as JsonObject, 'ECKeyType', -1) : -1;
    hybridEc = HYBRID_EC_TYPES.find((name) => KEY_TYPES[name].vaultId === ecId) ?? `key type number ${ecId}`;
  }
  try {
    return pqParameters(info.family, info.name, { parameterSet: stringField(policy, 'parameter_set', ''), hybridPqc: info.family === 'hybrid' ? 'ml-dsa' : undefined, hybridEc });
  } catch (err) {
    throw new BadRequestError(`backup: ${(err as Error).message}`);
  }
}

function versionFromGo(info: KeyTypeInfo, version: number, entry: JsonObject, pq: PqParameters | undefined, parameterSet: string | undefined): KeyVersion {
  const what = `key version ${version}`;
  const key = bytesField(entry, 'key', what);
  const time = stringField(entry, 'time', '');
  const timeMs = Date.parse(time);
  const creationTime = intField(entry, 'creation_time', Number.isNaN(timeMs) ? 0 : Math.floor(timeMs / 1000));
  const base = {
    version,
    time: time || new Date(creationTime * 1000).toISOString(),
    creationTime,
    convergentVersion: intField(entry, 'convergent_version', 0),
    certificateChain: (lookup(entry, 'certificate_chain') === null ? [] : arrayField(entry, 'certificate_chain')).map((der, i) =>
      decodeBase64(asString(der, `${what} certificate_chain[${i}]`), `${what} certificate_chain[${i}]`).toString('base64'),
    ),
  };
  const hmacKey = bytesField(entry, 'hmac_key', what) ?? randomBytes(32);
  switch (info.family) {
    case 'aes-gcm':
    case 'chacha':
    case 'cmac':
      if (!key || key.length !== info.keyBytes) throw new BadRequestError(`${what}: a ${info.name} key has ${info.keyBytes} bytes, got ${key?.length ?? 0}`);
      return { ...base, key, hmacKey };
    case 'hmac':
      if (!key || key.length < 32 || key.length > 512) throw new BadRequestError(`${what}: an hmac key has 32 to 512 bytes, got ${key?.length ?? 0}`);
      // For hmac keys the key is the HMAC key (Vault's HMACKey returns Key for this type).
      return { ...base, key, hmacKey: key };
    case 'ml-dsa':
    case 'slh-dsa':
    case 'hybrid': {
      const publicKey = decodeBase64(stringField(entry, 'public_key', ''), `${what} public_key`);
      return { ...base, hmacKey, ...pqVersionFromBackup(info.family, pq!, key, publicKey, what) };
    }
    case 'kem': {
      const encapsulationKey = kemPublicKeyFromImport(info, parameterSet, stringField(entry, 'public_key', ''));
      if (!key) return { ...base, hmacKey, encapsulationKey };
      const material = kemMaterialFromImport(info, parameterSet, key);
      if (!material.encapsulationKey.equals(encapsulationKey)) throw new BadRequestError(`${what}: public_key is not the public key of the private seed`);
      return { ...base, hmacKey, ...material };
    }
    default: {
      const { privateKey, publicKey } = asymmetricFromGo(info, entry, key, what);
      checkKeyMatchesType(info, publicKey);
      return { ...base, hmacKey, ...(privateKey ? { privateKey } : {}), publicKey };
    }
  }
}

function asymmetricFromGo(info: KeyTypeInfo, entry: JsonObject, key: Buffer | undefined, what: string): { privateKey?: KeyObject; publicKey: KeyObject } {
  switch (info.family) {
    case 'ed25519': {
      if (key) {
        const privateKey = ed25519FromGoPrivateKey(key, what);
        return { privateKey, publicKey: createPublicKey(privateKey) };
      }
      const raw = decodeBase64(stringField(entry, 'public_key', ''), `${what} public_key`);
      if (raw.length !== 32) throw new BadRequestError(`${what}: has neither an Ed25519 private key nor a 32-byte public key`);
      return { publicKey: jwkKey({ kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') }, false, what) };
    }
    case 'x25519': {
      const raw = decodeBase64(stringField(entry, 'public_key', ''), `${what} public_key`);
      if (raw.length !== 32 && !key) throw new BadRequestError(`${what}: has neither an X25519 private key nor a 32-byte public key`);
      if (!key) return { publicKey: x25519PublicFromRaw(raw) };
      if (key.length !== 32) throw new BadRequestError(`${what}: an X25519 private key has 32 bytes, got ${key.length}`);
      const privateKey = x25519FromRaw(key);
      const publicKey = createPublicKey(privateKey);
      if (raw.length > 0 && !publicKey.equals(x25519PublicFromRaw(raw))) throw new BadRequestError(`${what}: public_key is not the public key of key`);
      return { privateKey, publicKey };
    }
    case 'ecdsa': {
      const width = COORDINATE_BYTES[info.curve!]!;
      const x = bigField(entry, 'ec_x', -1n);
      const y = bigField(entry, 'ec_y', -1n);
      if (x < 0n || y < 0n) throw new BadRequestError(`${what}: an ECDSA key needs ec_x and ec_y`);
      const jwk: JsonWebKey = { kty: 'EC', crv: info.curve!, x: base64UrlOfBig(x, width), y: base64UrlOfBig(y, width) };
      const d = bigField(entry, 'ec_d', -1n);
      if (d < 0n) return { publicKey: jwkKey(jwk, false, what) };
      const privateKey = jwkKey({ ...jwk, d: base64UrlOfBig(d, width) }, true, what);
      const publicKey = jwkKey(jwk, false, what);
      checkPair(privateKey, publicKey, `${what}: ec_x and ec_y are not the public key of ec_d`);
      return { privateKey, publicKey };
    }
    default: {
      const rsaKey = lookup(entry, 'rsa_key');
      if (rsaKey !== undefined && rsaKey !== null) {
        const privateKey = rsaPrivateFromGo(asObject(rsaKey, `${what} rsa_key`), what);
        const publicKey = createPublicKey(privateKey);
        checkPair(privateKey, publicKey, `${what}: rsa_key is inconsistent (D does not match N and E)`);
        return { privateKey, publicKey };
      }
      const rsaPublic = lookup(entry, 'rsa_public_key');
      if (rsaPublic === undefined || rsaPublic === null) throw new BadRequestError(`${what}: an RSA key needs rsa_key or rsa_public_key`);
      const pub = asObject(rsaPublic, `${what} rsa_public_key`);
      return { publicKey: jwkKey({ kty: 'RSA', n: base64UrlOfBig(bigField(pub, 'N', 0n)), e: base64UrlOfBig(bigField(pub, 'E', 0n)) }, false, what) };
    }
  }
}

/** Go's rsa.PrivateKey: N, E, D, Primes (two), Precomputed {Dp, Dq, Qinv} (computed when absent). */
function rsaPrivateFromGo(rsa: JsonObject, what: string): KeyObject {
  const n = bigField(rsa, 'N', 0n);
  const e = bigField(rsa, 'E', 0n);
  const d = bigField(rsa, 'D', 0n);
  const primes = arrayField(rsa, 'Primes').map((p, i) => asBig(p, `${what} rsa_key.Primes[${i}]`));
  if (primes.length !== 2) throw new BadRequestError(`${what}: only two-prime RSA keys are supported, the backup has ${primes.length} primes`);
  const [p, q] = primes as [bigint, bigint];
  if (n <= 0n || e <= 0n || d <= 0n || p * q !== n) throw new BadRequestError(`${what}: rsa_key is inconsistent (N is not the product of its primes)`);
  const pre = lookup(rsa, 'Precomputed');
  const precomputed = pre && typeof pre === 'object' ? (pre as JsonObject) : {};
  const dp = bigField(precomputed, 'Dp', -1n);
  const dq = bigField(precomputed, 'Dq', -1n);
  const qi = bigField(precomputed, 'Qinv', -1n);
  return jwkKey(
    {
      kty: 'RSA',
      n: base64UrlOfBig(n),
      e: base64UrlOfBig(e),
      d: base64UrlOfBig(d),
      p: base64UrlOfBig(p),
      q: base64UrlOfBig(q),
      dp: base64UrlOfBig(dp >= 0n ? dp : d % (p - 1n)),
      dq: base64UrlOfBig(dq >= 0n ? dq : d % (q - 1n)),
      qi: base64UrlOfBig(qi >= 0n ? qi : modInverse(q, p)),
    },
    true,
    what,
  );
}

function jwkKey(jwk: JsonWebKey, isPrivate: boolean, what: string): KeyObject {
  try {
    return isPrivate ? createPrivateKey({ key: jwk, format: 'jwk' }) : createPublicKey({ key: jwk, format: 'jwk' });
  } catch (err) {
    throw new BadRequestError(`${what}: the key parameters do not form a valid key: ${(err as Error).message}`);
  }
}

/** A private key that does not sign for its public key is a corrupt backup, not a key. */
function checkPair(privateKey: KeyObject, publicKey: KeyObject, message: string): void {
  const probe = Buffer.from('keywarden backup key check');
  let valid = false;
  try {
    valid = verify('sha256', probe, publicKey, sign('sha256', probe, privateKey));
  } catch {
    valid = false;
  }
  if (!valid) throw new BadRequestError(message);
}

function modInverse(a: bigint, m: bigint): bigint {
  let [oldR, r] = [((a % m) + m) % m, m];
  let [oldS, s] = [1n, 0n];
  while (r !== 0n) {
    const quotient = oldR / r;
    [oldR, r] = [r, oldR - quotient * r];
    [oldS, s] = [s, oldS - quotient * s];
  }
  return ((oldS % m) + m) % m;
}

function bigFromBase64Url(text: string): bigint {
  const hex = Buffer.from(text, 'base64url').toString('hex');
  return hex === '' ? 0n : BigInt(`0x${hex}`);
}

/** Big-endian bytes of a non-negative integer, minimal or padded to `width`, as base64url. */
function base64UrlOfBig(value: bigint, width = 0): string {
  let hex = value.toString(16);
  if (hex.length % 2) hex = `0${hex}`;
  return Buffer.from(hex.padStart(width * 2, '0'), 'hex').toString('base64url');
}

// ---------------------------------------------------------------------------------------------
// Reading Go's JSON: field names as Go matches them (exact first, then case-insensitively)

function lookup(obj: JsonObject, name: string): unknown {
  if (name in obj) return obj[name];
  const lower = name.toLowerCase();
  const found = Object.keys(obj).find((k) => k.toLowerCase() === lower);
  return found === undefined ? undefined : obj[found];
}

function asObject(value: unknown, what: string): JsonObject {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new BadRequestError(`backup: ${what} is not a JSON object`);
  return value as JsonObject;
}

function asString(value: unknown, what: string): string {
  if (typeof value !== 'string') throw new BadRequestError(`backup: ${what} is not a string`);
  return value;
}

function asBig(value: unknown, what: string): bigint {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number' && Number.isInteger(value)) return BigInt(value);
  throw new BadRequestError(`backup: ${what} is not an integer`);
}

function objectField(obj: JsonObject, name: string, what: string, optional = false): JsonObject {
  const value = lookup(obj, name);
  if (optional && (value === undefined || value === null)) return {};
  if (value === undefined || value === null) throw new BadRequestError(`backup: ${what} has no "${name}"`);
  return asObject(value, `${what}.${name}`);
}

function arrayField(obj: JsonObject, name: string): unknown[] {
  const value = lookup(obj, name);
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new BadRequestError(`backup: "${name}" is not a list`);
  return value;
}

function stringField(obj: JsonObject, name: string, fallback: string): string {
  const value = lookup(obj, name);
  return value === undefined || value === null ? fallback : asString(value, `"${name}"`);
}

function boolField(obj: JsonObject, name: string): boolean {
  const value = lookup(obj, name);
  if (value === undefined || value === null) return false;
  if (typeof value !== 'boolean') throw new BadRequestError(`backup: "${name}" is not a boolean`);
  return value;
}

function bigField(obj: JsonObject, name: string, fallback: bigint): bigint {
  const value = lookup(obj, name);
  return value === undefined || value === null ? fallback : asBig(value, `"${name}"`);
}

function intField(obj: JsonObject, name: string, fallback: number): number {
  const value = bigField(obj, name, BigInt(fallback));
  if (value > BigInt(Number.MAX_SAFE_INTEGER) || value < BigInt(Number.MIN_SAFE_INTEGER)) throw new BadRequestError(`backup: "${name}" is out of range`);
  return Number(value);
}

function bytesField(obj: JsonObject, name: string, what: string): Buffer | undefined {
  const value = lookup(obj, name);
  if (value === undefined || value === null || value === '') return undefined;
  return decodeBase64(asString(value, `${what} "${name}"`), `${what} ${name}`);
}

function infoField(obj: JsonObject, name: string, as: 'backupInfo' | 'restoreInfo'): { backupInfo?: BackupInfo } | { restoreInfo?: BackupInfo } {
  const value = lookup(obj, name);
  if (value === undefined || value === null) return {};
  const info = asObject(value, name);
  return { [as]: { time: stringField(info, 'time', GO_ZERO_TIME), version: intField(info, 'version', 0) } };
}

