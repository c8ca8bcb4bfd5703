/**
 * Encryption and decryption of a batch of items under one key: the `vault:v<N>:<base64>` format,
 * per-item key derivation, convergent nonces, RSA-OAEP (docs/transit.md, "Ciphertexts, signatures
 * and HMACs" and "Derived keys and convergent encryption").
 *
 * Symmetric batches go through few calls however many items they hold: one HKDF call per key
 * version for derived keys, one HMAC call for all convergent nonces, one `randomFillSync` for all
 * random nonces, and one AES-GCM call per key version (or a single call with one derived key per
 * item). ChaCha20-Poly1305 and RSA have no batch kernel and go through node:crypto per item.
 *
 * Payloads: AES-GCM and ChaCha20-Poly1305 store nonce(12) ‖ ciphertext ‖ tag(16), except for
 * convergent version 1 (keys made by Vault 0.6.1), where the caller keeps the nonce and the payload
 * is ciphertext ‖ tag. Convergent versions 2 and 3 derive the nonce from the plaintext:
 * HMAC-SHA-256 keyed with the context (v2) or with 32 more bytes of the HKDF output (v3).
 */
import { constants, createCipheriv, createDecipheriv, privateDecrypt, publicEncrypt, type CipherGCMTypes, type KeyObject } from 'node:crypto';
import { nextTurn } from '../../../sdk/index.js';
import { AsciiText, AsciiTextBuilder, releaseBuffer } from '../../../sdk/crypto.js';
import { WasmCrypto } from '../../../sdk/crypto.js';
import type { KeyPolicy } from '../keys/key-policy.js';
import type { KeyVersion } from '../keys/key-version.js';
import { decodeBase64, decodeBase64InTurns, encodeBase64Batch } from './base64.js';
import { chachaCipher, chachaDecipher } from './chacha.js';
import { ItemError } from './item-error.js';
import { MISSING_CONTEXT, counterModeKdf } from './derive.js';
import { hmacInTurns } from './hmac.js';
import { kemDecrypt, kemDecryptLarge, kemEncrypt, kemEncryptLarge } from './kem.js';

/** RSA encryption paddings (`padding_scheme`): OAEP with SHA-256 (the default) and PKCS #1 v1.5. */
export const RSA_PADDING_SCHEMES = ['oaep', 'pkcs1v15'] as const;
export type PaddingScheme = (typeof RSA_PADDING_SCHEMES)[number];

/** One plaintext to encrypt. `context`, `nonce` and `aad` are absent when not given. */
export interface EncryptItem {
  readonly plaintext: Uint8Array;
  readonly context?: Uint8Array | undefined;
  readonly nonce?: Uint8Array | undefined;
  readonly aad?: Uint8Array | undefined;
  /** 0 = the latest version. */
  readonly keyVersion: number;
  readonly padding?: PaddingScheme | undefined;
}

/** One `vault:v<N>:` ciphertext to decrypt. */
export interface DecryptItem {
  readonly ciphertext: string;
  readonly context?: Uint8Array | undefined;
  readonly nonce?: Uint8Array | undefined;
  readonly aad?: Uint8Array | undefined;
  readonly padding?: PaddingScheme | undefined;
}

export interface Encrypted {
  readonly ciphertext: string;
  readonly keyVersion: number;
}

/** A single item whose ciphertext may be megabytes given as an AsciiText (core/large-text.ts): decryptLarge's. */
export type LargeDecryptItem = Omit<DecryptItem, 'ciphertext'> & { readonly ciphertext: string | AsciiText };

/** encryptLarge's answer: the ciphertext of megabytes as an AsciiText. */
export interface LargeEncrypted {
  readonly ciphertext: string | AsciiText;
  readonly keyVersion: number;
}

export const NONCE_NOT_ALLOWED = 'provided nonce not allowed for this key';
const CONVERGENT_NONCE_LENGTH = 'base64-decoded nonce must be 12 bytes long when using convergent encryption with this key';
const PREFIX = 'vault:v';
const NONCE_BYTES = 12;

/** The nonce length of the key's cipher: 12 bytes, or XChaCha20-Poly1305's 24. */
function nonceBytesOf(policy: KeyPolicy): number {
  return policy.info.nonceBytes ?? NONCE_BYTES;
}

