/**
 * The leases of secrets (docs/leases.md): a secrets engine's answer that carries a secret
 * (`LogicalResponse.secret`) becomes a lease stored behind the barrier, named as Vault names it —
 * the request path and a random id, `pki/issue/web/<id>`. Renewal and revocation go through the
 * backend that issued the secret (its `renewSecret` and `revokeSecret`), found by the mount's UUID;
 * the periodic work revokes expired leases through it, once, on the active node. Nothing is cached:
 * every node reads the stored lease, so a revocation answered by the active node holds everywhere.
 */
import type { Logger } from 'pino';
import { randomUUID } from 'node:crypto';
import { BadRequestError, errorMessage } from '../errors.js';
import type { Clock } from '../clock.js';
import type { Backend } from '../framework/backend.js';
import type { LeaseInfo, LeasedSecret, SecretRequest, SecretResult } from '../framework/request.js';
import type { LiveMount, MountTable } from '../mounts/mount-table.js';
import type { Storage } from '../../storage/storage.js';
import { KeyedLock } from '../../sdk/keyed-lock.js';
import { base62, type ResolvedToken } from '../auth/token-entry.js';
import type { TokenStore } from '../auth/token-store.js';
import { LEASE_KEYS, LeaseRecords, dueKey, parseDueKey, type SecretLeaseEntry } from './lease-records.js';

export type { SecretLeaseEntry } from './lease-records.js';

export interface SecretLeasesDeps {
  /** The barrier: leases live under `sys/expire/`. */
  readonly storage: Storage;
  readonly clock: Clock;
  readonly logger: Logger;
  /** The live mount table. @throws SealedError while sealed. */
  readonly mounts: () => MountTable;
  /** Where a token's revocation is heard: the leases issued under it are revoked with it. */
  readonly tokens?: Pick<TokenStore, 'onRevoked'>;
}

/** A renewal's outcome, for the answer of sys/leases/renew. */
export interface Renewed {
  readonly lease: LeaseInfo;
  readonly data?: Record<string, unknown>;
  readonly warnings: string[];
}

/** An irrevocable lease, as `sys/leases?type=irrevocable` lists it (Vault's fields). */
export interface IrrevocableLease {
  readonly lease_id: string;
  readonly mount_id: string;
  readonly error: string;
}

export class SecretLeases {
  private readonly records: LeaseRecords;
  /** One renewal or revocation of a lease at a time: a renewal never rewrites a lease being revoked. */
  private readonly locks = new KeyedLock();

  constructor(private readonly deps: SecretLeasesDeps) {
    this.records = new LeaseRecords(deps.storage);
    deps.tokens?.onRevoked((hash) => this.revokeByToken(hash));
  }

  now(): number {
    return Math.floor(this.deps.clock.now().getTime() / 1000);
  }

  /**
   * Stores the lease of a secret `live`'s backend answered `path` (the full request path) with,
   * and returns what the envelope shows. The TTL is the secret's, else the mount's default, and
   * never beyond the max TTL: the secret's, else the mount's, and never beyond the mount's.
   * The lease belongs to `token` (a batch token's parent), as in Vault: revoking that token revokes
   * it; a batch token's lease also ends no later than the batch token
   * (https://developer.hashicorp.com/vault/docs/concepts/tokens#batch-tokens).
   */
  async register(live: LiveMount, path: string, secret: SecretResult, token?: ResolvedToken): Promise<LeaseInfo> {
    const view = this.deps.mounts().systemViewFor(live);
    const mountMax = view.maxLeaseTtl();
    const now = this.now();
    const batch = token?.entry.type === 'batch';
    const tokenLeft = batch && token.entry.expireTime !== 0 ? Math.max(token.entry.expireTime - now, 1) : Infinity;
    const maxTtl = Math.min(secret.maxTtl && secret.maxTtl > 0 ? Math.min(secret.maxTtl, mountMax) : mountMax, tokenLeft);
    const ttl = Math.min(secret.ttl && secret.ttl > 0 ? secret.ttl : view.defaultLeaseTtl(), maxTtl);
    const tokenHash = batch ? token.entry.parent : token?.hash;
    const entry: SecretLeaseEntry = {
      leaseId: `${path.replace(/\/+$/, '')}/${base62(24)}`,
      mountUuid: live.entry.uuid,
      mountAccessor: live.entry.accessor,
      path: path.slice(live.routePrefix.length).replace(/\/+$/, ''),
      type: secret.type,
      internalData: { ...secret.internalData },
      issueTime: now,
      expireTime: now + ttl,
      lastRenewalTime: 0,
      ttl,
      maxTtl,
      renewable: (secret.renewable ?? true) && live.backend?.renewSecret !== undefined,
      ...(tokenHash ? { tokenHash } : {}),
    };
    await this.records.write(entry);
    return { id: entry.leaseId, duration: ttl, renewable: entry.renewable };
  }

