/**
 * Rekey (`sys/rekey/*`): a threshold of the current shares replaces the unseal key with a new one,
 * split into a new number of shares with a new threshold. The root key stays; only its wrapping
 * under the unseal key changes. With verification, the new shares must be handed back (a threshold
 * of them) before they take effect, so shares lost on the way out never lock the server.
 *
 * The recovery key of an auto seal is rekeyed the same way (`sys/rekey-recovery-key/*`, over
 * recovery.ts); when it has no shares yet (OpenBao's recovery_shares = 0), starting the rekey
 * answers the new shares at once, since there is nobody to ask.
 *
 * One rekey at a time per key, held in memory on the node that runs it; sealing forgets it.
 */
import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { BadRequestError } from '../errors.js';
import { zeroize } from '../../storage/aead.js';
import { encryptShares, readRecipients, type PgpRecipient } from './pgp.js';
import { acceptShare, ShareQuorum, splitUnsealKey, type ShareScheme } from './shares.js';
import { SerialQueue } from './serial.js';
import { requireNonce } from './nonce.js';
import type { KeyBackup, SealKeys } from './seal-keys.js';

export interface RekeyRequest {
  readonly shares: number;
  readonly threshold: number;
  /** One OpenPGP public key (base64 or armored) per new share, in order; empty for plain shares. */
  readonly pgpKeys: readonly string[];
  /** Keep the PGP-encrypted shares in storage (needs pgpKeys). */
  readonly backup: boolean;
  readonly requireVerification: boolean;
}

/** `GET sys/rekey/init`. */
export interface RekeyStatus {
  readonly started: boolean;
  readonly nonce: string;
  /** The new threshold and share count (0 when no rekey is under way). */
  readonly t: number;
  readonly n: number;
  /** Current shares handed in so far. */
  readonly progress: number;
  /** Current shares needed. */
  readonly required: number;
  readonly pgpFingerprints: readonly string[] | null;
  readonly backup: boolean;
  readonly verificationRequired: boolean;
  readonly verificationNonce: string;
}

/** `GET sys/rekey/verify`. */
export interface RekeyVerifyStatus {
  readonly started: boolean;
  readonly nonce: string;
  readonly t: number;
  readonly n: number;
  readonly progress: number;
}

/** The new shares, once a threshold of the current ones came in. */
export interface RekeyResult {
  readonly nonce: string;
  /** Plain shares, or the PGP messages holding them. */
  readonly keys: readonly Buffer[];
  readonly pgpFingerprints: readonly string[] | null;
  readonly backup: boolean;
  readonly verificationRequired: boolean;
  readonly verificationNonce: string;
}

interface Verification {
  readonly nonce: string;
  readonly quorum: ShareQuorum;
}

/** New shares made and handed out, waiting to be confirmed before they replace the current ones. */
interface Pending {
  /** What the current key opened (`SealKeys.open`). */
  readonly opened: Buffer;
  readonly newKey: Buffer;
  readonly scheme: ShareScheme;
  verification: Verification;
}

interface Attempt {
  readonly nonce: string;
  readonly request: RekeyRequest;
  /** The parsed pgpKeys. */
  readonly recipients: readonly PgpRecipient[];
  readonly quorum: ShareQuorum;
  pending?: Pending;
}

export class Rekey {
  private attempt: Attempt | undefined;
  /** Changes run one at a time: two shares arriving together must not both complete the attempt. */
  private readonly queue = new SerialQueue();

  constructor(private readonly seal: SealKeys) {}

  async status(): Promise<RekeyStatus> {
    const { secret_threshold: required } = await this.seal.config();
    const attempt = this.attempt;
    if (!attempt) {
      return { started: false, nonce: '', t: 0, n: 0, progress: 0, required, pgpFingerprints: null, backup: false, verificationRequired: false, verificationNonce: '' };
    }
    const { request, recipients } = attempt;
    const pgp = recipients.length > 0;
    return {
      started: true,
      nonce: attempt.nonce,
      t: request.threshold,
      n: request.shares,
      progress: attempt.quorum.progress,
      required,
      pgpFingerprints: pgp ? recipients.map((r) => r.fingerprint) : null,
      backup: pgp && request.backup,
      verificationRequired: request.requireVerification,
      verificationNonce: attempt.pending?.verification.nonce ?? '',
    };
  }