/** `count` random nonces for the key's cipher, views into one block from the CSPRNG. */
function randomNoncesFor(policy: KeyPolicy, count: number): Buffer[] {
  const size = nonceBytesOf(policy);
  if (size === NONCE_BYTES) return WasmCrypto.randomNonces(count);
  const block = WasmCrypto.randomNonceBlock((count * size) / NONCE_BYTES);
  return Array.from({ length: count }, (_, k) => block.subarray(k * size, (k + 1) * size));
}
/** Bytes of HKDF output after the cipher key that key the convergent v3 nonce HMAC. */
const NONCE_KEY_BYTES = 32;
/** OAEP with SHA-256: 2 × 32 + 2 bytes of overhead; PKCS#1 v1.5: 11. */
const OAEP_OVERHEAD = 66;
const PKCS1_OVERHEAD = 11;
const RSA_DECRYPT_FAILED = 'failed to RSA decrypt the ciphertext: crypto/rsa: decryption error';
const UNDECODABLE_CIPHERTEXT = 'invalid ciphertext: could not decode base64';
const SHORT_CIPHERTEXT = 'invalid ciphertext length';
const GCM_AUTHENTICATION_FAILED = 'cipher: message authentication failed';

/**
 * The convergent encryption version of one key version: 0 for keys without convergent
 * encryption; otherwise the version's own (3 for versions made here), else the policy's
 * (1 or 2 for keys restored from old backups; 0 there means 1, as in Vault).
 */
export function convergentVersionOf(policy: KeyPolicy, version: KeyVersion): number {
  const s = policy.settings;
  if (!s.convergentEncryption) return 0;
  if (version.convergentVersion !== 0) return version.convergentVersion;
  return s.convergentVersion === 0 ? 1 : s.convergentVersion;
}

/** Whether requests may carry a `nonce`: only for AEAD keys of convergent version 1 (Vault 0.6.1 keys). */
export function nonceAllowed(policy: KeyPolicy): boolean {
  const s = policy.settings;
  return policy.info.aead && s.convergentEncryption && (s.convergentVersion === 0 || s.convergentVersion === 1);
}

/** The `vault:v<N>:` prefix of a version. */
export function versionPrefix(version: number): string {
  return `${PREFIX}${version}:`;
}

/**
 * Splits `vault:v<N>:<base64>` into the version (0, from the first implementation, means 1) and
 * the base64 text; the messages are Vault's.
 */
export function parseCiphertext(text: string): { version: number; payload: string } | ItemError;
export function parseCiphertext(text: string | AsciiText): { version: number; payload: string | AsciiText } | ItemError;
export function parseCiphertext(text: string | AsciiText): { version: number; payload: string | AsciiText } | ItemError {
  // An AsciiText's prefix is read from its head: the version's digits are few (checked below).
  const head = typeof text === 'string' ? text : text.chars(0, PREFIX.length + 32);
  if (!head.startsWith(PREFIX)) return new ItemError('invalid ciphertext: no prefix');
  const colon = head.indexOf(':', PREFIX.length);
  if (colon < 0) return new ItemError('invalid ciphertext: wrong number of fields');
  const digits = head.slice(PREFIX.length, colon);
  if (!/^[+-]?\d{1,15}$/.test(digits)) return new ItemError('invalid ciphertext: version number could not be decoded');
  const version = Number(digits);
  return { version: version === 0 ? 1 : version, payload: typeof text === 'string' ? text.slice(colon + 1) : text.from(colon + 1) };
}

/** Encrypts every item under `policy`; results in input order, an ItemError for each failed item. */
export function encryptBatch(wasm: WasmCrypto, policy: KeyPolicy, items: readonly EncryptItem[]): (Encrypted | ItemError)[] {
  const results = new Array<Encrypted | ItemError>(items.length);
  const info = policy.info;
  if (!info.encryption) return results.fill(new ItemError(`message encryption not supported for key type ${info.name}`));
  if (info.family === 'rsa') rsaEncrypt(policy, items, results);
  else if (info.family === 'kem') kemEncrypt(policy, items, results, versionPrefix);
  else encryptSymmetric(wasm, policy, items, results);
  return results;
}

/**
 * encryptBatch of one item: the same ciphertext, error or key_version. The usual single item — an
 * AES-GCM key neither derived nor convergent — is sealed with its version's key straight away,
 * without the grouping by version and key a batch needs; every other goes through encryptBatch.
 */
export function encryptOne(wasm: WasmCrypto, policy: KeyPolicy, item: EncryptItem): Encrypted | ItemError {
  const s = policy.settings;
  if (policy.info.family !== 'aes-gcm' || s.derived || s.convergentEncryption || item.nonce !== undefined) return encryptBatch(wasm, policy, [item])[0]!;
  let version: KeyVersion;
  try {
    version = policy.versionForWriting(item.keyVersion);
  } catch (err) {
    return ItemError.of(err);
  }
  if (!version.key) return encryptBatch(wasm, policy, [item])[0]!;
  const body = wasm.gcmSealBase64(version.key, [item], WasmCrypto.randomNonceBlock(1))[0]!;
  return { ciphertext: versionPrefix(version.version) + body, keyVersion: version.version };
}