  /** The stored lease with this id, or undefined. */
  find(leaseId: string): Promise<SecretLeaseEntry | undefined> {
    return this.records.read(leaseId);
  }

  /** The names one level under `prefix` (empty, or ending in `/`), sorted; folders end in `/`. */
  list(prefix: string): Promise<string[]> {
    return this.records.list(prefix);
  }

  /**
   * Renews a lease through its backend: the TTL granted (the backend's, else the increment asked,
   * else the lease's own) is capped by what is left of the lease's max TTL, with Vault's warning.
   * @throws BadRequestError for an unknown or expired lease, or one that is not renewable.
   */
  async renew(leaseId: string, increment: number): Promise<Renewed> {
    return this.locks.run(leaseId, async () => {
      const entry = await this.records.read(leaseId);
      if (!entry) throw new BadRequestError('lease not found');
      const now = this.now();
      if (entry.expireTime <= now) throw new BadRequestError('lease expired');
      if (!entry.renewable) throw new BadRequestError('lease is not renewable');
      const found = this.backendOf(entry);
      if (!found?.backend.renewSecret) {
        found?.release();
        throw new BadRequestError('lease is not renewable');
      }
      let granted: Awaited<ReturnType<NonNullable<Backend['renewSecret']>>>;
      try {
        granted = await found.backend.renewSecret(this.requestOf(found.live, entry), this.leased(entry, increment));
      } finally {
        found.release();
      }
      const asked = granted.ttl > 0 ? granted.ttl : increment > 0 ? increment : entry.ttl;
      const left = Math.max(entry.issueTime + entry.maxTtl - now, 0);
      const warnings: string[] = [];
      let ttl = asked;
      if (asked > left) {
        ttl = left;
        warnings.push(`TTL of "${asked}s" exceeded the effective max_ttl of "${left}s"; TTL value is capped accordingly`);
      }
      const next: SecretLeaseEntry = { ...entry, ttl, expireTime: now + ttl, lastRenewalTime: now };
      await this.records.write(next, entry);
      return { lease: { id: leaseId, duration: ttl, renewable: true }, ...(granted.data ? { data: granted.data } : {}), warnings };
    });
  }

  /**
   * Revokes a lease: the backend undoes the secret, then the lease is dropped, before this returns.
   * A lease whose mount is gone is dropped with nothing to undo. Unknown ids are not an error, as
   * in Vault. With `force` a backend's failure is logged and the lease dropped anyway.
   * @returns whether a lease was revoked.
   */
  async revoke(leaseId: string, force = false): Promise<boolean> {
    return this.locks.run(leaseId, async () => {
      const entry = await this.records.read(leaseId);
      if (!entry) return false;
      await this.revokeEntry(entry, force);
      return true;
    });
  }

  /**
   * Revokes the lease `prefix` names exactly, or else every lease under it (a missing trailing `/`
   * is added, so `pki` never reaches `pki2/`), before it returns. Without `force` the first backend
   * failure stops it (the leases revoked so far stay revoked). Returns how many were revoked.
   */
  async revokePrefix(prefix: string, force = false): Promise<number> {
    if (prefix !== '' && !prefix.endsWith('/')) {
      if (await this.revoke(prefix, force)) return 1;
      prefix += '/';
    }
    let revoked = 0;
    const ids: string[] = [];
    for await (const id of this.records.idsUnder(prefix)) ids.push(id);
    for (const id of ids) if (await this.revoke(id, force)) revoked++;
    return revoked;
  }

  /**
   * Revokes the leases issued under a token being revoked (however it ends: revoked, expired, or
   * with its parent), as Vault's expiration manager does. A backend that fails makes the lease
   * irrevocable, as in the sweep, rather than keeping the token alive.
   */
  async revokeByToken(tokenHash: string): Promise<void> {
    for (const leaseId of await this.records.idsOfToken(tokenHash)) {
      await this.locks.run(leaseId, async () => {
        const entry = await this.records.read(leaseId);
        if (!entry) return this.records.dropTokenKey(tokenHash, leaseId);
        try {
          await this.revokeEntry(entry, false);
        } catch (err) {
          const why = errorMessage(err);
          this.deps.logger.warn({ lease_id: leaseId, err: why }, 'a lease of a revoked token could not be revoked; it is irrevocable until an operator revokes it');
          await this.records.write({ ...entry, revokeError: why }, entry);
        }
        return undefined;
      });
    }
  }

