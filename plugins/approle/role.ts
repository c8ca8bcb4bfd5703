/**
 * The role model: what a login must present (a role ID, a secret ID unless `bind_secret_id` is
 * off, from an address in `secret_id_bound_cidrs`), the defaults of its secret IDs, and the token
 * settings. Stored as JSON under `role/<lower-case name>`, with an index from the role ID to the
 * name (`role_id/<salted HMAC of the role ID>`).
 */
import { randomUUID } from 'node:crypto';
import { BadRequestError, NotFoundError, defaultTokenSettings, tokenSettingsResponse, type WithTokenSettings } from '../../sdk/index.js';
import type { AppRoleContext } from './context.js';
import { STORAGE_KEYS, hmacHex, readJson, writeJson } from './storage.js';

/** Storage layout version of a role entry; bump with an upgrade step when the layout changes. */
export const ROLE_STORAGE_VERSION = 1;

export interface RoleEntry extends WithTokenSettings {
  version: number;
  /** The lower-cased name. */
  name: string;
  role_id: string;
  /** Key of the HMACs secret IDs are stored by; fixed at creation, never returned. */
  hmac_key: string;
  bind_secret_id: boolean;
  secret_id_bound_cidrs: string[];
  /** Uses of a new secret ID unless its generation says fewer; 0 is unlimited. */
  secret_id_num_uses: number;
  /** Seconds a new secret ID lives unless its generation says shorter; 0 is for ever (capped by the mount's max TTL). */
  secret_id_ttl: number;
  /** Fixed at creation. */
  local_secret_ids: boolean;
  /** The value written through the deprecated `bound_cidr_list`, echoed on read of that path. */
  bound_cidr_list?: string[];
}

interface RoleIdIndex {
  name: string;
}

export function newRole(name: string): RoleEntry {
  return {
    version: ROLE_STORAGE_VERSION,
    name,
    role_id: randomUUID(),
    hmac_key: randomUUID(),
    bind_secret_id: true,
    secret_id_bound_cidrs: [],
    secret_id_num_uses: 0,
    secret_id_ttl: 0,
    local_secret_ids: false,
    ...defaultTokenSettings(),
    legacy: {},
  };
}

const roleKey = (name: string) => STORAGE_KEYS.rolePrefix + name.toLowerCase();

async function roleIdKey(ctx: AppRoleContext, roleId: string): Promise<string> {
  return STORAGE_KEYS.roleIdPrefix + hmacHex(await ctx.indexSalt(), roleId, 'role_id');
}

export async function readRole(ctx: AppRoleContext, name: string): Promise<RoleEntry | undefined> {
  return readJson<RoleEntry>(ctx.storage, roleKey(name));
}

/** @throws NotFoundError when the role does not exist (a path under role/:role_name naming another role). */
export async function existingRole(ctx: AppRoleContext, name: string): Promise<RoleEntry> {
  const role = await readRole(ctx, name);
  if (!role) throw new NotFoundError(`role "${name.toLowerCase()}" does not exist`);
  return role;
}

/** The role a role ID belongs to, or undefined. */
export async function roleByRoleId(ctx: AppRoleContext, roleId: string): Promise<RoleEntry | undefined> {
  const index = await readJson<RoleIdIndex>(ctx.storage, await roleIdKey(ctx, roleId));
  if (!index) return undefined;
  const role = await readRole(ctx, index.name);
  // An index left behind by a role ID that changed under a crash points at a role that no longer has it.
  return role && role.role_id === roleId ? role : undefined;
}

/**
 * Checks and stores a role (under the caller's role lock), moving its role ID index when the role
 * ID changed since `previousRoleId`.
 * @throws BadRequestError when the role has no constraint left, or its role ID is another role's.
 */
export async function writeRole(ctx: AppRoleContext, role: RoleEntry, previousRoleId: string | undefined): Promise<void> {
  checkConstraints(role);
  // Under the role ID's own lock too: two roles taking the same custom role ID at once.
  await ctx.roleLocks.run(`role_id\n${role.role_id}`, async () => {
    const indexKey = await roleIdKey(ctx, role.role_id);
    const index = await readJson<RoleIdIndex>(ctx.storage, indexKey);
    if (index && index.name !== role.name) {
      const holder = await readRole(ctx, index.name);
      if (holder && holder.role_id === role.role_id) throw new BadRequestError('role_id already in use');
    }
    await writeJson(ctx.storage, roleKey(role.name), role);
    if (!index || index.name !== role.name) await writeJson(ctx.storage, indexKey, { name: role.name } satisfies RoleIdIndex);
  });
  if (previousRoleId !== undefined && previousRoleId !== role.role_id) await ctx.storage.delete(await roleIdKey(ctx, previousRoleId));
}

export async function deleteRoleEntry(ctx: AppRoleContext, role: RoleEntry): Promise<void> {
  await ctx.storage.delete(await roleIdKey(ctx, role.role_id));
  await ctx.storage.delete(roleKey(role.name));
}

export async function listRoles(ctx: AppRoleContext): Promise<string[]> {
  return (await ctx.storage.list(STORAGE_KEYS.rolePrefix)).filter((key) => !key.endsWith('/'));
}

/** A role must demand something of a login: a secret ID, or an address it comes from. */
export function checkConstraints(role: RoleEntry): void {
  if (!hasConstraint(role)) throw new BadRequestError('at least one constraint should be enabled on the role');
}

function hasConstraint(role: RoleEntry): boolean {
  return role.bind_secret_id || role.secret_id_bound_cidrs.length > 0 || role.token_bound_cidrs.length > 0;
}

/** The read response of a role (neither its role ID nor its hmac_key, as in Vault). */
export function roleResponse(role: RoleEntry): { data: Record<string, unknown>; warnings?: string[] } {
  const data = {
    bind_secret_id: role.bind_secret_id,
    secret_id_bound_cidrs: role.secret_id_bound_cidrs,
    secret_id_num_uses: role.secret_id_num_uses,
    secret_id_ttl: role.secret_id_ttl,
    local_secret_ids: role.local_secret_ids,
    ...tokenSettingsResponse(role),
  };
  return hasConstraint(role)
    ? { data }
    : { data, warnings: ['Role does not have any constraints set on it. Updates to this role will require a constraint to be set'] };
}