/**
 * decryptBatch of one item: the same plaintext or error. The usual single item — under an AES-GCM
 * key neither derived nor convergent — is opened with its version's key straight away, without the
 * work list and grouping by version and key a batch needs; every other goes through decryptBatch.
 */
export function decryptOne(wasm: WasmCrypto, policy: KeyPolicy, item: DecryptItem): Buffer | ItemError {
  const s = policy.settings;
  if (policy.info.family !== 'aes-gcm' || s.derived || s.convergentEncryption) return decryptBatch(wasm, policy, [item])[0]!;
  const parsed = parseCiphertext(item.ciphertext);
  if (parsed instanceof ItemError) return parsed;
  let version: KeyVersion;
  try {
    version = policy.versionForReading(parsed.version);
  } catch (err) {
    return ItemError.of(err);
  }
  if (!version.key) return decryptBatch(wasm, policy, [item])[0]!;
  let payload: Buffer;
  try {
    payload = decodeBase64(parsed.payload, 'ciphertext');
  } catch {
    return new ItemError(UNDECODABLE_CIPHERTEXT);
  }
  if (payload.length < NONCE_BYTES) return new ItemError(SHORT_CIPHERTEXT);
  const opened = wasm.gcmDecryptBatch(version.key, [{ nonce: payload.subarray(0, NONCE_BYTES), ciphertext: payload.subarray(NONCE_BYTES), aad: item.aad }])[0];
  return opened ?? new ItemError(GCM_AUTHENTICATION_FAILED);
}

/** Decrypts every item under `policy`; results in input order, an ItemError for each failed item. */
export function decryptBatch(wasm: WasmCrypto, policy: KeyPolicy, items: readonly DecryptItem[]): (Buffer | ItemError)[] {
  const results = new Array<Buffer | ItemError>(items.length);
  const info = policy.info;
  if (!info.decryption) return results.fill(new ItemError(`message decryption not supported for key type ${info.name}`));
  if (info.family === 'rsa') rsaDecrypt(policy, items, results);
  else if (info.family === 'kem') kemDecrypt(policy, items, results, parseCiphertext);
  else decryptSymmetric(wasm, policy, items, results);
  return results;
}

/**
 * An item of a symmetric batch on its way: its version, convergent version and keys. Made with
 * every member (undefined until known), so that setting a key later does not give each of a
 * thousand objects a second allocation for members added after the fact.
 */
interface Work {
  /** Position in the caller's items and results. */
  readonly index: number;
  readonly version: KeyVersion;
  readonly convergent: number;
  key: Uint8Array | undefined;
  /** Convergent v2/v3: the key of the nonce HMAC. */
  nonceKey: Uint8Array | undefined;
  /** Decrypt: the decoded payload. */
  payload: Buffer | undefined;
}

function encryptSymmetric(wasm: WasmCrypto, policy: KeyPolicy, items: readonly EncryptItem[], results: (Encrypted | ItemError)[]): void {
  const work = encryptionWork(wasm, policy, items, results);
  if (work.length === 0) return;

  const bodies =
    policy.info.family !== 'chacha' && work.every((w) => w.convergent === 0) ? sealRandom(wasm, policy, work, items) : sealOther(wasm, policy, work, items);
  // A batch is nearly always of one version: its prefix is built once, not once per item.
  let prefixOf = 0;
  let prefix = '';
  for (let k = 0; k < work.length; k++) {
    const version = work[k]!.version.version;
    if (version !== prefixOf) prefix = versionPrefix((prefixOf = version));
    results[work[k]!.index] = { ciphertext: prefix + bodies[k]!, keyVersion: version };
  }
}

/**
 * The items of a symmetric encryption that can be encrypted, each with its version, convergent
 * version and keys; the others are failed in `results`.
 */
function encryptionWork(wasm: WasmCrypto, policy: KeyPolicy, items: readonly EncryptItem[], results: (Encrypted | ItemError)[]): Work[] {
  const pending: Work[] = [];
  for (let i = 0; i < items.length; i++) {
    const item = items[i]!;
    let version: KeyVersion;
    try {
      version = policy.versionForWriting(item.keyVersion);
    } catch (err) {
      results[i] = ItemError.of(err);
      continue;
    }
    const convergent = convergentVersionOf(policy, version);
    if (convergent < 0 || convergent > 3) {
      results[i] = new ItemError('internal error', true, new Error(`unhandled convergent version ${convergent} in key ${policy.name}`));
      continue;
    }
    if (item.nonce !== undefined && convergent !== 1) {
      results[i] = new ItemError(NONCE_NOT_ALLOWED);
      continue;
    }
    if (convergent === 1 && item.nonce?.length !== NONCE_BYTES) {
      results[i] = new ItemError(CONVERGENT_NONCE_LENGTH);
      continue;
    }
    pending.push({ index: i, version, convergent, key: undefined, nonceKey: undefined, payload: undefined });
  }
  return attachKeys(wasm, policy, pending, (i) => items[i]!.context, true, results);
}

