/**
 * The operations of the paths that read, set and reset one property of a role
 * (`role/:role_name/secret-id-ttl`, …): Vault has them so that a policy can delegate one property.
 * Each path is a file under paths/; what it changes goes through the same checks as a write of
 * the whole role.
 */
import { BadRequestError, NotFoundError, type LogicalRequest, type LogicalResponse } from '../../sdk/index.js';
import type { AppRoleContext } from './context.js';
import { readRole, writeRole, type RoleEntry } from './role.js';

interface NamedRole {
  readonly role_name: string;
}

/** A read answering `view(role)`; 404 when the role does not exist. */
export function readProperty(ctx: AppRoleContext, what: string, view: (role: RoleEntry) => Record<string, unknown>, warnings?: readonly string[]) {
  return {
    summary: `Read ${what}.`,
    handler: async (_req: LogicalRequest, input: NamedRole): Promise<LogicalResponse | null> => {
      const role = await readRole(ctx, input.role_name);
      if (!role) return null;
      return { data: view(role), ...(warnings ? { warnings: [...warnings] } : {}) };
    },
  };
}

/**
 * A write applying `apply` to the role, then checked and stored like a write of the role. `apply`
 * throws BadRequestError (Vault's "missing <field>", see `missing`) when the write sets nothing.
 */
export function updateProperty<I>(ctx: AppRoleContext, what: string, apply: (role: RoleEntry, input: I, req: LogicalRequest) => void) {
  return {
    summary: `Set ${what}.`,
    handler: (req: LogicalRequest, input: I & NamedRole) =>
      changeRole(ctx, input.role_name, (role) => apply(role, input, req), () => {
        // Vault answers a write to a role that does not exist as an unknown path.
        throw new NotFoundError(`role "${input.role_name.toLowerCase()}" does not exist`);
      }),
  };
}

/** A delete setting the property back to its default; nothing to do for a role that does not exist. */
export function resetProperty(ctx: AppRoleContext, what: string, reset: (role: RoleEntry) => void) {
  return {
    summary: `Reset ${what} to its default.`,
    handler: (_req: LogicalRequest, input: NamedRole) => changeRole(ctx, input.role_name, reset, () => null),
  };
}

/** Vault's answer to a property write that sets nothing. */
export function missing(field: string): never {
  throw new BadRequestError(`missing ${field}`);
}

function changeRole(ctx: AppRoleContext, name: string, apply: (role: RoleEntry) => void, absent: () => null): Promise<null> {
  return ctx.roleLocks.run(name.toLowerCase(), async () => {
    const stored = await readRole(ctx, name);
    if (!stored) return absent();
    const role = structuredClone(stored);
    apply(role);
    await writeRole(ctx, role, stored.role_id);
    return null;
  });
}
