/**
 * Root token generation (`sys/generate-root-token/*`, and Vault's unauthenticated
 * `sys/generate-root/*`): a threshold of unseal key shares mints a new root token, handed back
 * encoded with a one-time password or encrypted to a PGP key, so the shares' holders who submit the
 * last share never see it in clear.
 *
 * One attempt at a time, held in memory on the node that runs it; both endpoint families share it,
 * and sealing forgets it. The attempt's nonce is what lets a caller cancel it or add to it.
 */
import { randomUUID } from 'node:crypto';
import { BadRequestError } from '../errors.js';
import { zeroize } from '../../storage/aead.js';
import { encodeToken, generateOtp, OTP_LENGTH, requireUsableOtp } from './otp.js';
import { encryptTo, type PgpRecipient } from './pgp.js';
import { requireNonce } from './nonce.js';
import { acceptShare, ShareQuorum } from './shares.js';
import { SerialQueue } from './serial.js';
import type { SealKeys } from './seal-manager.js';

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

interface Attempt {
  readonly nonce: string;
  readonly otp: string;
  readonly recipient: PgpRecipient | undefined;
  readonly quorum: ShareQuorum;
}

export class RootGeneration {
  private attempt: Attempt | undefined;
  private readonly queue = new SerialQueue();

  constructor(
    private readonly seal: SealKeys,
    private readonly tokens: RootTokens,
  ) {}

  async status(): Promise<RootGenerationStatus> {
    const { secret_threshold: required } = await this.seal.config();
    const attempt = this.attempt;
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
   * here, once); a caller's OTP is not echoed.
   */
  start(options: { readonly otp?: string; readonly recipient?: PgpRecipient }): Promise<{ nonce: string; generatedOtp: string }> {
    return this.queue.run(async () => {
      if (options.otp && options.recipient) throw new BadRequestError('give either otp or pgp_key, not both');
      if (options.otp !== undefined) requireUsableOtp(options.otp);
      const config = await this.seal.config();
      if (this.attempt) throw new BadRequestError('root generation already in progress');
      const generatedOtp = options.otp === undefined && options.recipient === undefined ? generateOtp() : '';
      const nonce = randomUUID();
      this.attempt = { nonce, otp: options.otp ?? generatedOtp, recipient: options.recipient, quorum: new ShareQuorum(config.secret_threshold) };
      return { nonce, generatedOtp };
    });
  }

  /** One unseal key share for the attempt the nonce names; the last one mints the token. */
  update(encodedKey: string, nonce: string): Promise<RootGenerationProgress> {
    return this.queue.run(async () => {
      const attempt = this.attempt;
      if (!attempt) throw new BadRequestError('no root generation in progress');
      requireNonce(attempt.nonce, nonce);
      const config = await this.seal.config();
      const share = acceptShare(config, encodedKey);
      if (attempt.quorum.holds(share)) throw new BadRequestError('given key has already been provided during this generation operation');
      const required = config.secret_threshold;
      const pgpFingerprint = attempt.recipient?.fingerprint ?? '';
      const unsealKey = attempt.quorum.add(share);
      if (!unsealKey) return { progress: attempt.quorum.progress, required, complete: false, encodedToken: '', pgpFingerprint };
      try {
        zeroize(await this.seal.openRootKey(unsealKey));
      } finally {
        zeroize(unsealKey);
      }
      this.attempt = undefined;
      return { progress: required, required, complete: true, encodedToken: await this.mint(attempt), pgpFingerprint };
    });
  }

  /**
   * Cancels the attempt. `nonce` undefined means the caller is authorized by its token (the
   * authenticated family); otherwise it must be the attempt's.
   */
  cancel(nonce: string | undefined): Promise<void> {
    return this.queue.run(async () => {
      if (this.attempt && nonce !== undefined) requireNonce(this.attempt.nonce, nonce);
      this.forget();
    });
  }

  /** Drops the attempt at once (on seal, outside the queue). */
  forget(): void {
    this.attempt?.quorum.clear();
    this.attempt = undefined;
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