/** Plaintext bytes encryptLarge seals and encodes between turns of the event loop (a multiple of 3, so the base64 of the pieces joins up): a few milliseconds' work. */
const TURN_BYTES = 1536 * 1024;

/** Whether encryptLarge would cut `item` into pieces. */
export function isLargeItem(item: EncryptItem): boolean {
  return item.plaintext.length > TURN_BYTES;
}

/**
 * Encrypts one item with a plaintext of megabytes: the ciphertext encryptBatch would make, but
 * sealed and base64-encoded TURN_BYTES at a time with a turn of the event loop after each
 * (encrypting tens of megabytes in one go held every other client up: bench/README.md, "Large
 * requests"), the convergent nonce's HMAC likewise. KEM keys seal in pieces too
 * (kemEncryptLarge); other keys without a symmetric cipher go to
 * encryptBatch.
 */
export async function encryptLarge(wasm: WasmCrypto, policy: KeyPolicy, item: EncryptItem): Promise<LargeEncrypted | ItemError> {
  const family = policy.info.family;
  if (family === 'kem') return kemEncryptLarge(policy, item, versionPrefix, TURN_BYTES);
  if (!policy.info.encryption || (family !== 'aes-gcm' && family !== 'chacha')) return encryptBatch(wasm, policy, [item])[0]!;
  const results: (Encrypted | ItemError)[] = [];
  const [work] = encryptionWork(wasm, policy, [item], results);
  if (work === undefined) return results[0]!;

  const { plaintext, aad } = item;
  let nonce: Uint8Array;
  const nonceBytes = nonceBytesOf(policy);
  if (work.convergent === 0) nonce = randomNoncesFor(policy, 1)[0]!;
  else if (work.convergent === 1) nonce = item.nonce!;
  else nonce = (await hmacInTurns('sha2-256', work.nonceKey!, plaintext)).subarray(0, nonceBytes);
  const cipher =
    family === 'chacha'
      ? chachaCipher(work.key!, nonce)
      : createCipheriv(`aes-${work.key!.length * 8}-gcm` as CipherGCMTypes, work.key!, nonce);
  if (aad?.length) cipher.setAAD(aad, { plaintextLength: plaintext.length });

  // Version 1 keeps the nonce out of the payload; a 12- or 24-byte nonce is whole base64 quanta.
  const text = new AsciiTextBuilder().text(versionPrefix(work.version.version));
  if (work.convergent !== 1) text.base64(nonce);
  for (let at = 0; at < plaintext.length; at += TURN_BYTES) {
    if (at > 0) await nextTurn();
    const body = cipher.update(plaintext.subarray(at, at + TURN_BYTES));
    if (at + TURN_BYTES < plaintext.length) {
      text.base64(body);
      // Encoded, so done with: its memory goes back now rather than at a collection (core/buffer-release.ts).
      releaseBuffer(body);
      continue;
    }
    cipher.final();
    const last = Buffer.concat([body, cipher.getAuthTag()]);
    text.base64(last);
    releaseBuffer(body);
    releaseBuffer(last);
  }
  return { ciphertext: text.build(), keyVersion: work.version.version };
}

/** Bytes of the AES-GCM and ChaCha20-Poly1305 tag at the end of a payload. */
const TAG_BYTES = 16;

/** Characters of a ciphertext above which decryptLarge opens it in pieces: the base64 of TURN_BYTES. */
const LARGE_CIPHERTEXT_CHARS = (TURN_BYTES / 3) * 4;

/** Whether decryptLarge would open `item` in pieces. */
export function isLargeCiphertext(item: LargeDecryptItem): boolean {
  return item.ciphertext instanceof AsciiText || item.ciphertext.length > LARGE_CIPHERTEXT_CHARS;
}

/**
 * Decrypts one item with a ciphertext of megabytes: the plaintext or error decryptBatch would
 * give, with the same checks in the same order, but the payload decoded and opened TURN_BYTES at
 * a time with a turn of the event loop after each, as encryptLarge seals. The plaintext is
 * released only once the tag has verified; a forged one is wiped. KEM keys open in pieces too
 * (kemDecryptLarge); other keys without a symmetric cipher
 * go to decryptBatch.
 */
