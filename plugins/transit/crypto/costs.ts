/**
 * What the items of a batch are estimated to cost, by operation and key type: the budget slices.ts
 * cuts a batch by. The figures are microseconds, rounded up from measurements; bench/README.md
 * ("What a batch item costs") says how they were taken and what they were. An estimate that is
 * off only makes slices longer or shorter than SLICE_US; the answers do not change.
 */
import type { KeyPolicy } from '../keys/key-policy.js';
import type { KeyType } from '../keys/key-types.js';
import { kemEngine, type KemEngine } from './hpke.js';
import { kemForKey } from './kem.js';

/**
 * The estimated cost of the items of a batch, in microseconds: `itemUs` for every item and
 * `unitUs` for every unit (byte or character) of its size as `sizeOf` gives it. One call per
 * item, so that finding that a batch fits one slice costs next to nothing; none when `unitUs` is 0.
 */
export interface ItemCost<T> {
  readonly itemUs: number;
  readonly unitUs: number;
  readonly sizeOf: (item: T) => number;
}

/** Reading an item: its fields, and the base64 decoding of its text per character. */
const PARSE_ITEM_US = 0.5;
const PARSE_CHAR_US = 0.002;
/** Sealing, opening or MACing an item in a batch kernel, and per byte of it. */
const SYMMETRIC_ITEM_US = 1;
const SYMMETRIC_BYTE_US = 0.004;
/** ChaCha20-Poly1305 has no batch kernel: a native cipher per item. */
const CHACHA_ITEM_US = 8;
/** AES-CMAC of an item (two OpenSSL cipher contexts per item: subkeys, then CBC), and per character of its base64 input. */
const CMAC_ITEM_US = 40;
const CMAC_CHAR_US = 0.01;
/** A derived key per item (HKDF, the per-item-key kernel), and for convergent keys the nonce's HMAC. */
const DERIVED_ITEM_US = 3;
/** Deriving an ed25519 key from a context: HKDF, then the key object and its public half. */
const DERIVED_SIGNING_KEY_US = 450;

/** An Ed25519ctx or Ed25519ph signature (@noble/curves, in JavaScript) and its verification: what node:crypto's pure Ed25519 costs, times the ratio measured beside it. */
const ED25519_VARIANT_US = { private: 650, public: 1600 } as const;

/** Building an item's entry of `batch_results`. */
export const ANSWER_COST: ItemCost<unknown> = { itemUs: 0.15, unitUs: 0, sizeOf: () => 0 };

/** One private-key and one public-key operation (sign and verify; RSA decrypt and encrypt), by key type. */
const ASYMMETRIC_US: Readonly<Partial<Record<KeyType, { readonly private: number; readonly public: number }>>> = {
  ed25519: { private: 40, public: 130 },
  'ecdsa-p256': { private: 45, public: 105 },
  'ecdsa-p384': { private: 1350, public: 1050 },
  'ecdsa-p521': { private: 2350, public: 2050 },
  'rsa-2048': { private: 450, public: 35 },
  'rsa-3072': { private: 1800, public: 45 },
  'rsa-4096': { private: 4000, public: 70 },
  // Post-quantum keys sign and verify in the thread pool: this is the event loop's share of an item.
  'ml-dsa': { private: 60, public: 60 },
  'slh-dsa': { private: 60, public: 60 },
  hybrid: { private: 120, public: 120 },
};

/**
 * Sealing (`public`: encapsulation, key schedule, AES-256-GCM) and opening (`private`) one item
 * under a KEM key (docs/transit-kem.md), by engine (hpke.ts) and HPKE KEM name, measured as
 * bench/README.md ("What a batch item costs") says.
 */
const KEM_US: Readonly<Record<KemEngine, Readonly<Record<string, { readonly private: number; readonly public: number }>>>> = {
  'node:crypto': {
    'ML-KEM-768': { private: 300, public: 300 },
    'ML-KEM-1024': { private: 400, public: 350 },
    'MLKEM768-X25519': { private: 750, public: 900 },
  },
  '@noble/post-quantum': {
    'ML-KEM-768': { private: 900, public: 800 },
    'ML-KEM-1024': { private: 1400, public: 1000 },
    'MLKEM768-X25519': { private: 3300, public: 3200 },
  },
};

