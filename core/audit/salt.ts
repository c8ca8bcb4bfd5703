/**
 * The per-device salt and the HMAC made with it. Vault's salt is a random UUID string, and the
 * HMAC key is that string's bytes, so a value hashed here and by `sys/audit-hash` (or by Vault
 * with the same salt) compares equal.
 */
import { createHmac, createSecretKey, randomUUID, type Hmac, type KeyObject } from 'node:crypto';

/** What every hashed value starts with: it names the algorithm, as Vault's `GetIdentifiedHMAC` does. */
export const HMAC_PREFIX = 'hmac-sha256:';

/** A fresh salt for a new device. */
export function newSalt(): string {
  return randomUUID();
}

/** `hmac-sha256:` + hex(HMAC-SHA256(key = salt, message = value)). */
export function identifiedHmac(salt: string, value: string): string {
  return HMAC_PREFIX + createHmac('sha256', salt).update(value, 'utf8').digest('hex');
}

/**
 * A batch HMAC-SHA256 kernel (the WASM core's `hmacSha256Packed`): the key's pads are made once
 * and every message, laid back to back in one buffer, hashed in one call; the digests come back
 * back to back. Far cheaper per value than a node:crypto Hmac object each.
 */
export interface HmacKernel {
  hmacSha256Packed(key: Uint8Array, data: Uint8Array, ends: ArrayLike<number>): Buffer;
}

/**
 * Values fewer than this go to node:crypto one by one rather than through the batch kernel: the
 * kernel's set-up is not worth it for a token and an accessor.
 */
const KERNEL_MIN_VALUES = 16;

/** One device's HMAC: single values, many at once, or one large value fed in pieces. */
export class AuditHmac {
  private readonly key: Buffer;
  /**
   * The salt as a KeyObject, made once: node:crypto prepares a string or byte key afresh for every
   * Hmac it makes, which on Node 24 costs several times the HMAC of a short value.
   */
  private readonly keyObject: KeyObject;

  /** The HMAC of the empty string, made once: a batch's results carry an empty `reference` each. */
  readonly emptyHash: string;

  constructor(
    salt: string,
    private readonly kernel?: HmacKernel,
  ) {
    this.key = Buffer.from(salt, 'utf8');
    this.keyObject = createSecretKey(this.key);
    this.emptyHash = this.one('');
  }

  one(value: string): string {
    return HMAC_PREFIX + createHmac('sha256', this.keyObject).update(value, 'utf8').digest('hex');
  }

  /** The hex digests of `values`, back to back (64 digits each): through the batch kernel when there are enough. */
  hexDigests(values: readonly string[]): string {
    if (this.kernel && values.length >= KERNEL_MIN_VALUES) return this.manyHex(values);
    let hex = '';
    for (const value of values) hex += createHmac('sha256', this.keyObject).update(value, 'utf8').digest('hex');
    return hex;
  }

  /**
   * The hex digests of `values`, back to back (64 digits each), through the batch kernel: the
   * values encoded as one buffer, hashed in one call, written out as one hex string.
   */
  manyHex(values: readonly string[]): string {
    const joined = values.join('');
    const ascii = isAscii(joined);
    const bytes = utf8Of(joined, ascii);
    const ends = new Uint32Array(values.length);
    let at = 0;
    // All in ASCII (base64 plaintexts and ciphertexts, tokens): each value's bytes are its characters.
    for (let i = 0; i < values.length; i++) ends[i] = at += ascii ? values[i]!.length : Buffer.byteLength(values[i]!, 'utf8');
    if (!this.kernel) throw new Error('no batch HMAC kernel');
    return this.kernel.hmacSha256Packed(this.key, bytes, ends).toString('hex');
  }

  /**
   * This HMAC for one request's entries: `one` hashes a value seen before (the caller's token and
   * accessor appear in two sections of both entries) only once. Held no longer than the request.
   */
  remembering(): AuditHmac {
    const seen = new Map<string, string>();
    const one = (value: string): string => {
      let hash = seen.get(value);
      if (hash === undefined) {
        hash = this.one(value);
        seen.set(value, hash);
      }
      return hash;
    };
    return Object.assign(Object.create(this) as AuditHmac, { one });
  }

  /** An HMAC to feed a large value piece by piece. */
  incremental(): Hmac {
    return createHmac('sha256', this.keyObject);
  }
}

/** Whether `text` is all ASCII: its count of UTF-8 bytes (counted without encoding) is its length. */
function isAscii(text: string): boolean {
  return Buffer.byteLength(text, 'utf8') === text.length;
}

/**
 * `text`'s UTF-8. ASCII text is its own UTF-8 and is copied as latin1, several times faster than
 * node's UTF-8 encoder goes through it; `ascii` is isAscii(text).
 */
export function utf8Of(text: string, ascii = isAscii(text)): Buffer {
  return Buffer.from(text, ascii ? 'latin1' : 'utf8');
}