export async function decryptLarge(wasm: WasmCrypto, policy: KeyPolicy, item: LargeDecryptItem): Promise<Buffer | ItemError> {
  const family = policy.info.family;
  if (family === 'kem') return kemDecryptLarge(policy, item, parseCiphertext, TURN_BYTES);
  // Keys with no cipher to stream (RSA) take the whole text, as a batch item would.
  if (!policy.info.decryption || (family !== 'aes-gcm' && family !== 'chacha')) return decryptBatch(wasm, policy, [{ ...item, ciphertext: String(item.ciphertext) }])[0]!;
  const parsed = parseCiphertext(item.ciphertext);
  let decoded: Buffer | undefined;
  if (!(parsed instanceof ItemError)) decoded = await decodeBase64InTurns(parsed.payload, 'ciphertext').catch(() => undefined);
  const results: (Buffer | ItemError)[] = [];
  // decryptionWork reads the version from the prefix again, and takes the payload decoded above.
  const head = typeof item.ciphertext === 'string' ? item.ciphertext : item.ciphertext.chars(0, parsed instanceof ItemError ? 64 : item.ciphertext.length - parsed.payload.length);
  const { work, nonces, bodies } = decryptionWork(wasm, policy, [{ ...item, ciphertext: head }], results, () => {
    if (decoded === undefined) throw new Error(UNDECODABLE_CIPHERTEXT);
    return decoded;
  });
  if (work.length === 0) return results[0]!;

  const key = work[0]!.key!;
  const body = bodies[0]!;
  if (body.length < TAG_BYTES) return authenticationFailure(policy);
  const sealed = body.length - TAG_BYTES;
  const decipher =
    family === 'chacha'
      ? chachaDecipher(key, nonces[0]!)
      : createDecipheriv(`aes-${key.length * 8}-gcm` as CipherGCMTypes, key, nonces[0]!);
  decipher.setAuthTag(body.subarray(sealed));
  if (item.aad?.length) decipher.setAAD(item.aad, { plaintextLength: sealed });
  const plaintext = Buffer.allocUnsafe(sealed);
  let written = 0;
  for (let at = 0; at < sealed; at += TURN_BYTES) {
    if (at > 0) await nextTurn();
    const piece = decipher.update(body.subarray(at, Math.min(at + TURN_BYTES, sealed)));
    written += piece.copy(plaintext, written);
    releaseBuffer(piece);
  }
  // The payload was read whole (the tag was copied by setAuthTag): its memory goes back now (core/buffer-release.ts).
  releaseBuffer(decoded);
  try {
    decipher.final();
  } catch {
    plaintext.fill(0);
    releaseBuffer(plaintext);
    return authenticationFailure(policy);
  }
  return plaintext;
}

/**
 * The usual batch, AES-GCM with random nonces: the base64 payload (nonce ‖ ciphertext ‖ tag) of
 * each work item, with one randomFillSync for all nonces and one sealing call per key that
 * returns the text directly (no Buffer per nonce or per result).
 */
function sealRandom(wasm: WasmCrypto, policy: KeyPolicy, work: readonly Work[], items: readonly EncryptItem[]): string[] {
  const nonces = WasmCrypto.randomNonceBlock(work.length);
  const out = new Array<string>(work.length);
  for (const [key, positions] of byKey(policy, work)) {
    let block = nonces;
    if (positions.length !== work.length) {
      block = Buffer.allocUnsafe(positions.length * NONCE_BYTES);
      positions.forEach((k, j) => nonces.copy(block, j * NONCE_BYTES, k * NONCE_BYTES, (k + 1) * NONCE_BYTES));
    }
    const texts = wasm.gcmSealBase64(key, positions.map((k) => items[work[k]!.index]!), block);
    positions.forEach((k, j) => (out[k] = texts[j]!));
  }
  return out;
}

/**
 * The base64 payload of each work item of any other batch: ChaCha20-Poly1305, or convergent
 * nonces (given by the caller for version 1, and then not stored in the payload; derived from
 * the plaintext by one HMAC batch for versions 2 and 3), possibly mixed with random ones.
 */
function sealOther(wasm: WasmCrypto, policy: KeyPolicy, work: readonly Work[], items: readonly EncryptItem[]): string[] {
  // Nonces, by position in `work`: random ones from one randomFillSync, convergent ones from one HMAC batch.
  const nonces = new Array<Uint8Array>(work.length);
  let randomCount = 0;
  const derivedAt: number[] = [];
  work.forEach((w, k) => {
    if (w.convergent === 0) randomCount++;
    else if (w.convergent === 1) nonces[k] = items[w.index]!.nonce!;
    else derivedAt.push(k);
  });
  if (randomCount > 0) {
    const random = randomNoncesFor(policy, randomCount);
    let r = 0;
    work.forEach((w, k) => {
      if (w.convergent === 0) nonces[k] = random[r++]!;
    });
  }
  if (derivedAt.length > 0) {
    const sums = wasm.hmacBatch(
      'sha256',
      derivedAt.map((k) => work[k]!.nonceKey!),
      derivedAt.map((k) => items[work[k]!.index]!.plaintext),
    );
    derivedAt.forEach((k, j) => (nonces[k] = sums[j]!.subarray(0, nonceBytesOf(policy))));
  }

  const sealed = seal(wasm, policy, work, nonces, items);
  return encodeBase64Batch(
    work.map((w, k) => (w.convergent === 1 ? undefined : nonces[k])),
    sealed,
  );
}