  /**
   * `PUT sys/rekey/init`: starts a rekey with a fresh nonce. When the key has no shares yet (a
   * recovery key initialized with none), the new shares are answered at once.
   */
  start(request: RekeyRequest): Promise<RekeyResult | undefined> {
    return this.queue.run(() => this.startNow(request));
  }

  /** The state and the counts are checked before any key is parsed: parsing is the costly part. */
  private async startNow(request: RekeyRequest): Promise<RekeyResult | undefined> {
    if (request.backup && request.pgpKeys.length === 0) {
      throw new BadRequestError('cannot request a backup of the new keys without providing PGP keys for encryption');
    }
    if (request.pgpKeys.length > 0 && request.pgpKeys.length !== request.shares) {
      throw new BadRequestError(`pgp_keys must hold one key per new share: got ${request.pgpKeys.length} keys for ${request.shares} shares`);
    }
    const config = await this.seal.config();
    if (this.attempt) throw new BadRequestError('rekey already in progress');
    const recipients = await readRecipients(request.pgpKeys, 'pgp_keys');
    const attempt: Attempt = { nonce: randomUUID(), request, recipients, quorum: new ShareQuorum(config.secret_threshold) };
    this.attempt = attempt;
    if (config.secret_shares > 0) return undefined;
    try {
      return await this.issue(attempt, Buffer.alloc(0));
    } catch (err) {
      this.forget();
      throw err;
    }
  }

  /**
   * `PUT sys/rekey/update`: one current share. Below the threshold answers undefined (progress is
   * in `status`); at it, the new shares — already in effect unless verification was asked for.
   */
  update(encodedKey: string, nonce: string): Promise<RekeyResult | undefined> {
    return this.queue.run(() => this.updateNow(encodedKey, nonce));
  }

  private async updateNow(encodedKey: string, nonce: string): Promise<RekeyResult | undefined> {
    const attempt = this.attempt;
    if (!attempt) throw new BadRequestError('no rekey in progress');
    if (attempt.pending) throw new BadRequestError('rekey operation already finished; verification must be performed (sys/rekey/verify)');
    requireNonce(attempt.nonce, nonce);
    const config = await this.seal.config();
    const share = acceptShare(config, encodedKey);
    if (attempt.quorum.holds(share)) throw new BadRequestError('given key has already been provided during this rekey operation');
    const currentKey = attempt.quorum.add(share);
    if (!currentKey) return undefined;
    let opened: Buffer;
    try {
      opened = await this.seal.open(currentKey);
    } finally {
      zeroize(currentKey);
    }
    return this.issue(attempt, opened);
  }

  /**
   * Makes the new key and its shares, once the current key is proven (`opened` is what proving it
   * answered; this zeroizes it). Without verification the new key takes effect at once.
   */
  private async issue(attempt: Attempt, opened: Buffer): Promise<RekeyResult> {
    let kept: Buffer | undefined = opened;
    let newKey: Buffer | undefined;
    try {
      const { request, recipients } = attempt;
      newKey = randomBytes(32);
      const split = splitUnsealKey(newKey, request.shares, request.threshold);
      const pgp = recipients.length > 0;
      const keys = pgp ? await encryptShares(split.keys, recipients) : split.keys;
      // Only their holders' private keys open the shares from here on.
      if (pgp) split.keys.forEach(zeroize);
      const fingerprints = pgp ? recipients.map((r) => r.fingerprint) : null;
      if (pgp && request.backup) await this.seal.writeKeyBackup(backupOf(attempt.nonce, fingerprints!, keys));

      if (request.requireVerification) {
        const verification = { nonce: randomUUID(), quorum: new ShareQuorum(request.threshold) };
        attempt.pending = { opened: kept, newKey, scheme: split.scheme, verification };
        kept = undefined;
        newKey = undefined;
        return result(attempt, keys, fingerprints, verification.nonce);
      }
      await this.seal.replace(kept, newKey, split.scheme);
      this.attempt = undefined;
      return result(attempt, keys, fingerprints, '');
    } finally {
      zeroize(kept);
      zeroize(newKey);
    }
  }

