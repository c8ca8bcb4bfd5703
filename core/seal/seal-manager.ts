/**
 * Init, unseal and seal (Shamir). The key hierarchy (docs/architecture.md): a random 32-byte unseal key,
 * split into shares and never stored; the root key, stored encrypted under the unseal key; the
 * barrier's keyring, encrypted under the root key.
 */
import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { BadRequestError, IntegrityError } from '../errors.js';
import type { Barrier } from '../../storage/barrier.js';
import type { Storage } from '../../storage/storage.js';
import { gcmOpen, gcmSeal, zeroize } from '../../storage/aead.js';
import { combine, split } from './shamir.js';

/** Physical (outside the barrier) storage keys. */
const KEYS = {
  // Plaintext seal configuration: readable while sealed (seal-status needs t and n). Its presence
  // is what "initialized" means, so it is written last during init.
  sealConfig: 'core/seal-config',
  // The root key, AES-256-GCM-encrypted under the unseal key (AAD = this path).
  rootKeyUnderUnsealKey: 'core/hsm/barrier-unseal-keys',
} as const;

interface SealConfig {
  type: 'shamir';
  secret_shares: number;
  secret_threshold: number;
  /**
   * SHA-256 over (salt ‖ share) of each share handed out at init. Lets a wrong share be refused on
   * its own, instead of silently counting toward the threshold and failing the whole attempt.
   * Shares are 33 random bytes, so the digests reveal nothing usable.
   */
  share_digests: string[];
  share_salt: string;
}

export interface SealStatus {
  type: 'shamir';
  initialized: boolean;
  sealed: boolean;
  t: number;
  n: number;
  progress: number;
  nonce: string;
}

export interface InitResult {
  /** The shares (or, with one share, the unseal key itself). */
  readonly keys: Buffer[];
  readonly rootToken: string;
}

export interface SealHooks {
  /** After the barrier unseals: load mounts, policies, tokens. Called with the barrier unsealed. */
  afterUnseal(): Promise<void>;
  /** Before the barrier seals: tear backends down. */
  beforeSeal(): Promise<void>;
  /** During init, with the barrier briefly unsealed: mint the root token. */
  createRootToken(): Promise<string>;
}