function decryptSymmetric(wasm: WasmCrypto, policy: KeyPolicy, items: readonly DecryptItem[], results: (Buffer | ItemError)[]): void {
  const { work, nonces, bodies } = decryptionWork(wasm, policy, items, results, (text) => decodeBase64(text, 'ciphertext'));
  if (work.length === 0) return;

  const opened = open(wasm, policy, work, nonces, bodies, items);
  const failure = authenticationFailure(policy);
  work.forEach((w, k) => (results[w.index] = opened[k] ?? failure));
}

function authenticationFailure(policy: KeyPolicy): ItemError {
  return new ItemError(policy.info.family === 'chacha' ? 'chacha20poly1305: message authentication failed' : GCM_AUTHENTICATION_FAILED);
}

/**
 * The items of a symmetric decryption that can be opened, each with its key, nonce and sealed
 * body; the others are failed in `results`. `decode` turns an item's base64 payload into bytes.
 */
function decryptionWork(
  wasm: WasmCrypto,
  policy: KeyPolicy,
  items: readonly DecryptItem[],
  results: (Buffer | ItemError)[],
  decode: (payload: string) => Buffer,
): { work: Work[]; nonces: Uint8Array[]; bodies: Uint8Array[] } {
  const pending: Work[] = [];
  for (let i = 0; i < items.length; i++) {
    const item = items[i]!;
    const parsed = parseCiphertext(item.ciphertext);
    if (parsed instanceof ItemError) {
      results[i] = parsed;
      continue;
    }
    let version: KeyVersion;
    try {
      version = policy.versionForReading(parsed.version);
    } catch (err) {
      results[i] = ItemError.of(err);
      continue;
    }
    const convergent = convergentVersionOf(policy, version);
    if (convergent < 0 || convergent > 3) {
      results[i] = new ItemError('internal error', true, new Error(`unhandled convergent version ${convergent} in key ${policy.name}`));
      continue;
    }
    if (convergent === 1 && !item.nonce?.length) {
      results[i] = new ItemError('invalid convergent nonce supplied');
      continue;
    }
    let payload: Buffer;
    try {
      payload = decode(parsed.payload);
    } catch {
      results[i] = new ItemError(UNDECODABLE_CIPHERTEXT);
      continue;
    }
    pending.push({ index: i, version, convergent, key: undefined, nonceKey: undefined, payload });
  }
  // Decryption needs only the cipher key: HKDF's output for a longer length starts with the shorter one.
  const derived = attachKeys(wasm, policy, pending, (i) => items[i]!.context, false, results);

  const work: Work[] = [];
  const nonces: Uint8Array[] = [];
  const bodies: Uint8Array[] = [];
  const nonceBytes = nonceBytesOf(policy);
  for (const w of derived) {
    const payload = w.payload!;
    if (payload.length < nonceBytes) {
      results[w.index] = new ItemError(SHORT_CIPHERTEXT);
      continue;
    }
    if (w.convergent === 1) {
      const nonce = items[w.index]!.nonce!;
      if (nonce.length !== NONCE_BYTES) {
        results[w.index] = new ItemError(CONVERGENT_NONCE_LENGTH);
        continue;
      }
      nonces.push(nonce);
      bodies.push(payload);
    } else {
      nonces.push(payload.subarray(0, nonceBytes));
      bodies.push(payload.subarray(nonceBytes));
    }
    work.push(w);
  }
  return { work, nonces, bodies };
}

/**
 * Gives each item its cipher key: the version's own, or one derived from the item's context —
 * HKDF-SHA-256 in one WASM call per key version (and output length), or the legacy counter-mode
 * KDF for kdf 0 keys. With `nonceKeys`, convergent v3 items also get the 32 bytes after the cipher
 * key, and v2 items the context, as the key of their nonce HMAC. Items that get no key are failed
 * in `results`; the others are returned.
 */
