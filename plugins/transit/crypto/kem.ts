/**
 * Transit's key-encapsulation keys, `ml-kem` (parameter_set 768 or 1024) and `mlkem768-x25519`
 * (X-Wing): encrypt seals each plaintext to the version's public key with single-shot HPKE, and
 * decrypt opens it with the private seed (docs/transit-kem.md). The ciphertext is
 * `vault:v<N>:` and the base64 of enc ‖ sealed: the KEM's encapsulated key, of a fixed length per
 * KEM, then the AEAD's ciphertext and tag. An item's `context` is HPKE's `info` and its
 * `associated_data` the AEAD's associated data; both are needed again to decrypt.
 */
import { BadRequestError, nextTurn } from '../../../sdk/index.js';
import { AsciiTextBuilder, type AsciiText } from '../../../sdk/crypto.js';
import type { KeyPolicy } from '../keys/key-policy.js';
import type { KeyTypeInfo } from '../keys/key-types.js';
import type { KeyVersion } from '../keys/key-version.js';
import { decodeBase64, decodeBase64InTurns } from './base64.js';
import { aeadCipher, aeadDecipher, keySchedule, open, seal, type HpkeKem } from './hpke.js';
import { ItemError } from './item-error.js';
import { kemForKey, kemSuite } from './kem-parameters.js';

export { DEFAULT_ML_KEM_PARAMETER_SET, ML_KEM_PARAMETER_SETS, kemForKey, kemSuite, parameterSetFor } from './kem-parameters.js';




/** One item to seal: plaintext, and the HPKE info and associated data when given. */
interface SealItem {
  readonly plaintext: Uint8Array;
  readonly context?: Uint8Array | undefined;
  readonly nonce?: Uint8Array | undefined;
  readonly aad?: Uint8Array | undefined;
  readonly keyVersion: number;
}

interface OpenItem {
  readonly ciphertext: string;
  readonly context?: Uint8Array | undefined;
  readonly aad?: Uint8Array | undefined;
}

const EMPTY = new Uint8Array(0);
const TAG_BYTES = 16;
const OPEN_FAILED = 'failed to open the ciphertext: message authentication failed';
const NONCE_NOT_ALLOWED = 'provided nonce not allowed for this key';

/**
 * Seals every item to its version's public key; results in `results`, an ItemError for each
 * failure. `prefix` makes the `vault:v<N>:` text of a version.
 */
export function kemEncrypt(
  policy: KeyPolicy,
  items: readonly SealItem[],
  results: ({ ciphertext: string; keyVersion: number } | ItemError)[],
  prefix: (version: number) => string,
): void {
  const suite = kemSuite(policy.info, policy.settings.parameterSet);
  items.forEach((item, i) => {
    const target = sealingTarget(policy, item);
    if (target instanceof ItemError) {
      results[i] = target;
      return;
    }
    const { enc, sealed } = seal(suite, target.publicKey, item.context ?? EMPTY, item.aad ?? EMPTY, item.plaintext);
    results[i] = { ciphertext: prefix(target.version) + Buffer.concat([enc, sealed]).toString('base64'), keyVersion: target.version };
  });
}

/** The version an item is sealed to and its public key, or the item's error. */
function sealingTarget(policy: KeyPolicy, item: SealItem): { version: number; publicKey: Buffer } | ItemError {
  let version: KeyVersion;
  try {
    version = policy.versionForWriting(item.keyVersion);
  } catch (err) {
    return ItemError.of(err);
  }
  if (item.nonce !== undefined) return new ItemError(NONCE_NOT_ALLOWED);
  if (!version.encapsulationKey) return new ItemError('internal error', true, new Error(`version ${version.version} of key ${policy.name} has no public key`));
  return { version: version.version, publicKey: version.encapsulationKey };
}

/**
 * kemEncrypt of one plaintext of megabytes: the same ciphertext, but sealed and base64-encoded
 * `turnBytes` at a time with a turn of the event loop after each, as cipher.ts's encryptLarge
 * does for symmetric keys. enc's length is no multiple of 3, so the bytes that do not fill a
 * base64 quantum are carried to the next piece.
 */
