/**
 * The per-device salt and the HMAC made with it. Vault's salt is a random UUID string, and the
 * HMAC key is that string's bytes, so a value hashed here and by `sys/audit-hash` (or by Vault
 * with the same salt) compares equal.
 */
import { createHmac, randomUUID, type Hmac } from 'node:crypto';

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
 * A batch HMAC-SHA256 kernel (the WASM core's `hmacBatch`): the key's pads are made once and every
 * input hashed in one call, far cheaper per value than a node:crypto Hmac object each.
 */
export interface HmacKernel {
  hmacBatch(alg: 'sha256', key: Uint8Array, inputs: readonly Uint8Array[]): Uint8Array[];
}

/** One device's HMAC: single values, many at once, or one large value fed in pieces. */
export class AuditHmac {
  private readonly key: Buffer;

  constructor(
    private readonly salt: string,
    private readonly kernel?: HmacKernel,
  ) {
    this.key = Buffer.from(salt, 'utf8');
  }

  one(value: string): string {
    return identifiedHmac(this.salt, value);
  }

  many(values: readonly string[]): string[] {
    if (!this.kernel) return values.map((value) => identifiedHmac(this.salt, value));
    const digests = this.kernel.hmacBatch('sha256', this.key, values.map((value) => Buffer.from(value, 'utf8')));
    return digests.map((digest) => HMAC_PREFIX + Buffer.from(digest.buffer, digest.byteOffset, digest.byteLength).toString('hex'));
  }

  /** An HMAC to feed a large value piece by piece; `identified` turns its digest into the entry's text. */
  incremental(): Hmac {
    return createHmac('sha256', this.salt);
  }

  static identified(hmac: Hmac): string {
    return HMAC_PREFIX + hmac.digest('hex');
  }
}
