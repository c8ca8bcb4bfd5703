/**
 * The identity token issuer's records (https://developer.hashicorp.com/vault/api-docs/secret/identity/tokens):
 * its configuration, its named signing keys and its roles, behind the barrier. A named key holds
 * its current key pair and the public halves of the pairs it rotated out, each until its
 * verification TTL ends, so tokens signed before a rotation still verify.
 */
import { randomBytes } from 'node:crypto';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import type { Storage } from '../../../../storage/storage.js';
import type { Clock } from '../../../clock.js';
import { KeyedLock } from '../../../../sdk/keyed-lock.js';
import { decode, encode } from '../records.js';

const KEYS = {
  config: 'sys/identity/oidc/config',
  key: (name: string) => `sys/identity/oidc/key/${name}`,
  keyPrefix: 'sys/identity/oidc/key/',
  role: (name: string) => `sys/identity/oidc/role/${name}`,
  rolePrefix: 'sys/identity/oidc/role/',
} as const;

/** The signing algorithms Vault offers for named keys. */
export const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'ES512', 'EdDSA'] as const;
export type Algorithm = (typeof ALGORITHMS)[number];

export interface OidcConfig {
  /** '' means the server's api_addr. */
  readonly issuer: string;
}

export interface PublicKey {
  readonly kid: string;
  readonly jwk: JWK;
  /** When a rotated-out key leaves the key set (ISO time); absent for the current key. */
  readonly expires_at?: string;
}

export interface NamedKey {
  readonly name: string;
  readonly algorithm: Algorithm;
  readonly rotation_period: number;
  readonly verification_ttl: number;
  readonly allowed_client_ids: readonly string[];
  readonly next_rotation: string;
  readonly current: { readonly kid: string; readonly private: JWK; readonly public: JWK };
  readonly retired: readonly PublicKey[];
}

export interface OidcRole {
  readonly name: string;
  readonly key: string;
  readonly template: string;
  readonly client_id: string;
  readonly ttl: number;
}

/** A fresh key pair for a named key, with a random key id. */
export async function newKeyPair(algorithm: Algorithm): Promise<NamedKey['current']> {
  const pair = await generateKeyPair(algorithm, { extractable: true, ...(algorithm === 'EdDSA' ? { crv: 'Ed25519' } : {}) });
  const kid = randomBytes(16).toString('hex');
  const meta = { kid, alg: algorithm, use: 'sig' };
  return { kid, private: { ...(await exportJWK(pair.privateKey)), ...meta }, public: { ...(await exportJWK(pair.publicKey)), ...meta } };
}

/** A role's client id: the `aud` of its tokens, made once when the role is created. */
export function newClientId(): string {
  return randomBytes(18).toString('base64url');
}

export class OidcStore {
  /** Changes to one key or role run alone (read, check, write). */
  readonly locks = new KeyedLock();

  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
  ) {}

  now(): Date {
    return this.clock.now();
  }

  async config(): Promise<OidcConfig> {
    return (await this.read<OidcConfig>(KEYS.config)) ?? { issuer: '' };
  }

  writeConfig(config: OidcConfig): Promise<void> {
    return this.storage.put(KEYS.config, encode(config));
  }

  key(name: string): Promise<NamedKey | undefined> {
    return this.read<NamedKey>(KEYS.key(name));
  }

  writeKey(key: NamedKey): Promise<void> {
    return this.storage.put(KEYS.key(key.name), encode(key));
  }

  deleteKey(name: string): Promise<void> {
    return this.storage.delete(KEYS.key(name));
  }

  listKeys(): Promise<string[]> {
    return this.storage.list(KEYS.keyPrefix);
  }

  role(name: string): Promise<OidcRole | undefined> {
    return this.read<OidcRole>(KEYS.role(name));
  }

  writeRole(role: OidcRole): Promise<void> {
    return this.storage.put(KEYS.role(role.name), encode(role));
  }

  deleteRole(name: string): Promise<void> {
    return this.storage.delete(KEYS.role(name));
  }

  listRoles(): Promise<string[]> {
    return this.storage.list(KEYS.rolePrefix);
  }

  /**
   * Moves the key's current pair to the retired ones (verifiable for `verificationTtl` more
   * seconds) and makes a new one; drops retired pairs whose time is up.
   */
  async rotate(name: string, verificationTtl?: number): Promise<NamedKey | undefined> {
    return this.locks.run(`key/${name}`, async () => {
      const key = await this.key(name);
      if (!key) return undefined;
      const now = this.now();
      const ttl = verificationTtl ?? key.verification_ttl;
      const retiring: PublicKey = { kid: key.current.kid, jwk: key.current.public, expires_at: new Date(now.getTime() + ttl * 1000).toISOString() };
      const rotated: NamedKey = {
        ...key,
        verification_ttl: ttl,
        current: await newKeyPair(key.algorithm),
        retired: [...liveRetired(key, now), retiring],
        next_rotation: new Date(now.getTime() + key.rotation_period * 1000).toISOString(),
      };
      await this.writeKey(rotated);
      return rotated;
    });
  }

  /** Rotates every key whose rotation period has passed, and drops expired public keys (periodic work). */
  async rotateDue(): Promise<void> {
    const now = this.now();
    for (const name of await this.listKeys()) {
      const key = await this.key(name);
      if (!key) continue;
      if (new Date(key.next_rotation) <= now) await this.rotate(name);
      else if (liveRetired(key, now).length !== key.retired.length) {
        await this.locks.run(`key/${name}`, async () => {
          const current = await this.key(name);
          if (current) await this.writeKey({ ...current, retired: liveRetired(current, this.now()) });
        });
      }
    }
  }

  /** Every public key a token may be verified with now: each named key's current one and those still in their verification TTL. */
  async publicKeys(): Promise<JWK[]> {
    const now = this.now();
    const keys: JWK[] = [];
    for (const name of await this.listKeys()) {
      const key = await this.key(name);
      if (key) keys.push(key.current.public, ...liveRetired(key, now).map((k) => k.jwk));
    }
    return keys;
  }

  private async read<T>(key: string): Promise<T | undefined> {
    const raw = await this.storage.get(key);
    return raw ? decode<T>(raw) : undefined;
  }
}

function liveRetired(key: NamedKey, now: Date): PublicKey[] {
  return key.retired.filter((k) => k.expires_at !== undefined && new Date(k.expires_at) > now);
}
