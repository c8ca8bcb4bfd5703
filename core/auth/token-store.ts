/**
 * Tokens, persisted by salted hash behind the barrier: the token itself is never stored.
 * This holds what the host needs today (the root token from init, lookup for every request); the
 * full token store (create, renew, revoke, roles, batch tokens) grows here.
 */
import { createHash, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import type { Storage } from '../../storage/storage.js';
import type { Clock } from '../clock.js';

/** Storage keys (behind the barrier). */
const KEYS = {
  // Per-server random salt for token hashes, so a stolen storage dump cannot be matched against tokens.
  salt: 'sys/token/salt',
  // One entry per live token, keyed by the salted hash of the token id.
  id: (hash: string) => `sys/token/id/${hash}`,
  // Accessor → token hash, so a token can be looked up and revoked by accessor.
  accessor: (accessor: string) => `sys/token/accessor/${accessor}`,
} as const;

export interface TokenEntry {
  readonly accessor: string;
  readonly policies: readonly string[];
  readonly displayName: string;
  readonly meta: Readonly<Record<string, string>>;
  /** Seconds since the epoch. */
  readonly creationTime: number;
  /** Seconds; 0 = never expires. */
  readonly ttl: number;
  readonly path: string;
}

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** `hvs.` + 24 base62 characters (≈143 bits), the service-token shape clients expect. */
export function generateServiceTokenId(): string {
  let body = '';
  for (let i = 0; i < 24; i++) body += BASE62[randomInt(BASE62.length)];
  return `hvs.${body}`;
}

function generateAccessor(): string {
  let body = '';
  for (let i = 0; i < 24; i++) body += BASE62[randomInt(BASE62.length)];
  return body;
}

export class TokenStore {
  private salt: Buffer | undefined;

  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
  ) {}

  /** Forgets cached state (on seal). */
  reset(): void {
    this.salt = undefined;
  }

  private async saltBytes(): Promise<Buffer> {
    if (this.salt) return this.salt;
    const stored = await this.storage.get(KEYS.salt);
    if (stored) {
      this.salt = Buffer.from(stored);
    } else {
      this.salt = randomBytes(32);
      await this.storage.put(KEYS.salt, this.salt);
    }
    return this.salt;
  }

  private async hashOf(token: string): Promise<string> {
    return createHash('sha256').update(await this.saltBytes()).update(token, 'utf8').digest('hex');
  }

  /** Mints the root token (init, dev mode): policies ["root"], never expires. */
  async createRootToken(): Promise<string> {
    const id = generateServiceTokenId();
    const entry: TokenEntry = {
      accessor: generateAccessor(),
      policies: ['root'],
      displayName: 'root',
      meta: {},
      creationTime: Math.floor(this.clock.now().getTime() / 1000),
      ttl: 0,
      path: 'auth/token/root',
    };
    const hash = await this.hashOf(id);
    await this.storage.batch([
      { type: 'put', key: KEYS.id(hash), value: Buffer.from(JSON.stringify({ ...entry, hash })) },
      { type: 'put', key: KEYS.accessor(entry.accessor), value: Buffer.from(hash) },
    ]);
    return id;
  }

  /** The entry of a live token, or undefined. Comparison of the stored hash is constant-time. */
  async lookup(token: string): Promise<TokenEntry | undefined> {
    if (token.length === 0 || token.length > 512) return undefined;
    const hash = await this.hashOf(token);
    const raw = await this.storage.get(KEYS.id(hash));
    if (!raw) return undefined;
    const parsed = JSON.parse(Buffer.from(raw).toString('utf8')) as TokenEntry & { hash: string };
    const stored = Buffer.from(parsed.hash, 'hex');
    const computed = Buffer.from(hash, 'hex');
    if (stored.length !== computed.length || !timingSafeEqual(stored, computed)) return undefined;
    const { hash: _hash, ...entry } = parsed;
    return entry;
  }
}