/** The length of an item's text field; 0 when it is not a string. */
export function textLength(text: unknown): number {
  return typeof text === 'string' ? text.length : 0;
}

/** Reading items whose main text (plaintext, ciphertext) has `sizeOf` characters. */
export function readCost<T>(sizeOf: (item: T) => number): ItemCost<T> {
  return { itemUs: PARSE_ITEM_US, unitUs: PARSE_CHAR_US, sizeOf };
}

/** Encrypting (or, with `decrypting`, opening) items of `sizeOf` bytes under `policy`. */
export function cipherCost<T>(policy: KeyPolicy, decrypting: boolean, sizeOf: (item: T) => number): ItemCost<T> {
  const info = policy.info;
  if (info.family === 'rsa') return { itemUs: ASYMMETRIC_US[info.name]![decrypting ? 'private' : 'public'], unitUs: 0, sizeOf };
  if (info.family === 'kem') {
    return { itemUs: KEM_US[kemEngine()][kemForKey(info, policy.settings.parameterSet).name]![decrypting ? 'private' : 'public'], unitUs: SYMMETRIC_BYTE_US, sizeOf };
  }
  const itemUs = (info.family === 'chacha' ? CHACHA_ITEM_US : SYMMETRIC_ITEM_US) + (policy.settings.derived ? DERIVED_ITEM_US : 0);
  return { itemUs, unitUs: SYMMETRIC_BYTE_US, sizeOf };
}

/**
 * `work` with the reading of each item before it and the writing of its answer after it: a batch
 * worked on slice by slice from its items to its answer (batch-answer.ts, answerInSlices). `work`'s
 * cost per byte is counted per character of the item's text, a little more than the bytes that
 * text decodes to: an estimate on the high side only makes the slices a little shorter.
 */
export function fromItemToAnswer<T>(work: ItemCost<T>): ItemCost<T> {
  return { itemUs: PARSE_ITEM_US + work.itemUs + ANSWER_COST.itemUs, unitUs: PARSE_CHAR_US + work.unitUs, sizeOf: work.sizeOf };
}

/** Opening and sealing again items of `sizeOf` bytes under `policy` (rewrap). */
export function rewrapCost<T>(policy: KeyPolicy, sizeOf: (item: T) => number): ItemCost<T> {
  const open = cipherCost(policy, true, sizeOf);
  const seal = cipherCost(policy, false, sizeOf);
  return { itemUs: open.itemUs + seal.itemUs, unitUs: open.unitUs + seal.unitUs, sizeOf };
}

/** Reading and MACing items whose input has `sizeOf` characters. */
export function macCost<T>(sizeOf: (item: T) => number): ItemCost<T> {
  return { itemUs: PARSE_ITEM_US + SYMMETRIC_ITEM_US, unitUs: PARSE_CHAR_US + SYMMETRIC_BYTE_US, sizeOf };
}

/** Reading and CMACing items whose input has `sizeOf` characters. */
export function cmacCost<T>(sizeOf: (item: T) => number): ItemCost<T> {
  return { itemUs: PARSE_ITEM_US + CMAC_ITEM_US, unitUs: PARSE_CHAR_US + CMAC_CHAR_US, sizeOf };
}

/**
 * Reading, hashing and signing (`private`) or verifying (`public`) items whose input has `sizeOf`
 * characters with a key of `policy`, deriving the key of each for a derived (ed25519) key;
 * `ed25519Variant` when the items are Ed25519ctx or Ed25519ph signatures.
 */
export function signingCost<T>(policy: KeyPolicy, operation: 'private' | 'public', sizeOf: (item: T) => number, ed25519Variant = false): ItemCost<T> {
  const signatureUs = ed25519Variant ? ED25519_VARIANT_US[operation] : ASYMMETRIC_US[policy.info.name]![operation];
  const keyUs = signatureUs + (policy.settings.derived ? DERIVED_SIGNING_KEY_US : 0);
  return { itemUs: PARSE_ITEM_US + SYMMETRIC_ITEM_US + keyUs, unitUs: PARSE_CHAR_US + SYMMETRIC_BYTE_US, sizeOf };
}
