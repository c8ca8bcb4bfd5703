/**
 * How the leases of secrets are stored, behind the barrier: one entry per lease under its id, so
 * the ids form the tree `sys/leases/lookup/<prefix>/` lists one level of, and an index by expiry
 * time the periodic sweep reads in order and stops at the first lease not yet due.
 */
import type { BatchOp, Storage } from '../../storage/storage.js';

/** A lease of a secret as stored. Times are Unix seconds. */
export interface SecretLeaseEntry {
  readonly leaseId: string;
  /** The mount that issued it, by UUID: a mount put at the same path later is another backend. */
  readonly mountUuid: string;
  readonly mountAccessor: string;
  /** The path that issued the secret, relative to its mount. */
  readonly path: string;
  readonly type: string;
  readonly internalData: Record<string, unknown>;
  readonly issueTime: number;
  readonly expireTime: number;
  /** 0 until renewed. */
  readonly lastRenewalTime: number;
  readonly ttl: number;
  readonly maxTtl: number;
  readonly renewable: boolean;
  /**
   * The salted hash of the service token it was issued under (a batch token's parent): revoking
   * that token revokes the lease, as in Vault. Absent for a request without one.
   */
  readonly tokenHash?: string;
  /**
   * Why the backend failed to revoke it when it expired: the lease is then irrevocable (Vault's
   * word), left for an operator's revoke or revoke-force and counted by `sys/leases/count`.
   */
  readonly revokeError?: string;
}

export const LEASE_KEYS = {
  /** One entry per lease, under its id (`pki/issue/web/<random>`). */
  idPrefix: 'sys/expire/id/',
  /**
   * `<expire time, 12 digits>-<lease id, base64url>`: sorted by time, so the sweep stops at the
   * first lease not due; the id is encoded because it holds `/`.
   */
  duePrefix: 'sys/expire/due/',
  /** `<token hash>/<lease id, base64url>`: the leases a token's revocation revokes. */
  tokenPrefix: 'sys/expire/token/',
} as const;

function tokenKey(entry: Pick<SecretLeaseEntry, 'tokenHash' | 'leaseId'>): string | undefined {
  return entry.tokenHash ? `${LEASE_KEYS.tokenPrefix}${entry.tokenHash}/${Buffer.from(entry.leaseId).toString('base64url')}` : undefined;
}

export function dueKey(entry: Pick<SecretLeaseEntry, 'expireTime' | 'leaseId'>): string {
  return `${LEASE_KEYS.duePrefix}${String(entry.expireTime).padStart(12, '0')}-${Buffer.from(entry.leaseId).toString('base64url')}`;
}

/** The expiry time and lease id a due key names; undefined for a key that is not one. */
export function parseDueKey(name: string): { readonly time: number; readonly leaseId: string } | undefined {
  const dash = name.indexOf('-');
  if (dash !== 12) return undefined;
  return { time: Number(name.slice(0, dash)), leaseId: Buffer.from(name.slice(dash + 1), 'base64url').toString('utf8') };
}

export class LeaseRecords {
  constructor(private readonly storage: Storage) {}

  async read(leaseId: string): Promise<SecretLeaseEntry | undefined> {
    if (!validLeaseId(leaseId)) return undefined;
    const raw = await this.storage.get(LEASE_KEYS.idPrefix + leaseId);
    return raw ? (JSON.parse(Buffer.from(raw).toString('utf8')) as SecretLeaseEntry) : undefined;
  }

  /** Writes the entry and its due index at once; `previous` is the entry it replaces, whose index goes. */
  async write(entry: SecretLeaseEntry, previous?: SecretLeaseEntry): Promise<void> {
    const ops: BatchOp[] = [];
    if (previous && dueKey(previous) !== dueKey(entry)) ops.push({ type: 'delete', key: dueKey(previous) });
    ops.push({ type: 'put', key: LEASE_KEYS.idPrefix + entry.leaseId, value: Buffer.from(JSON.stringify(entry)) });
    // An irrevocable lease is left out of the sweep: it failed once and waits for an operator.
    if (entry.revokeError === undefined) ops.push({ type: 'put', key: dueKey(entry), value: new Uint8Array(0) });
    else ops.push({ type: 'delete', key: dueKey(entry) });
    const byToken = tokenKey(entry);
    if (byToken && !previous) ops.push({ type: 'put', key: byToken, value: new Uint8Array(0) });
    await this.storage.batch(ops);
  }

  async remove(entry: SecretLeaseEntry): Promise<void> {
    const byToken = tokenKey(entry);
    await this.storage.batch([
      { type: 'delete', key: LEASE_KEYS.idPrefix + entry.leaseId },
      { type: 'delete', key: dueKey(entry) },
      ...(byToken ? [{ type: 'delete' as const, key: byToken }] : []),
    ]);
  }

  /** The ids of the leases issued under the token with this hash. */
  async idsOfToken(tokenHash: string): Promise<string[]> {
    if (!/^[0-9a-f]{64}$/.test(tokenHash)) return [];
    const names = await this.storage.list(`${LEASE_KEYS.tokenPrefix}${tokenHash}/`);
    return names.map((name) => Buffer.from(name, 'base64url').toString('utf8'));
  }

  /** Drops the index entry of a lease that is gone already. */
  dropTokenKey(tokenHash: string, leaseId: string): Promise<void> {
    return this.storage.delete(tokenKey({ tokenHash, leaseId })!);
  }

  /** The names one level under `prefix` (empty, or ending in `/`): leases, and folders with a trailing `/`. */
  list(prefix: string): Promise<string[]> {
    return this.storage.list(LEASE_KEYS.idPrefix + prefix);
  }

  /** Every lease id under `prefix` (empty, or ending in `/`), depth first. */
  async *idsUnder(prefix: string): AsyncGenerator<string> {
    for (const name of await this.list(prefix)) {
      if (name.endsWith('/')) yield* this.idsUnder(prefix + name);
      else yield prefix + name;
    }
  }

  /** The due index, oldest first. */
  dueKeys(): Promise<string[]> {
    return this.storage.list(LEASE_KEYS.duePrefix);
  }

  dropDueKey(name: string): Promise<void> {
    return this.storage.delete(LEASE_KEYS.duePrefix + name);
  }
}

/**
 * A lease id names a storage key: no empty, `.` or `..` segment, no leading or trailing `/`, so
 * an id a client sends can never reach outside the lease tree.
 */
function validLeaseId(leaseId: string): boolean {
  return leaseId.length > 0 && leaseId.split('/').every((segment) => segment !== '' && segment !== '.' && segment !== '..');
}