function attachKeys(
  wasm: WasmCrypto,
  policy: KeyPolicy,
  work: Work[],
  contextOf: (index: number) => Uint8Array | undefined,
  nonceKeys: boolean,
  results: unknown[],
): Work[] {
  const s = policy.settings;
  const keyBytes = policy.info.keyBytes!;
  const ready: Work[] = [];
  type Group = { ikm: Uint8Array; length: number; members: Work[]; infos: Uint8Array[] };
  const groups = new Map<string, Group>();
  // Consecutive items nearly always share a version and length: the last group is reused without a lookup.
  let last: { version: number; length: number; group: Group } | undefined;
  for (const w of work) {
    const material = w.version.key;
    if (!material) {
      results[w.index] = new ItemError('internal error', true, new Error(`version ${w.version.version} of key ${policy.name} has no key material`));
      continue;
    }
    if (!s.derived) {
      w.key = material;
      ready.push(w);
      continue;
    }
    const context = contextOf(w.index);
    if (!context || context.length === 0) {
      results[w.index] = new ItemError(MISSING_CONTEXT);
      continue;
    }
    const length = keyBytes + (nonceKeys && w.convergent >= 3 ? NONCE_KEY_BYTES : 0);
    if (nonceKeys && w.convergent === 2) w.nonceKey = context;
    if (s.kdf === 0) {
      const out = counterModeKdf(material, context);
      if (out.length < length) {
        results[w.index] = new ItemError(
          `cannot derive a key for convergent encryption version ${w.convergent} with the legacy counter-mode KDF (kdf 0) of key ${policy.name}: ` +
            `it gives ${out.length} bytes, ${length} are needed; rotate the key or rewrap with a key using HKDF`,
        );
        continue;
      }
      w.key = out.subarray(0, keyBytes);
      if (length > keyBytes) w.nonceKey = out.subarray(keyBytes, length);
      ready.push(w);
      continue;
    }
    let group: Group;
    if (last !== undefined && last.version === w.version.version && last.length === length) {
      group = last.group;
    } else {
      const id = `${w.version.version}/${length}`;
      const found = groups.get(id);
      group = found ?? { ikm: material, length, members: [], infos: [] };
      if (!found) groups.set(id, group);
      last = { version: w.version.version, length, group };
    }
    group.members.push(w);
    group.infos.push(context);
  }
  for (const group of groups.values()) {
    const outputs = wasm.hkdfSha256Batch(group.ikm, group.infos, group.length);
    group.members.forEach((w, k) => {
      const out = outputs[k]!;
      w.key = out.subarray(0, keyBytes);
      if (group.length > keyBytes) w.nonceKey = out.subarray(keyBytes);
      ready.push(w);
    });
  }
  return ready;
}

/** ciphertext ‖ tag of each work item (by position). */
function seal(wasm: WasmCrypto, policy: KeyPolicy, work: readonly Work[], nonces: readonly Uint8Array[], items: readonly EncryptItem[]): Buffer[] {
  if (policy.info.family === 'chacha') {
    return work.map((w, k) => {
      const item = items[w.index]!;
      const cipher = chachaCipher(w.key!, nonces[k]!);
      if (item.aad?.length) cipher.setAAD(item.aad, { plaintextLength: item.plaintext.length });
      const body = cipher.update(item.plaintext);
      cipher.final();
      return Buffer.concat([body, cipher.getAuthTag()]);
    });
  }
  const out = new Array<Buffer>(work.length);
  for (const [key, positions] of byKey(policy, work)) {
    const sealed = wasm.gcmEncryptBatch(
      key,
      positions.map((k) => {
        const item = items[work[k]!.index]!;
        return { nonce: nonces[k]!, plaintext: item.plaintext, aad: item.aad };
      }),
    );
    positions.forEach((k, j) => (out[k] = sealed[j]!));
  }
  return out;
}

/** The plaintext of each work item (by position), or null where authentication failed. */
function open(
  wasm: WasmCrypto,
  policy: KeyPolicy,
  work: readonly Work[],
  nonces: readonly Uint8Array[],
  bodies: readonly Uint8Array[],
  items: readonly DecryptItem[],
): (Buffer | null)[] {
  if (policy.info.family === 'chacha') {
    return work.map((w, k) => {
      const body = bodies[k]!;
      if (body.length < 16) return null;
      const aad = items[w.index]!.aad;
      const decipher = chachaDecipher(w.key!, nonces[k]!);
      decipher.setAuthTag(body.subarray(body.length - 16));
      if (aad?.length) decipher.setAAD(aad, { plaintextLength: body.length - 16 });
      const plain = decipher.update(body.subarray(0, body.length - 16));
      try {
        decipher.final();
      } catch {
        return null;
      }
      return plain;
    });
  }
  const out = new Array<Buffer | null>(work.length);
  for (const [key, positions] of byKey(policy, work)) {
    const opened = wasm.gcmDecryptBatch(
      key,
      positions.map((k) => ({ nonce: nonces[k]!, ciphertext: bodies[k]!, aad: items[work[k]!.index]!.aad })),
    );
    positions.forEach((k, j) => (out[k] = opened[j]!));
  }
  return out;
}

/**
 * The AES-GCM calls a batch needs: for a derived key one call with a key per item; otherwise one
 * call per key version, with that version's key. Positions are into `work`.
 */
