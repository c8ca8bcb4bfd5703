/**
 * Root token generation (`sys/generate-root-token/*`, and Vault's unauthenticated
 * `sys/generate-root/*`): a threshold of key shares mints a new root token, handed back
 * encoded with a one-time password or encrypted to a PGP key, so the shares' holders who submit the
 * last share never see it in clear. The shares are the unseal key's with a Shamir seal and the
 * recovery key's with an auto seal, as in Vault (https://developer.hashicorp.com/vault/docs/concepts/seal#recovery-key).
 *
 * One attempt at a time, held in memory on the node that runs it; both endpoint families share it,
 * and sealing forgets it. The attempt's nonce is what lets a caller add to it or cancel it; a
 * holder of a current share may cancel it too, so that whoever started an attempt without a token
 * cannot keep the share holders out, and an attempt nobody adds to expires.
 */
import { randomUUID } from 'node:crypto';
import { BadRequestError } from '../errors.js';
import { zeroize } from '../../storage/aead.js';
import type { Clock } from '../clock.js';
import { encodeToken, generateOtp, OTP_LENGTH, requireUsableOtp } from './otp.js';
import { encryptTo, readRecipient, type PgpRecipient } from './pgp.js';
import { requireNonce } from './nonce.js';
import { acceptShare, ShareQuorum } from './shares.js';
import { SerialQueue } from './serial.js';
import type { SealKeys } from './seal-keys.js';

/**
 * How long an attempt lives after it started or last took a share. Long enough for the holders to
 * hand in their shares one after another on a call; short enough that an attempt abandoned, or
 * started by someone who will never finish it, frees the endpoints within the hour even when
 * nobody cancels it.
 */
export const ATTEMPT_LIFETIME_MS = 60 * 60 * 1000;

const NO_RECOVERY_SHARES =
  'there are no recovery key shares to authorize root generation: the store was initialized with recovery_shares = 0; ' +
  'create them first with a token (sys/rekey-recovery-key/init)';

/** Mints and (if encoding fails) revokes root tokens; the host's token store. */
export interface RootTokens {
  create(): Promise<string>;
  revoke(token: string): Promise<void>;
}

export interface RootGenerationStatus {
  readonly started: boolean;
  readonly nonce: string;
  readonly progress: number;
  readonly required: number;
  readonly pgpFingerprint: string;
  readonly otpLength: number;
}

/** After one share: the progress, and at the threshold the encoded (or encrypted) new root token. */
export interface RootGenerationProgress {
  readonly progress: number;
  readonly required: number;
  readonly complete: boolean;
  /** base64 of token XOR OTP, or of the PGP message holding the token; '' until complete. */
  readonly encodedToken: string;
  readonly pgpFingerprint: string;
}

/**
 * What lets a caller cancel an attempt besides its token: the attempt's nonce, or one of the current
 * key shares (its holder is one of the people the attempt is for).
 */
export type CancelProof = { readonly nonce: string } | { readonly share: string };

interface Attempt {
  readonly nonce: string;
  readonly otp: string;
  readonly recipient: PgpRecipient | undefined;
  readonly quorum: ShareQuorum;
  /** Epoch milliseconds; moved on by every share taken. */
  expiresAt: number;
}

export class RootGeneration {
  private attempt: Attempt | undefined;
  private readonly queue = new SerialQueue();

  constructor(
    private readonly seal: SealKeys,
    private readonly tokens: RootTokens,
    private readonly clock: Clock,
  ) {}

  async status(): Promise<RootGenerationStatus> {
    const { secret_threshold: required } = await this.seal.config();
    const attempt = this.current();
    return {
      started: attempt !== undefined,
      nonce: attempt?.nonce ?? '',
      progress: attempt?.quorum.progress ?? 0,
      required,
      pgpFingerprint: attempt?.recipient?.fingerprint ?? '',
      otpLength: OTP_LENGTH,
    };
  }

