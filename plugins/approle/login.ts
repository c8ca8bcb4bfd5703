/**
 * An AppRole login: the role ID names the role; unless the role has bind_secret_id off, a secret
 * ID of the role must come too, unexpired, with uses left, from an address its CIDR bounds allow;
 * the role's secret_id_bound_cidrs apply either way. Every bound is checked before a use is spent
 * (Vault spends it first, so a login refused for its address still costs one), and the use is
 * spent under the secret ID's lock, so concurrent logins never spend one use twice.
 */
import {
  BadRequestError,
  InvalidCredentialsError,
  cidrAllows,
  tokenAuth,
  type AuthResult,
  type LogicalRequest,
} from '../../sdk/index.js';
import { cidrsWithin } from './cidr.js';
import type { AppRoleContext } from './context.js';
import { roleByRoleId, type RoleEntry } from './role.js';
import { deleteSecretId, isExpired, readSecretId, secretIdHmac, secretIdOfAccessor, writeSecretId, type SecretIdEntry } from './secret-id.js';

/** Vault's answer to an unknown role ID, an unknown secret ID and (here) an expired one alike. */
export const INVALID_ROLE_OR_SECRET_ID = 'invalid role or secret ID';

export async function login(ctx: AppRoleContext, req: LogicalRequest, roleId: string, secretId: string): Promise<AuthResult> {
  if (roleId === '') throw new BadRequestError('missing role_id');
  // Not a failed guess at a user: an unknown role ID is no lockout's business, as in Vault.
  const role = await roleByRoleId(ctx, roleId);
  if (!role) throw new BadRequestError(INVALID_ROLE_OR_SECRET_ID);
  const address = req.connection.remoteAddress;
  if (!cidrAllows(role.secret_id_bound_cidrs, address)) {
    throw new BadRequestError(`source address "${address}" unauthorized by CIDR restrictions on the role`);
  }

  let entry: SecretIdEntry | undefined;
  if (role.bind_secret_id) {
    if (secretId === '') throw new BadRequestError('missing secret_id');
    entry = await spendSecretId(ctx, role, secretId, address);
  }

  const metadata = { ...(entry?.metadata ?? {}), role_name: role.name };
  return {
    ...tokenAuth(role),
    // A secret ID's own token bounds replace the role's.
    boundCidrs: entry && entry.token_bound_cidrs.length > 0 ? entry.token_bound_cidrs : role.token_bound_cidrs,
    metadata,
    internalData: { role_name: role.name },
    alias: { name: role.role_id, metadata },
  };
}

/** Checks a secret ID of `role` and spends one of its uses; answers it as it was before. */
async function spendSecretId(ctx: AppRoleContext, role: RoleEntry, secretId: string, address: string): Promise<SecretIdEntry> {
  const hmac = secretIdHmac(role, secretId);
  return ctx.secretIdLocks.run(hmac, async () => {
    const entry = await readSecretId(ctx, role, hmac);
    if (!entry) throw new InvalidCredentialsError(INVALID_ROLE_OR_SECRET_ID);
    if ((await secretIdOfAccessor(ctx, role, entry.secret_id_accessor)) === undefined) {
      // Half deleted (its accessor index is gone): finish the job.
      await deleteSecretId(ctx, role, hmac, entry.secret_id_accessor);
      throw new BadRequestError(INVALID_ROLE_OR_SECRET_ID);
    }
    // Vault leaves an expired secret ID usable until its tidy runs; here it is refused, and removed.
    if (isExpired(ctx, entry)) {
      await deleteSecretId(ctx, role, hmac, entry.secret_id_accessor);
      throw new InvalidCredentialsError(INVALID_ROLE_OR_SECRET_ID);
    }
    if (!cidrsWithin(entry.cidr_list, role.secret_id_bound_cidrs)) {
      throw new BadRequestError(
        `the CIDR blocks of the secret ID ${JSON.stringify(entry.cidr_list)} are no longer within the role's secret_id_bound_cidrs ${JSON.stringify(role.secret_id_bound_cidrs)}`,
      );
    }
    if (!cidrAllows(entry.cidr_list, address)) throw new BadRequestError(`source address "${address}" unauthorized through CIDR restrictions on the secret ID`);

    if (entry.secret_id_num_uses === 1) {
      await deleteSecretId(ctx, role, hmac, entry.secret_id_accessor);
    } else if (entry.secret_id_num_uses > 1) {
      await writeSecretId(ctx, role, hmac, { ...entry, secret_id_num_uses: entry.secret_id_num_uses - 1, last_updated_time: ctx.clock.now().toISOString() });
    }
    return entry;
  });
}