function byKey(policy: KeyPolicy, work: readonly Work[]): [Uint8Array | Uint8Array[], number[]][] {
  if (policy.settings.derived) return [[work.map((w) => w.key!), work.map((_, k) => k)]];
  const groups = new Map<number, [Uint8Array, number[]]>();
  work.forEach((w, k) => {
    const group = groups.get(w.version.version);
    if (group) group[1].push(k);
    else groups.set(w.version.version, [w.key!, [k]]);
  });
  return [...groups.values()];
}

/** RSA-OAEP (SHA-256, MGF1-SHA-256, empty label) or PKCS#1 v1.5 with the version's public key. */
function rsaEncrypt(policy: KeyPolicy, items: readonly EncryptItem[], results: (Encrypted | ItemError)[]): void {
  items.forEach((item, i) => {
    let version: KeyVersion;
    try {
      version = policy.versionForWriting(item.keyVersion);
    } catch (err) {
      results[i] = ItemError.of(err);
      return;
    }
    if (item.nonce !== undefined) {
      results[i] = new ItemError(NONCE_NOT_ALLOWED);
      return;
    }
    const key = version.publicKey;
    if (!key) {
      results[i] = new ItemError('internal error', true, new Error(`version ${version.version} of key ${policy.name} has no public key`));
      return;
    }
    const pkcs1 = item.padding === 'pkcs1v15';
    if (item.plaintext.length > modulusBytes(key, policy) - (pkcs1 ? PKCS1_OVERHEAD : OAEP_OVERHEAD)) {
      results[i] = new ItemError('failed to RSA encrypt the plaintext: crypto/rsa: message too long for RSA key size');
      return;
    }
    try {
      const sealed = pkcs1
        ? publicEncrypt({ key, padding: constants.RSA_PKCS1_PADDING }, item.plaintext)
        : publicEncrypt({ key, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, item.plaintext);
      results[i] = { ciphertext: versionPrefix(version.version) + sealed.toString('base64'), keyVersion: version.version };
    } catch (err) {
      results[i] = new ItemError('internal error', true, err);
    }
  });
}

function rsaDecrypt(policy: KeyPolicy, items: readonly DecryptItem[], results: (Buffer | ItemError)[]): void {
  items.forEach((item, i) => {
    const parsed = parseCiphertext(item.ciphertext);
    if (parsed instanceof ItemError) {
      results[i] = parsed;
      return;
    }
    let version: KeyVersion;
    let payload: Buffer;
    try {
      version = policy.versionForReading(parsed.version);
    } catch (err) {
      results[i] = ItemError.of(err);
      return;
    }
    try {
      payload = decodeBase64(parsed.payload, 'ciphertext');
    } catch {
      results[i] = new ItemError(UNDECODABLE_CIPHERTEXT);
      return;
    }
    const key = version.privateKey;
    if (!key) {
      results[i] = new ItemError('requested version for decryption does not contain a private part');
      return;
    }
    const plain = item.padding === 'pkcs1v15' ? pkcs1v15Decrypt(key, payload, modulusBytes(key, policy)) : oaepDecrypt(key, payload);
    results[i] = plain ?? new ItemError(RSA_DECRYPT_FAILED);
  });
}

function modulusBytes(key: KeyObject, policy: KeyPolicy): number {
  return Math.ceil((key.asymmetricKeyDetails?.modulusLength ?? policy.info.rsaBits!) / 8);
}

function oaepDecrypt(key: KeyObject, payload: Buffer): Buffer | null {
  try {
    return privateDecrypt({ key, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, payload);
  } catch {
    return null;
  }
}

/**
 * PKCS#1 v1.5 decryption. Node 20 refuses RSA_PKCS1_PADDING for private decryption
 * (CVE-2023-46809), so the raw RSA result is unpadded here: EM = 0x00 ‖ 0x02 ‖ PS (at least 8
 * non-zero bytes) ‖ 0x00 ‖ M, scanned to the end whatever it finds, so that the time taken does not
 * tell where the padding went wrong (Bleichenbacher); every failure has the same message.
 */
function pkcs1v15Decrypt(key: KeyObject, payload: Buffer, k: number): Buffer | null {
  if (payload.length !== k) return null;
  let em: Buffer;
  try {
    em = privateDecrypt({ key, padding: constants.RSA_NO_PADDING }, payload);
  } catch {
    return null;
  }
  let good = ((em[0]! | (em[1]! ^ 2)) - 1) >>> 31;
  let separator = 0;
  let found = 0;
  for (let i = 2; i < em.length; i++) {
    const zero = (em[i]! - 1) >>> 31;
    separator |= i * (zero & (found ^ 1));
    found |= zero;
  }
  good &= found & ((9 - separator) >>> 31);
  return good === 1 ? em.subarray(separator + 1) : null;
}