  /**
   * Starts an attempt. With neither an OTP nor a PGP key an OTP is generated and returned (only
   * here, once); a caller's OTP is not echoed. The options and the state are checked before the
   * PGP key is parsed.
   */
  start(options: { readonly otp?: string; readonly pgpKey?: string }): Promise<{ nonce: string; generatedOtp: string }> {
    return this.queue.run(async () => {
      if (options.otp && options.pgpKey) throw new BadRequestError('give either otp or pgp_key, not both');
      if (options.otp !== undefined) requireUsableOtp(options.otp);
      const config = await this.seal.config();
      // OpenBao's auto seal initialized with recovery_shares = 0: nobody holds a share yet.
      if (config.secret_shares === 0) throw new BadRequestError(NO_RECOVERY_SHARES);
      if (this.current()) throw new BadRequestError('root generation already in progress');
      const recipient = options.pgpKey ? await readRecipient(options.pgpKey, 'pgp_key') : undefined;
      const generatedOtp = options.otp === undefined && recipient === undefined ? generateOtp() : '';
      const nonce = randomUUID();
      this.attempt = {
        nonce,
        otp: options.otp ?? generatedOtp,
        recipient,
        quorum: new ShareQuorum(config.secret_threshold),
        expiresAt: this.lifetimeFromNow(),
      };
      return { nonce, generatedOtp };
    });
  }

  /** One key share for the attempt the nonce names; the last one mints the token. */
  update(encodedKey: string, nonce: string): Promise<RootGenerationProgress> {
    return this.queue.run(async () => {
      const attempt = this.current();
      if (!attempt) throw new BadRequestError('no root generation in progress');
      requireNonce(attempt.nonce, nonce);
      const config = await this.seal.config();
      const share = acceptShare(config, encodedKey);
      if (attempt.quorum.holds(share)) throw new BadRequestError('given key has already been provided during this generation operation');
      const required = config.secret_threshold;
      const pgpFingerprint = attempt.recipient?.fingerprint ?? '';
      attempt.expiresAt = this.lifetimeFromNow();
      const unsealKey = attempt.quorum.add(share);
      if (!unsealKey) return { progress: attempt.quorum.progress, required, complete: false, encodedToken: '', pgpFingerprint };
      try {
        zeroize(await this.seal.open(unsealKey));
      } finally {
        zeroize(unsealKey);
      }
      this.attempt = undefined;
      return { progress: required, required, complete: true, encodedToken: await this.mint(attempt), pgpFingerprint };
    });
  }

  /**
   * Cancels the attempt (none: nothing to do). A caller its endpoint authorized already (a token
   * whose policy grants it) passes no proof; a nonce, when given, must be the attempt's; a share
   * must be one of the current ones (checked in constant time, as every share is).
   */
  cancel(proof?: CancelProof): Promise<void> {
    return this.queue.run(async () => {
      const attempt = this.current();
      if (!attempt) return;
      if (proof && 'nonce' in proof) requireNonce(attempt.nonce, proof.nonce);
      if (proof && 'share' in proof) zeroize(acceptShare(await this.seal.config(), proof.share));
      this.forget();
    });
  }

  /** Drops the attempt at once (on seal, outside the queue). */
  forget(): void {
    this.attempt?.quorum.clear();
    this.attempt = undefined;
  }

  /** The attempt under way; one past its lifetime is forgotten here, its shares with it. */
  private current(): Attempt | undefined {
    if (this.attempt && this.clock.now().getTime() >= this.attempt.expiresAt) this.forget();
    return this.attempt;
  }

  private lifetimeFromNow(): number {
    return this.clock.now().getTime() + ATTEMPT_LIFETIME_MS;
  }

  private async mint(attempt: Attempt): Promise<string> {
    const token = await this.tokens.create();
    try {
      if (attempt.recipient) return (await encryptTo(attempt.recipient, Buffer.from(token, 'utf8'))).toString('base64');
      return encodeToken(token, attempt.otp);
    } catch (err) {
      // Nobody could read the token: it must not stay valid.
      await this.tokens.revoke(token);
      throw err;
    }
  }
}
