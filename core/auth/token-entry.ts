/** What a token is: its stored entry, as lookups return it, and how a new one's id is made. */
import { randomInt } from 'node:crypto';

export type TokenType = 'service' | 'batch';

/** What a login recorded about itself, so renewal can ask the auth method again. */
export interface TokenAuthOrigin {
  readonly mountAccessor: string;
  readonly mountPath: string;
  readonly internalData?: Readonly<Record<string, unknown>>;
  readonly metadata?: Readonly<Record<string, string>>;
  readonly policies: readonly string[];
  readonly displayName?: string;
}

export interface TokenEntry {
  readonly accessor: string;
  /** Salted hash of the parent's id; '' for an orphan. */
  readonly parent: string;
  readonly policies: readonly string[];
  readonly path: string;
  readonly meta: Readonly<Record<string, string>> | null;
  readonly displayName: string;
  /** Uses left; 0 = unlimited. */
  readonly numUses: number;
  /** Seconds since the epoch. */
  readonly creationTime: number;
  /** The TTL the token was created (or last renewed) with, seconds; 0 = never expires. */
  readonly ttl: number;
  /** The TTL at creation, seconds. */
  readonly creationTtl: number;
  /** Seconds since the epoch; 0 = never. */
  readonly expireTime: number;
  readonly explicitMaxTtl: number;
  /** The effective maximum lifetime from creation, seconds; 0 = none (periodic and root tokens). */
  readonly maxTtl: number;
  readonly period: number;
  readonly renewable: boolean;
  readonly type: TokenType;
  readonly boundCidrs: readonly string[];
  readonly entityId: string;
  readonly role: string;
  readonly lastRenewalTime: number;
  readonly origin?: TokenAuthOrigin;
}

/** A live token as lookups return it: the entry and the handle to act on it. */
export interface ResolvedToken {
  readonly id: string;
  /** Salted hash of the id ('' for batch tokens, which have none). */
  readonly hash: string;
  readonly entry: TokenEntry;
}

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** `length` random base62 characters (ids and accessors). */
export function base62(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += BASE62[randomInt(BASE62.length)];
  return out;
}

/** `hvs.` + 24 base62 characters (≈143 bits), the service-token shape Vault clients expect. */
export function generateServiceTokenId(): string {
  return `hvs.${base62(24)}`;
}