export class SealManager {
  private parts: Buffer[] = [];
  private nonce = '';
  private config: SealConfig | undefined;
  private busy: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly physical: Storage,
    private readonly barrier: Barrier,
    private readonly hooks: SealHooks,
    /** A lock shared by every node on the store (HA); init runs under it. */
    private readonly clusterLock?: <T>(name: string, work: () => Promise<T>) => Promise<T>,
  ) {}

  private async loadConfig(): Promise<SealConfig | undefined> {
    if (this.config) return this.config;
    const raw = await this.physical.get(KEYS.sealConfig);
    if (!raw) return undefined;
    this.config = JSON.parse(Buffer.from(raw).toString('utf8')) as SealConfig;
    return this.config;
  }

  async isInitialized(): Promise<boolean> {
    return (await this.loadConfig()) !== undefined;
  }

  async status(): Promise<SealStatus> {
    const config = await this.loadConfig();
    return {
      type: 'shamir',
      initialized: config !== undefined,
      sealed: this.barrier.sealed,
      t: config?.secret_threshold ?? 0,
      n: config?.secret_shares ?? 0,
      progress: this.barrier.sealed ? this.parts.length : 0,
      nonce: this.barrier.sealed ? this.nonce : '',
    };
  }

  /** `sys/init`: creates the key hierarchy and the root token; leaves the server sealed. */
  async initialize(shares: number, threshold: number): Promise<InitResult> {
    validateShamirConfig(shares, threshold);
    if (this.clusterLock) return this.clusterLock('init', () => this.initializeNow(shares, threshold));
    return this.initializeNow(shares, threshold);
  }

  private initializeNow(shares: number, threshold: number): Promise<InitResult> {
    return this.exclusive(async () => {
      if (await this.isInitialized()) throw new BadRequestError('Vault is already initialized');
      // A crash during an earlier init may have left a keyring without a seal config: start over.
      if (await this.barrier.isInitialized()) await this.physical.delete('core/keyring');

      const unsealKey = randomBytes(32);
      const rootKey = randomBytes(32);
      try {
        await this.barrier.initialize(rootKey);
        await this.physical.put(KEYS.rootKeyUnderUnsealKey, gcmSeal(unsealKey, rootKey, aad(KEYS.rootKeyUnderUnsealKey)));
        await this.barrier.unseal(rootKey);
        let rootToken: string;
        try {
          rootToken = await this.hooks.createRootToken();
        } finally {
          this.barrier.seal();
        }
        const keys = shares === 1 ? [Buffer.from(unsealKey)] : split(unsealKey, shares, threshold).map((s) => Buffer.from(s));
        const salt = randomBytes(16);
        const config: SealConfig = {
          type: 'shamir',
          secret_shares: shares,
          secret_threshold: threshold,
          share_digests: keys.map((k) => digest(salt, k)),
          share_salt: salt.toString('hex'),
        };
        await this.physical.put(KEYS.sealConfig, Buffer.from(JSON.stringify(config), 'utf8'));
        this.config = config;
        return { keys, rootToken };
      } finally {
        zeroize(unsealKey);
        zeroize(rootKey);
      }
    });
  }

  /** `sys/unseal` with `reset`: forgets the shares collected so far. */
  reset(): void {
    this.clearParts();
  }

  /**
   * `sys/unseal`: one share (hex or base64). A malformed or unknown share is refused with 400
   * and progress unchanged; a repeated share is ignored. At the threshold the shares are combined
   * (and forgotten, whatever the outcome) and the barrier unsealed.
   */
  async submitShare(encoded: string): Promise<SealStatus> {
    return this.exclusive(async () => {
      const config = await this.loadConfig();
      if (!config) throw new BadRequestError('Vault is not initialized');
      if (!this.barrier.sealed) return this.status();
      const share = decodeShare(encoded);
      const expectedLength = config.secret_shares === 1 ? 32 : 33;
      if (share.length !== expectedLength) {
        throw new BadRequestError(`'key' must be ${expectedLength} bytes (hex or base64), got ${share.length}`);
      }
      const salt = Buffer.from(config.share_salt, 'hex');
      const mine = Buffer.from(digest(salt, share), 'hex');
      const known = config.share_digests.some((d) => {
        const theirs = Buffer.from(d, 'hex');
        return theirs.length === mine.length && timingSafeEqual(theirs, mine);
      });
      if (!known) throw new BadRequestError('unseal failed, invalid key share');
      if (this.parts.some((p) => p.equals(share))) return this.status();
      if (this.parts.length === 0) this.nonce = randomUUID();
      this.parts.push(share);
      if (this.parts.length < config.secret_threshold) return this.status();

      const parts = this.parts;
      this.parts = [];
      this.nonce = '';
      let unsealKey: Buffer | undefined;
      try {
        unsealKey = config.secret_threshold === 1 ? Buffer.from(parts[0]!) : Buffer.from(combine(parts));
        await this.unsealWith(unsealKey);
      } finally {
        parts.forEach(zeroize);
        zeroize(unsealKey);
      }
      return this.status();
    });
  }

  /** Unseals with the whole unseal key (dev mode keeps it beside its data). */
  async unsealWithKey(unsealKey: Buffer): Promise<void> {
    await this.exclusive(() => this.unsealWith(unsealKey));
  }

  private async unsealWith(unsealKey: Buffer): Promise<void> {
    const sealed = await this.physical.get(KEYS.rootKeyUnderUnsealKey);
    if (!sealed) throw new BadRequestError('Vault is not initialized');
    let rootKey: Buffer;
    try {
      rootKey = gcmOpen(unsealKey, sealed, aad(KEYS.rootKeyUnderUnsealKey));
    } catch (err) {
      if (err instanceof IntegrityError) throw new BadRequestError('unseal failed, invalid key');
      throw err;
    }
    try {
      await this.barrier.unseal(rootKey);
    } finally {
      zeroize(rootKey);
    }
    try {
      await this.hooks.afterUnseal();
    } catch (err) {
      this.barrier.seal();
      throw err;
    }
  }

  async seal(): Promise<void> {
    await this.exclusive(async () => {
      if (this.barrier.sealed) return;
      try {
        await this.hooks.beforeSeal();
      } finally {
        this.barrier.seal();
        this.clearParts();
      }
    });
  }

  private clearParts(): void {
    this.parts.forEach(zeroize);
    this.parts = [];
    this.nonce = '';
  }

  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.busy.then(work, work);
    this.busy = run.catch(() => undefined);
    return run;
  }
}

/** Vault's rules for shares and threshold. */
export function validateShamirConfig(shares: number, threshold: number): void {
  if (!Number.isInteger(shares) || shares < 1) throw new BadRequestError('secret_shares must be at least 1');
  if (!Number.isInteger(threshold) || threshold < 1) throw new BadRequestError('secret_threshold must be at least 1');
  if (shares > 255) throw new BadRequestError('secret_shares must be at most 255');
  if (threshold > shares) throw new BadRequestError('secret_threshold cannot be larger than secret_shares');
  if (shares > 1 && threshold < 2) throw new BadRequestError('secret_threshold must be greater than one for multiple shares');
}

/** Hex first, then standard base64, as Vault decodes unseal keys. */
function decodeShare(encoded: string): Buffer {
  const text = encoded.trim();
  if (/^[0-9a-fA-F]+$/.test(text) && text.length % 2 === 0) {
    const hex = Buffer.from(text, 'hex');
    if (hex.length >= 16 && hex.length <= 33) return hex;
  }
  if (/^[A-Za-z0-9+/]+={0,2}$/.test(text) && text.length % 4 === 0) {
    const b64 = Buffer.from(text, 'base64');
    if (b64.length >= 16 && b64.length <= 33) return b64;
  }
  throw new BadRequestError("'key' must be a valid hex or base64 string");
}

function digest(salt: Buffer, share: Uint8Array): string {
  return createHash('sha256').update(salt).update(share).digest('hex');
}

function aad(path: string): Buffer {
  return Buffer.from(path, 'utf8');
}