  /**
   * Revokes every lease whose expiry has passed, through its backend (the periodic work's sweep).
   * A backend that fails makes the lease irrevocable: kept, with the error, out of the sweep.
   * Returns how many were revoked.
   */
  async sweepExpired(): Promise<number> {
    const now = this.now();
    let swept = 0;
    for (const name of await this.records.dueKeys()) {
      const due = parseDueKey(name);
      if (!due) {
        await this.records.dropDueKey(name);
        continue;
      }
      if (due.time > now) break;
      const revoked = await this.locks.run(due.leaseId, async () => {
        const entry = await this.records.read(due.leaseId);
        // A stale index entry: the lease was renewed or revoked meanwhile.
        if (!entry || dueKey(entry) !== LEASE_KEYS.duePrefix + name) {
          await this.records.dropDueKey(name);
          return false;
        }
        try {
          await this.revokeEntry(entry, false);
          return true;
        } catch (err) {
          const why = errorMessage(err);
          this.deps.logger.warn({ lease_id: entry.leaseId, err: why }, 'an expired lease could not be revoked; it is irrevocable until an operator revokes it');
          await this.records.write({ ...entry, revokeError: why }, entry);
          return false;
        }
      });
      if (revoked) swept++;
    }
    return swept;
  }

  /**
   * Revokes the expired leases the sweep has not reached, and drops the leases whose mount is
   * gone (nothing is left to undo them). Returns both counts.
   */
  async tidy(): Promise<{ expired: number; orphaned: number }> {
    const expired = await this.sweepExpired();
    const mounts = this.deps.mounts();
    let orphaned = 0;
    const orphans: string[] = [];
    for await (const id of this.records.idsUnder('')) {
      const entry = await this.records.read(id);
      if (entry && !mounts.byUuid(entry.mountUuid)) orphans.push(id);
    }
    for (const id of orphans) if (await this.revoke(id, true)) orphaned++;
    return { expired, orphaned };
  }

  /** The irrevocable leases, at most `limit` (0: all), with how many there are by mount accessor. */
  async irrevocable(limit: number): Promise<{ count: number; counts: Record<string, number>; leases: IrrevocableLease[] }> {
    const counts: Record<string, number> = {};
    const leases: IrrevocableLease[] = [];
    let count = 0;
    for await (const id of this.records.idsUnder('')) {
      const entry = await this.records.read(id);
      if (entry?.revokeError === undefined) continue;
      count++;
      counts[entry.mountAccessor] = (counts[entry.mountAccessor] ?? 0) + 1;
      if (limit === 0 || leases.length < limit) leases.push({ lease_id: entry.leaseId, mount_id: entry.mountAccessor, error: entry.revokeError });
    }
    return { count, counts, leases };
  }

  /** Calls the backend's revoke (unless its mount is gone), then drops the lease. */
  private async revokeEntry(entry: SecretLeaseEntry, force: boolean): Promise<void> {
    const found = this.backendOf(entry);
    if (found) {
      try {
        await found.backend.revokeSecret?.(this.requestOf(found.live, entry), this.leased(entry, 0));
      } catch (err) {
        if (!force) throw err;
        this.deps.logger.warn({ lease_id: entry.leaseId, err: errorMessage(err) }, 'a backend failed to revoke a lease; dropped anyway (revoke-force)');
      } finally {
        found.release();
      }
    }
    await this.records.remove(entry);
  }

  /** The serving backend of the lease's mount, held until `release`; undefined when the mount is gone or failed. */
  private backendOf(entry: SecretLeaseEntry): { live: LiveMount; backend: Backend; release: () => void } | undefined {
    const live = this.deps.mounts().byUuid(entry.mountUuid);
    if (!live?.backend) return undefined;
    const { backend, release } = live.acquire();
    return { live, backend, release };
  }

  private requestOf(live: LiveMount, entry: SecretLeaseEntry): SecretRequest {
    return { id: randomUUID(), path: entry.path, storage: live.storage, mount: live.ref };
  }

  private leased(entry: SecretLeaseEntry, increment: number): LeasedSecret {
    return {
      leaseId: entry.leaseId,
      type: entry.type,
      internalData: entry.internalData,
      issueTime: entry.issueTime,
      expireTime: entry.expireTime,
      ttl: entry.ttl,
      maxTtl: entry.maxTtl,
      increment,
    };
  }
}
