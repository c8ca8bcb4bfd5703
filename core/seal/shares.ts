/**
 * Unseal key shares as operators hand them in, shared by unseal, rekey and root generation: decoded
 * (hex or base64), recognised against the digests the seal configuration keeps, and collected
 * toward the threshold.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { BadRequestError } from '../errors.js';
import { zeroize } from '../../storage/aead.js';
import { combine, split } from './shamir.js';

/** What recognising and combining shares needs from a seal configuration. */
export interface ShareScheme {
  readonly secret_shares: number;
  readonly secret_threshold: number;
  /**
   * SHA-256 over (salt ‖ share) of each share handed out. Lets a wrong share be refused on its own,
   * instead of silently counting toward the threshold and failing the whole attempt. Shares are 33
   * random bytes, so the digests reveal nothing usable.
   */
  readonly share_digests: readonly string[];
  readonly share_salt: string;
}

/** A new unseal key split for handing out, with the scheme that recognises its shares. */
export interface SplitKey {
  /** The shares (or, with one share, the unseal key itself). */
  readonly keys: Buffer[];
  readonly scheme: ShareScheme;
}

/** Splits `unsealKey` as Vault does: one share is the key itself, more are Shamir shares. */
export function splitUnsealKey(unsealKey: Uint8Array, shares: number, threshold: number): SplitKey {
  const keys = shares === 1 ? [Buffer.from(unsealKey)] : split(unsealKey, shares, threshold).map((s) => Buffer.from(s));
  const salt = randomBytes(16);
  return {
    keys,
    scheme: {
      secret_shares: shares,
      secret_threshold: threshold,
      share_digests: keys.map((k) => digest(salt, k)),
      share_salt: salt.toString('hex'),
    },
  };
}

/**
 * Decodes one share and checks that it belongs to `scheme`.
 * @throws BadRequestError naming `field` for a malformed share, one of the wrong length, or one the
 * scheme never handed out.
 */
export function acceptShare(scheme: ShareScheme, encoded: string, field = 'key'): Buffer {
  const share = decodeShare(encoded, field);
  const expectedLength = scheme.secret_shares === 1 ? 32 : 33;
  if (share.length !== expectedLength) {
    throw new BadRequestError(`'${field}' must be ${expectedLength} bytes (hex or base64), got ${share.length}`);
  }
  const mine = Buffer.from(digest(Buffer.from(scheme.share_salt, 'hex'), share), 'hex');
  const known = scheme.share_digests.some((d) => {
    const theirs = Buffer.from(d, 'hex');
    return theirs.length === mine.length && timingSafeEqual(theirs, mine);
  });
  if (!known) throw new BadRequestError(`'${field}' is not one of the current key shares`);
  return share;
}

/** Hex first, then standard base64, as Vault decodes unseal keys. */
function decodeShare(encoded: string, field: string): Buffer {
  const text = encoded.trim();
  if (/^[0-9a-fA-F]+$/.test(text) && text.length % 2 === 0) {
    const hex = Buffer.from(text, 'hex');
    if (hex.length >= 16 && hex.length <= 33) return hex;
  }
  if (/^[A-Za-z0-9+/]+={0,2}$/.test(text) && text.length % 4 === 0) {
    const b64 = Buffer.from(text, 'base64');
    if (b64.length >= 16 && b64.length <= 33) return b64;
  }
  throw new BadRequestError(`'${field}' must be a valid hex or base64 string`);
}

function digest(salt: Buffer, share: Uint8Array): string {
  return createHash('sha256').update(salt).update(share).digest('hex');
}

/**
 * Distinct accepted shares collected toward a threshold. At the threshold they are combined and
 * forgotten, whatever happens next; `clear` forgets them earlier (cancel, seal).
 */
export class ShareQuorum {
  private parts: Buffer[] = [];

  constructor(private readonly threshold: number) {}

  get progress(): number {
    return this.parts.length;
  }

  /** Whether this share was handed in already. */
  holds(share: Buffer): boolean {
    return this.parts.some((p) => p.length === share.length && timingSafeEqual(p, share));
  }

  /** Adds an accepted share; at the threshold returns the recovered key (the caller zeroizes it). */
  add(share: Buffer): Buffer | undefined {
    this.parts.push(share);
    if (this.parts.length < this.threshold) return undefined;
    const parts = this.parts;
    this.parts = [];
    try {
      return this.threshold === 1 ? Buffer.from(parts[0]!) : Buffer.from(combine(parts));
    } finally {
      parts.forEach(zeroize);
    }
  }

  clear(): void {
    this.parts.forEach(zeroize);
    this.parts = [];
  }
}

/** The request fields a share count and threshold came in, for the messages that name them. */
export interface ShareFields {
  readonly shares: string;
  readonly threshold: string;
}

const SECRET_FIELDS: ShareFields = { shares: 'secret_shares', threshold: 'secret_threshold' };

/** Vault's rules for shares and threshold. */
export function validateShamirConfig(shares: number, threshold: number, fields: ShareFields = SECRET_FIELDS): void {
  if (!Number.isInteger(shares) || shares < 1) throw new BadRequestError(`${fields.shares} must be at least 1`);
  if (!Number.isInteger(threshold) || threshold < 1) throw new BadRequestError(`${fields.threshold} must be at least 1`);
  if (shares > 255) throw new BadRequestError(`${fields.shares} must be at most 255`);
  if (threshold > shares) throw new BadRequestError(`${fields.threshold} cannot be larger than ${fields.shares}`);
  if (shares > 1 && threshold < 2) throw new BadRequestError(`${fields.threshold} must be greater than one for multiple shares`);
}
