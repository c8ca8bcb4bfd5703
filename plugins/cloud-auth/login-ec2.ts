/**
 * ec2 login: a signed instance identity document proves which instance is calling; the instance
 * must be running and meet the role's constraints; the identity access list decides whether it may
 * log in again (client nonce, pendingTime); a role tag on the instance may narrow the token. The
 * order of the checks (docs/cloud-auth.md, "An ec2 login, step by step"): signature, role, bound
 * CIDRs, auth type, running instance, region, instance constraints, access list and nonce, role
 * tag, access-list write.
 */
import { randomUUID, timingSafeEqual } from 'node:crypto';
import { BadRequestError, PermissionDeniedError, afterDuration, goDuration, type AuthResult, type LogicalRequest, cidrAllows, tokenAuth } from '../../sdk/index.js';
import type { CloudAuthContext } from './context.js';
import { verifiedIdentityDocument, type Ec2Proof, type IdentityDocument } from './identity-document.js';
import { readRole, type RoleEntry } from './role.js';
import { effectiveMetadataFields, readIdentityConfig, selectMetadata } from './identity-config.js';
import { describeRunningInstance, InstanceCheckError, unmetInstanceConstraint } from './instance-checks.js';
import { providerFailure } from './failures.js';
import { readAccessListEntry, writeAccessListEntry, type AccessListEntry } from './access-list.js';
import { RoleTagError, tagPoliciesAllowed, verifyRoleTag, type RoleTag } from './role-tag.js';
import { readDenyListEntry } from './deny-list.js';
import type { InstanceDescription } from './provider/types.js';
import { present } from './input.js';

/** A client nonce longer than this is refused (it is stored with every access-list entry). */
export const MAX_NONCE_LENGTH = 128;

/** What renewal needs from the login, kept in the token's internal data (never shown). */
export interface Ec2InternalData {
  readonly auth_type: 'ec2';
  readonly role_name: string;
  readonly instance_id: string;
  readonly region: string;
  readonly account_id: string;
  /** Seconds; 0 when no role tag capped the token. */
  readonly role_tag_max_ttl: number;
}

export async function loginEc2(ctx: CloudAuthContext, req: LogicalRequest, input: Ec2Proof & { role?: string | undefined }): Promise<AuthResult> {
  const doc = await verifiedIdentityDocument(ctx, input);

  const roleName = input.role || doc.imageId;
  const role = await readRole(ctx.storage, roleName);
  if (!role) throw new BadRequestError(`entry for role "${roleName}" not found`);
  if (!cidrAllows(role.token_bound_cidrs, req.connection.remoteAddress)) throw new PermissionDeniedError();
  if (role.auth_type !== 'ec2') throw new BadRequestError(`auth method ec2 not allowed for role ${roleName}`);
  const identity = await readIdentityConfig(ctx.storage);

  const instance = await runningInstance(ctx, doc);
  if (role.bound_region.length > 0 && !role.bound_region.includes(doc.region)) {
    throw new BadRequestError(`Region "${doc.region}" does not satisfy the constraint on role "${roleName}"`);
  }
  const unmet = await unmetInstanceConstraint(ctx, instance, doc, role, roleName).catch((err) => {
    throw providerFailure('Error validating instance', err);
  });
  if (unmet) throw new BadRequestError(`Error validating instance: ${unmet}`);

  // `nonce: ""` is the client asking for no reauthentication; an absent nonce asks the server for one.
  const nonceSupplied = present(req, 'nonce');
  const clientNonce = nonceSupplied ? String(req.data.nonce) : '';

  const login = await ctx.accessListLocks.run(doc.instanceId, async () => {
    const stored = await readAccessListEntry(ctx.storage, doc.instanceId);
    let disallow = role.disallow_reauthentication || (nonceSupplied && clientNonce === '');
    let migrating = false;
    if (stored) {
      migrating = checkReauthentication(stored, clientNonce, nonceSupplied, doc.pendingTime, role);
      // Sticky: only deleting the entry lets a disallowed instance log in again, whatever the role says now.
      disallow ||= stored.disallow_reauthentication;
    }

    let tag: RoleTag | undefined;
    if (role.role_tag) {
      tag = await instanceRoleTag(ctx, role, roleName, instance);
      // The tag narrows the role: it can forbid migration and reauthentication, never allow them.
      if (migrating && !tag.allowInstanceMigration) {
        throw new BadRequestError('client nonce mismatch: the role tag on the instance does not allow instance migration');
      }
      disallow ||= tag.disallowReauthentication;
    }

    let nonce = '';
    let generated = false;
    if (!disallow) {
      if (stored && !migrating) nonce = stored.client_nonce;
      else if (nonceSupplied) nonce = clientNonce;
      else {
        nonce = randomUUID();
        generated = true;
      }
      if (nonce.length > MAX_NONCE_LENGTH) throw new BadRequestError(`client nonce exceeding the limit of ${MAX_NONCE_LENGTH} characters`);
    }

    const tagMaxTtl = tag?.maxTtl ?? 0;
    const ttls = maxTtls(ctx, role, tagMaxTtl);
    const now = ctx.clock.now();
    const entry: AccessListEntry = {
      role: stored?.role ?? roleName,
      client_nonce: nonce,
      creation_time: stored?.creation_time ?? now.toISOString(),
      disallow_reauthentication: disallow,
      pending_time: doc.pendingTime,
      expiration_time: afterDuration(now, ttls.longest).toISOString(),
      last_updated_time: now.toISOString(),
    };
    await writeAccessListEntry(ctx.storage, doc.instanceId, entry);
    return { tag, tagMaxTtl, shortest: ttls.shortest, generatedNonce: generated ? nonce : undefined };
  });

  const metadata = selectMetadata(effectiveMetadataFields(identity.ec2_metadata), {
    account_id: doc.accountId,
    auth_type: 'ec2',
    ami_id: doc.imageId,
    instance_id: doc.instanceId,
    region: doc.region,
  });
  const aliasName = identity.ec2_alias === 'instance_id' ? doc.instanceId : identity.ec2_alias === 'image_id' ? doc.imageId : role.role_id;
  const internalData: Ec2InternalData = {
    auth_type: 'ec2',
    role_name: roleName.toLowerCase(),
    instance_id: doc.instanceId,
    region: doc.region,
    account_id: doc.accountId,
    role_tag_max_ttl: login.tagMaxTtl,
  };
  return {
    ...tokenAuth(role),
    policies: login.tag && login.tag.policies.length > 0 ? login.tag.policies : role.token_policies,
    maxTtl: login.shortest,
    metadata: {
      role_tag_max_ttl: goDuration(login.tagMaxTtl),
      role: roleName,
      ...(login.generatedNonce ? { nonce: login.generatedNonce } : {}),
      ...metadata,
    },
    alias: { name: aliasName, metadata },
    internalData: { ...internalData },
  };
}

