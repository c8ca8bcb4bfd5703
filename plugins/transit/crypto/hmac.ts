/**
 * HMACs of transit keys (docs/transit.md, "Ciphertexts, signatures and HMACs"):
 * `vault:v<N>:<base64 HMAC>` under the version's own HMAC key (for `hmac`-type keys the key
 * itself). HMAC-SHA-256/384/512 batches run in one WASM call; the algorithms the WASM core lacks
 * (sha1, sha2-224, sha3-*) use node:crypto per item.
 */
// Keyed with a KeyObject: on Node 24 node:crypto turns key bytes into a key object on every call
// at several times the cost of making one (bench/README.md, "Storage reads").
import { createHmac, createSecretKey, timingSafeEqual } from 'node:crypto';
import { BadRequestError, nextTurn, parseGoInt } from '../../../sdk/index.js';
import { type HmacAlgorithm, type WasmCrypto, AsciiText, decodeBase64Chunks, HASH_ALGORITHMS } from '../../../sdk/crypto.js';
import type { KeyPolicy } from '../keys/key-policy.js';
import type { KeyVersion } from '../keys/key-version.js';
import { decodeBase64 } from './base64.js';


export { parseGoInt };

/** Vault's hash names that an HMAC may use: every name of its hash table except `none`. */
export const HMAC_ALGORITHMS = ['sha1', 'sha2-224', 'sha2-256', 'sha2-384', 'sha2-512', 'sha3-224', 'sha3-256', 'sha3-384', 'sha3-512'] as const;
export type HmacAlgorithmName = (typeof HMAC_ALGORITHMS)[number];

/** node:crypto's name for each algorithm (for sha2 and sha3 also the WASM core's): the hash tool's, and sha1. */
export const NODE_HASH_NAMES: Readonly<Record<HmacAlgorithmName, string>> = { sha1: 'sha1', ...HASH_ALGORITHMS };

/** The algorithms the WASM core's hmacBatch has. */
const WASM_NAMES: Partial<Record<HmacAlgorithmName, HmacAlgorithm>> = { 'sha2-256': 'sha256', 'sha2-384': 'sha384', 'sha2-512': 'sha512' };

/** The prefix of an HMAC; hard-coded in Vault (not the key's version template). */
const PREFIX = 'vault:v';

export function isHmacAlgorithm(name: string): name is HmacAlgorithmName {
  return (HMAC_ALGORITHMS as readonly string[]).includes(name);
}

/** The key an HMAC of this version uses: the version's own HMAC key, or the key of an `hmac`-type key. */
export function hmacKeyOf(policy: KeyPolicy, version: KeyVersion): Buffer {
  return policy.info.family === 'hmac' && version.key ? version.key : version.hmacKey;
}

/**
 * HMAC of every input under `key` (shared) or `key[i]` (per item). One WASM call for the whole
 * batch where the core has the algorithm.
 */
export function computeHmacs(wasm: WasmCrypto, algorithm: HmacAlgorithmName, key: Buffer | readonly Buffer[], inputs: readonly Uint8Array[]): Buffer[] {
  if (inputs.length === 0) return [];
  const wasmName = WASM_NAMES[algorithm];
  if (wasmName) return wasm.hmacBatch(wasmName, key, inputs);
  const shared = Buffer.isBuffer(key) ? createSecretKey(key) : undefined;
  return inputs.map((input, i) => createHmac(NODE_HASH_NAMES[algorithm], shared ?? createSecretKey((key as readonly Buffer[])[i]!)).update(input).digest());
}

/** Bytes hmacInTurns takes between turns of the event loop: a few milliseconds' work. */
const TURN_BYTES = 1536 * 1024;

/**
 * The HMAC computeHmacs gives for one input of megabytes, TURN_BYTES at a time with a turn of the
 * event loop after each (node:crypto's streaming HMAC), so a 30 MB input holds no other client up.
 */
export async function hmacInTurns(algorithm: HmacAlgorithmName, key: Uint8Array, data: Uint8Array | AsciiText): Promise<Buffer> {
  const hmac = createHmac(NODE_HASH_NAMES[algorithm], createSecretKey(key));
  // An AsciiText of base64 is decoded into the HMAC a window at a time: its bytes are never whole in memory.
  if (data instanceof AsciiText) {
    await decodeBase64Chunks(data, 'input', (bytes) => hmac.update(bytes));
    return hmac.digest();
  }
  for (let at = 0; at < data.length; at += TURN_BYTES) {
    if (at > 0) await nextTurn();
    hmac.update(data.subarray(at, at + TURN_BYTES));
  }
  return hmac.digest();
}

export function formatHmac(version: number, mac: Uint8Array): string {
  return `${PREFIX}${version}:${Buffer.from(mac.buffer, mac.byteOffset, mac.byteLength).toString('base64')}`;
}

/** Splits `vault:v<N>:<base64>` with Vault's error texts. */
export function parseHmac(value: string): { version: number; mac: Buffer } {
  if (!value.startsWith(PREFIX)) throw new BadRequestError('invalid HMAC to verify: no prefix');
  const rest = value.slice(PREFIX.length);
  const colon = rest.indexOf(':');
  if (colon < 0) throw new BadRequestError('invalid HMAC: wrong number of fields');
  const version = parseGoInt(rest.slice(0, colon));
  if (version === undefined) throw new BadRequestError('invalid HMAC: version number could not be decoded');
  return { version, mac: decodeBase64(rest.slice(colon + 1), 'verification HMAC') };
}

/**
 * The version an HMAC is generated with (docs/transit.md, "Keys and their one-way settings"): 0 =
 * latest; not above the latest, not below min_encryption_version, and not below
 * min_decryption_version (Vault keeps such versions out of its working set, so it refuses them
 * too).
 */
export function versionForHmac(policy: KeyPolicy, requested: number): KeyVersion {
  const s = policy.settings;
  if (requested < 0) throw new BadRequestError('key version does not exist (cannot be negative)');
  const version = requested === 0 ? s.latestVersion : requested;
  if (version > s.latestVersion) throw new BadRequestError(`key version does not exist; latest key version is ${s.latestVersion}`);
  if ((s.minEncryptionVersion > 0 && version < s.minEncryptionVersion) || version < s.minDecryptionVersion) {
    throw new BadRequestError('cannot generate HMAC: version is too old (disallowed by policy)');
  }
  const found = policy.versions.get(version);
  if (!found) throw new BadRequestError(`key version ${version} is no longer available`);
  return found;
}

/** The version an HMAC to verify names: not above the latest, not below min_decryption_version. */
export function versionForHmacVerify(policy: KeyPolicy, version: number): KeyVersion {
  const s = policy.settings;
  if (version > s.latestVersion) throw new BadRequestError('invalid HMAC: version is too new');
  if (version < s.minDecryptionVersion) throw new BadRequestError('cannot verify HMAC: version is too old (disallowed by policy)');
  const found = policy.versions.get(version);
  if (!found) throw new BadRequestError(`invalid HMAC: version ${version} is no longer available`);
  return found;
}

/** Constant-time comparison; a length difference (not secret) is simply unequal. */
export function hmacEquals(expected: Uint8Array, given: Uint8Array): boolean {
  return expected.length === given.length && timingSafeEqual(expected, given);
}