export async function kemEncryptLarge(
  policy: KeyPolicy,
  item: SealItem,
  prefix: (version: number) => string,
  turnBytes: number,
): Promise<{ ciphertext: AsciiText; keyVersion: number } | ItemError> {
  const target = sealingTarget(policy, item);
  if (target instanceof ItemError) return target;
  const suite = kemSuite(policy.info, policy.settings.parameterSet);
  const { sharedSecret, enc } = suite.kem.encap(target.publicKey);
  const keys = keySchedule(suite, sharedSecret, item.context ?? EMPTY);
  sharedSecret.fill(0);
  const cipher = aeadCipher(suite.aead, keys);
  keys.key.fill(0);
  const { plaintext, aad } = item;
  if (aad?.length) cipher.setAAD(aad, { plaintextLength: plaintext.length });
  const text = new AsciiTextBuilder().text(prefix(target.version));
  let carry: Buffer = Buffer.from(enc);
  for (let at = 0; at < plaintext.length || at === 0; at += turnBytes) {
    if (at > 0) await nextTurn();
    const last = at + turnBytes >= plaintext.length;
    const body = cipher.update(plaintext.subarray(at, at + turnBytes));
    const bytes = last ? Buffer.concat([carry, body, cipher.final(), cipher.getAuthTag()]) : Buffer.concat([carry, body]);
    const whole = last ? bytes.length : bytes.length - (bytes.length % 3);
    text.base64(bytes.subarray(0, whole));
    carry = bytes.subarray(whole);
  }
  return { ciphertext: text.build(), keyVersion: target.version };
}

/**
 * The shared secret in `enc`, or null when the KEM refuses it: @noble's X-Wing throws on an X25519
 * part that is a low-order point, which is the client's bad ciphertext and answers as a forgery.
 */
function decapOrNull(kem: HpkeKem, enc: Uint8Array, key: unknown): Uint8Array | null {
  try {
    return kem.decap(enc, key);
  } catch {
    return null;
  }
}

/**
 * kemDecrypt of one ciphertext of megabytes: decoded and opened `turnBytes` at a time with a turn
 * of the event loop after each; the plaintext is released only once the tag has verified, and a
 * forged one is wiped.
 */
export async function kemDecryptLarge(
  policy: KeyPolicy,
  item: Omit<OpenItem, 'ciphertext'> & { readonly ciphertext: string | AsciiText },
  parse: (text: string | AsciiText) => { version: number; payload: string | AsciiText } | ItemError,
  turnBytes: number,
): Promise<Buffer | ItemError> {
  const parsed = parse(item.ciphertext);
  if (parsed instanceof ItemError) return parsed;
  const suite = kemSuite(policy.info, policy.settings.parameterSet);
  let version: KeyVersion;
  try {
    version = policy.versionForReading(parsed.version);
  } catch (err) {
    return ItemError.of(err);
  }
  let payload: Buffer;
  try {
    payload = await decodeBase64InTurns(parsed.payload, 'ciphertext');
  } catch {
    return new ItemError('invalid ciphertext: could not decode base64');
  }
  if (!version.key) return new ItemError('requested version for decryption does not contain a private part');
  if (payload.length < suite.kem.encBytes) return new ItemError(`invalid ciphertext length: a ${suite.kem.name} ciphertext starts with its ${suite.kem.encBytes}-byte encapsulated key`);
  if (payload.length < suite.kem.encBytes + TAG_BYTES) return new ItemError(OPEN_FAILED);
  const decapsulationKey = suite.kem.decapsulationKeyOf(version.key);
  const sharedSecret = decapOrNull(suite.kem, payload.subarray(0, suite.kem.encBytes), decapsulationKey);
  suite.kem.forget(decapsulationKey);
  if (!sharedSecret) return new ItemError(OPEN_FAILED);
  const keys = keySchedule(suite, sharedSecret, item.context ?? EMPTY);
  sharedSecret.fill(0);
  const decipher = aeadDecipher(suite.aead, keys);
  keys.key.fill(0);
  const body = payload.subarray(suite.kem.encBytes, payload.length - TAG_BYTES);
  decipher.setAuthTag(payload.subarray(payload.length - TAG_BYTES));
  if (item.aad?.length) decipher.setAAD(item.aad, { plaintextLength: body.length });
  const plaintext = Buffer.allocUnsafe(body.length);
  let written = 0;
  for (let at = 0; at < body.length; at += turnBytes) {
    if (at > 0) await nextTurn();
    written += decipher.update(body.subarray(at, at + turnBytes)).copy(plaintext, written);
  }
  try {
    decipher.final();
  } catch {
    plaintext.fill(0);
    return new ItemError(OPEN_FAILED);
  }
  return plaintext;
}

