/**
 * Secret IDs: the second credential of an AppRole login. A secret ID is stored only as the HMAC
 * of it under its role's `hmac_key` (the key of its entry); the entry holds its accessor, uses
 * left, expiry, metadata and CIDR bounds. The accessor (a random UUID) names a secret ID without
 * revealing it; an index from the salted HMAC of the accessor to the secret ID's HMAC finds it.
 */
import { randomUUID } from 'node:crypto';
import { BadRequestError, afterDuration } from '../../sdk/index.js';
import type { AppRoleContext } from './context.js';
import type { RoleEntry } from './role.js';
import { STORAGE_KEYS, hmacHex, readJson, writeJson } from './storage.js';

export interface SecretIdEntry {
  secret_id_accessor: string;
  /** Uses left; 0 is unlimited. */
  secret_id_num_uses: number;
  /** The TTL it was made with, seconds (0: none). */
  secret_id_ttl: number;
  creation_time: string;
  /** Go's zero time when it does not expire, as Vault shows it. */
  expiration_time: string;
  last_updated_time: string;
  metadata: Record<string, string>;
  cidr_list: string[];
  token_bound_cidrs: string[];
}

interface AccessorIndex {
  secret_id_hmac: string;
}

/** How Vault writes "no expiration" (Go's zero time.Time). */
export const NO_EXPIRATION = '0001-01-01T00:00:00Z';

/** Where one role's secret IDs live: `<prefix><HMAC of the role name>/`. */
export function secretIdFolder(role: RoleEntry): string {
  const prefix = role.local_secret_ids ? STORAGE_KEYS.localSecretIdPrefix : STORAGE_KEYS.secretIdPrefix;
  return `${prefix}${hmacHex(role.hmac_key, role.name, 'role_name')}/`;
}

export function secretIdHmac(role: RoleEntry, secretId: string): string {
  return hmacHex(role.hmac_key, secretId, 'secret_id');
}

function accessorPrefixOf(role: RoleEntry): string {
  return role.local_secret_ids ? STORAGE_KEYS.localAccessorPrefix : STORAGE_KEYS.accessorPrefix;
}

async function accessorKey(ctx: AppRoleContext, role: RoleEntry, accessor: string): Promise<string> {
  return accessorPrefixOf(role) + hmacHex(await ctx.indexSalt(), accessor, 'secret_id_accessor');
}

export async function readSecretId(ctx: AppRoleContext, role: RoleEntry, hmac: string): Promise<SecretIdEntry | undefined> {
  return readJson<SecretIdEntry>(ctx.storage, secretIdFolder(role) + hmac);
}

export async function writeSecretId(ctx: AppRoleContext, role: RoleEntry, hmac: string, entry: SecretIdEntry): Promise<void> {
  await writeJson(ctx.storage, secretIdFolder(role) + hmac, entry);
}

/** The HMAC of the secret ID an accessor names, or undefined. */
export async function secretIdOfAccessor(ctx: AppRoleContext, role: RoleEntry, accessor: string): Promise<string | undefined> {
  return (await readJson<AccessorIndex>(ctx.storage, await accessorKey(ctx, role, accessor)))?.secret_id_hmac;
}

/** Deletes a secret ID and its accessor index (accessor first, as Vault: an entry without one is refused and removed). */
export async function deleteSecretId(ctx: AppRoleContext, role: RoleEntry, hmac: string, accessor: string): Promise<void> {
  await ctx.storage.delete(await accessorKey(ctx, role, accessor));
  await ctx.storage.delete(secretIdFolder(role) + hmac);
}

export interface NewSecretId {
  readonly numUses: number;
  readonly ttl: number;
  readonly metadata: Record<string, string>;
  readonly cidrList: string[];
  readonly tokenBoundCidrs: string[];
}

/** The TTL a secret ID really gets: the mount's max lease TTL when longer (Vault's deriveSecretIDTTL). */
export function effectiveTtl(ctx: AppRoleContext, ttl: number): number {
  const max = ctx.system.maxLeaseTtl();
  return ttl > max ? max : ttl;
}

/**
 * Stores a new secret ID for `role` (under the secret ID's lock) with its accessor index.
 * @throws BadRequestError when the role already has this secret ID.
 */
export async function registerSecretId(ctx: AppRoleContext, role: RoleEntry, secretId: string, spec: NewSecretId): Promise<SecretIdEntry> {
  const hmac = secretIdHmac(role, secretId);
  return ctx.secretIdLocks.run(hmac, async () => {
    if (await readSecretId(ctx, role, hmac)) throw new BadRequestError('SecretID is already registered');
    const now = ctx.clock.now();
    const ttl = effectiveTtl(ctx, spec.ttl);
    const entry: SecretIdEntry = {
      secret_id_accessor: randomUUID(),
      secret_id_num_uses: spec.numUses,
      secret_id_ttl: spec.ttl,
      creation_time: now.toISOString(),
      expiration_time: ttl > 0 ? afterDuration(now, ttl).toISOString() : NO_EXPIRATION,
      last_updated_time: now.toISOString(),
      metadata: spec.metadata,
      cidr_list: spec.cidrList,
      token_bound_cidrs: spec.tokenBoundCidrs,
    };
    // The accessor first: a secret ID whose accessor index is missing is refused and removed.
    await writeJson(ctx.storage, await accessorKey(ctx, role, entry.secret_id_accessor), { secret_id_hmac: hmac } satisfies AccessorIndex);
    await writeSecretId(ctx, role, hmac, entry);
    return entry;
  });
}

export function isExpired(ctx: AppRoleContext, entry: SecretIdEntry): boolean {
  return entry.expiration_time !== NO_EXPIRATION && ctx.clock.now().getTime() >= Date.parse(entry.expiration_time);
}

/** The HMACs of a role's secret IDs. */
export async function listSecretIdHmacs(ctx: AppRoleContext, role: RoleEntry): Promise<string[]> {
  return (await ctx.storage.list(secretIdFolder(role))).filter((key) => !key.endsWith('/'));
}

/** Deletes every secret ID of a role (when the role is deleted). */
export async function deleteRoleSecretIds(ctx: AppRoleContext, role: RoleEntry): Promise<void> {
  for (const hmac of await listSecretIdHmacs(ctx, role)) {
    await ctx.secretIdLocks.run(hmac, async () => {
      const entry = await readSecretId(ctx, role, hmac);
      if (entry) await deleteSecretId(ctx, role, hmac, entry.secret_id_accessor);
    });
  }
}

/** A secret ID as lookup answers it (never the secret ID itself). */
export function secretIdResponse(entry: SecretIdEntry): Record<string, unknown> {
  return {
    secret_id_accessor: entry.secret_id_accessor,
    secret_id_num_uses: entry.secret_id_num_uses,
    secret_id_ttl: entry.secret_id_ttl,
    creation_time: entry.creation_time,
    expiration_time: entry.expiration_time,
    last_updated_time: entry.last_updated_time,
    metadata: entry.metadata,
    cidr_list: entry.cidr_list,
    token_bound_cidrs: entry.token_bound_cidrs,
  };
}