  async verifyStatus(): Promise<RekeyVerifyStatus> {
    const attempt = this.attempt;
    if (!attempt) throw new BadRequestError('no rekey configuration found');
    const verification = attempt.pending?.verification;
    return {
      started: verification !== undefined,
      nonce: verification?.nonce ?? '',
      t: attempt.request.threshold,
      n: attempt.request.shares,
      progress: verification?.quorum.progress ?? 0,
    };
  }

  /**
   * `PUT sys/rekey/verify`: one new share. At the threshold the new unseal key takes effect and the
   * verification nonce is answered; below it, undefined.
   */
  verify(encodedKey: string, nonce: string): Promise<{ nonce: string } | undefined> {
    return this.queue.run(() => this.verifyNow(encodedKey, nonce));
  }

  private async verifyNow(encodedKey: string, nonce: string): Promise<{ nonce: string } | undefined> {
    const attempt = this.attempt;
    if (!attempt) throw new BadRequestError('no rekey in progress');
    const pending = attempt.pending;
    if (!pending) throw new BadRequestError('no rekey verification in progress');
    requireNonce(pending.verification.nonce, nonce);
    const share = acceptShare(pending.scheme, encodedKey);
    if (pending.verification.quorum.holds(share)) throw new BadRequestError('given key has already been provided during this verify operation');
    const recovered = pending.verification.quorum.add(share);
    if (!recovered) return undefined;
    try {
      if (recovered.length !== pending.newKey.length || !timingSafeEqual(recovered, pending.newKey)) {
        pending.verification = { nonce: randomUUID(), quorum: new ShareQuorum(attempt.request.threshold) };
        throw new BadRequestError('rekey verification failed; incorrect key shares supplied');
      }
      await this.seal.replace(pending.opened, pending.newKey, pending.scheme);
    } finally {
      zeroize(recovered);
    }
    const done = pending.verification.nonce;
    this.forget();
    return { nonce: done };
  }

  /** `DELETE sys/rekey/verify`: forgets the new shares handed back so far, under a new nonce. */
  restartVerification(): Promise<void> {
    return this.queue.run(async () => {
      const pending = this.attempt?.pending;
      if (!pending) return;
      pending.verification.quorum.clear();
      pending.verification = { nonce: randomUUID(), quorum: new ShareQuorum(this.attempt!.request.threshold) };
    });
  }

  /**
   * `DELETE sys/rekey/init`. A nonce, when given, must be the rekey's: a client that means another
   * attempt does not cancel this one. The current shares stay valid.
   */
  cancel(nonce?: string): Promise<void> {
    return this.queue.run(async () => {
      if (this.attempt && nonce !== undefined) requireNonce(this.attempt.nonce, nonce);
      this.forget();
    });
  }

  /** Drops the attempt and the keys it holds at once (on seal, outside the queue). */
  forget(): void {
    const attempt = this.attempt;
    if (!attempt) return;
    attempt.quorum.clear();
    if (attempt.pending) {
      attempt.pending.verification.quorum.clear();
      zeroize(attempt.pending.opened);
      zeroize(attempt.pending.newKey);
    }
    this.attempt = undefined;
  }
}

function result(attempt: Attempt, keys: readonly Buffer[], fingerprints: readonly string[] | null, verificationNonce: string): RekeyResult {
  return {
    nonce: attempt.nonce,
    keys,
    pgpFingerprints: fingerprints,
    backup: fingerprints !== null && attempt.request.backup,
    verificationRequired: attempt.request.requireVerification,
    verificationNonce,
  };
}

function backupOf(nonce: string, fingerprints: readonly string[], encrypted: readonly Buffer[]): KeyBackup {
  const keys: Record<string, string[]> = {};
  fingerprints.forEach((fingerprint, i) => (keys[fingerprint] ??= []).push(encrypted[i]!.toString('hex')));
  return { nonce, keys };
}