/**
 * Opens every item with its version's private seed; results in `results`. `parse` splits a
 * `vault:v<N>:` text. A version's decapsulation key is expanded once per call and wiped after.
 */
export function kemDecrypt(
  policy: KeyPolicy,
  items: readonly OpenItem[],
  results: (Buffer | ItemError)[],
  parse: (text: string) => { version: number; payload: string } | ItemError,
): void {
  const suite = kemSuite(policy.info, policy.settings.parameterSet);
  const keys = new Map<number, unknown>();
  try {
    items.forEach((item, i) => {
      const parsed = parse(item.ciphertext);
      if (parsed instanceof ItemError) {
        results[i] = parsed;
        return;
      }
      let version: KeyVersion;
      try {
        version = policy.versionForReading(parsed.version);
      } catch (err) {
        results[i] = ItemError.of(err);
        return;
      }
      let payload: Buffer;
      try {
        payload = decodeBase64(parsed.payload, 'ciphertext');
      } catch {
        results[i] = new ItemError('invalid ciphertext: could not decode base64');
        return;
      }
      if (!version.key) {
        results[i] = new ItemError('requested version for decryption does not contain a private part');
        return;
      }
      if (payload.length < suite.kem.encBytes) {
        results[i] = new ItemError(`invalid ciphertext length: a ${suite.kem.name} ciphertext starts with its ${suite.kem.encBytes}-byte encapsulated key`);
        return;
      }
      let key = keys.get(version.version);
      if (!key) keys.set(version.version, (key = suite.kem.decapsulationKeyOf(version.key)));
      const enc = payload.subarray(0, suite.kem.encBytes);
      let plaintext: Buffer | null;
      try {
        plaintext = open(suite, key, enc, item.context ?? EMPTY, item.aad ?? EMPTY, payload.subarray(suite.kem.encBytes));
      } catch {
        plaintext = null;
      }
      results[i] = plaintext ?? new ItemError(OPEN_FAILED);
    });
  } finally {
    for (const key of keys.values()) suite.kem.forget(key);
  }
}

/** A KEM key's private seed from an import: the raw seed bytes of its KEM, with the public key they give. */
export function kemMaterialFromImport(info: KeyTypeInfo, parameterSet: string | undefined, bytes: Uint8Array): { key: Buffer; encapsulationKey: Buffer } {
  const kem = kemForKey(info, parameterSet);
  if (bytes.length !== kem.seedBytes) {
    throw new BadRequestError(`invalid key size ${bytes.length} bytes for ${kem.name}: expected its ${kem.seedBytes}-byte private seed`);
  }
  const key = Buffer.from(bytes);
  return { key, encapsulationKey: Buffer.from(kem.publicKeyOf(key)) };
}

/**
 * A KEM public key from the `public_key` field: base64 of the raw key, as export and the read-key
 * body give it. ML-KEM's encapsulation key check (FIPS 203, section 7.2) runs on it: a key that
 * fails is refused here rather than at the first encrypt.
 */
export function kemPublicKeyFromImport(info: KeyTypeInfo, parameterSet: string | undefined, text: string): Buffer {
  const suite = kemSuite(info, parameterSet);
  const trimmed = text.trim();
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(trimmed)) throw new BadRequestError(`public_key: a ${suite.kem.name} public key is the base64 of its raw bytes`);
  const raw = Buffer.from(trimmed, 'base64');
  if (raw.length !== suite.kem.publicKeyBytes) {
    throw new BadRequestError(`public_key: a ${suite.kem.name} public key has ${suite.kem.publicKeyBytes} bytes, got ${raw.length}`);
  }
  try {
    suite.kem.encap(raw).sharedSecret.fill(0);
  } catch (err) {
    throw new BadRequestError(`public_key: not a valid ${suite.kem.name} public key: ${(err as Error).message}`);
  }
  return raw;
}