/**
 * The maximum TTLs of an ec2 login: the token lives at most the shortest of the mount's, the
 * role's and the tag's (those set); the access-list entry is kept for the longest, so it outlives
 * every token it may have to renew.
 */
export function maxTtls(ctx: CloudAuthContext, role: RoleEntry, tagMaxTtl: number): { shortest: number; longest: number } {
  const all = [ctx.system.maxLeaseTtl(), role.token_max_ttl, tagMaxTtl];
  const set = all.filter((ttl) => ttl > 0);
  return { shortest: set.length > 0 ? Math.min(...set) : 0, longest: Math.max(...all) };
}

async function runningInstance(ctx: CloudAuthContext, doc: IdentityDocument): Promise<InstanceDescription> {
  try {
    return await describeRunningInstance(ctx, doc.instanceId, doc.region, doc.accountId);
  } catch (err) {
    if (err instanceof InstanceCheckError) throw new BadRequestError(`failed to verify instance ID: ${err.message}`);
    throw providerFailure('failed to verify instance ID', err);
  }
}

/**
 * An instance that logged in before may log in again only with the nonce it got (or chose) then,
 * and with a document no older than the last one. A role with allow_instance_migration accepts
 * another nonce when the document's pendingTime is newer (the instance was stopped and started,
 * perhaps on another host). Returns whether this login is such a migration.
 */
function checkReauthentication(stored: AccessListEntry, clientNonce: string, nonceSupplied: boolean, pendingTime: string, role: RoleEntry): boolean {
  if (!stored.disallow_reauthentication && stored.client_nonce === '') throw new BadRequestError('client nonce missing in stored identity');
  if (stored.disallow_reauthentication || (nonceSupplied && clientNonce === '')) throw new BadRequestError('reauthentication is disabled');
  const given = Date.parse(pendingTime);
  if (Number.isNaN(given)) throw new BadRequestError(`the instance identity document's pendingTime "${pendingTime}" is not an RFC 3339 time`);
  const previous = Date.parse(stored.pending_time);
  let migrating = false;
  if (!sameNonce(clientNonce, stored.client_nonce)) {
    if (!role.allow_instance_migration) throw new BadRequestError('client nonce mismatch');
    if (Number.isNaN(previous) || !(given > previous)) throw new BadRequestError('client nonce mismatch and instance meta-data incorrect');
    migrating = true;
  }
  if (given < previous) throw new BadRequestError('instance meta-data is older than the one used for previous login');
  return migrating;
}

function sameNonce(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The role tag the instance carries, verified and checked against the role, the instance and the deny list. */
async function instanceRoleTag(ctx: CloudAuthContext, role: RoleEntry, roleName: string, instance: InstanceDescription): Promise<RoleTag> {
  const value = instance.tags[role.role_tag];
  if (value === undefined) throw new BadRequestError(`missing tag with key "${role.role_tag}" on the instance`);
  let tag: RoleTag;
  try {
    tag = (await verifyRoleTag(ctx.storage, value)).tag;
  } catch (err) {
    if (err instanceof RoleTagError) throw new BadRequestError(`invalid role tag on the instance: ${err.message}`);
    throw err;
  }
  if (tag.role !== roleName.toLowerCase()) throw new BadRequestError('role on the tag is not matching the role supplied');
  if (tag.instanceId && tag.instanceId !== instance.instanceId.toLowerCase()) throw new BadRequestError('role tag is being used by an unauthorized instance');
  if (await readDenyListEntry(ctx.storage, value)) throw new BadRequestError('role tag is deny listed');
  if (!tagPoliciesAllowed(tag.policies, role.token_policies)) throw new BadRequestError('policies on the role tag must be subset of policies on the role');
  return tag;
}
