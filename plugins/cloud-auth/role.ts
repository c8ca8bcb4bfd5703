/**
 * The role model: constraints a login must meet, how the login proves itself (`auth_type`), and
 * the token settings. Stored as JSON under `role/<lower-case name>`. The ec2-only fields
 * (`role_tag`, `hmac_key`, reauthentication flags) are kept here for ec2 logins and role tags.
 */
import { tokenSettingsResponse, type Storage, type WithTokenSettings } from '../../sdk/index.js';
import { STORAGE_KEYS, readJson, writeJson } from './storage.js';

export type AuthType = 'ec2' | 'iam';
/** The only entity that iam logins can infer. */
export const EC2_ENTITY_TYPE = 'ec2_instance';

/** Storage layout version of a role entry; bump with an upgrade step when the layout changes. */
export const ROLE_STORAGE_VERSION = 1;

export const BOUND_LIST_FIELDS = [
  'bound_ami_id',
  'bound_account_id',
  'bound_region',
  'bound_vpc_id',
  'bound_subnet_id',
  'bound_iam_role_arn',
  'bound_iam_instance_profile_arn',
  'bound_ec2_instance_id',
  'bound_iam_principal_arn',
] as const;
export type BoundListField = (typeof BOUND_LIST_FIELDS)[number];

export interface RoleEntry extends WithTokenSettings, Record<BoundListField, string[]> {
  version: number;
  /** A UUID fixed at creation: the default identity alias of iam and ec2 logins. */
  role_id: string;
  auth_type: AuthType;
  /** Unique IDs the non-wildcard bound_iam_principal_arn values resolved to (resolve_cloud_unique_ids). */
  bound_iam_principal_id: string[];
  inferred_entity_type: string;
  inferred_cloud_region: string;
  resolve_cloud_unique_ids: boolean;
  role_tag: string;
  /** Key of the role-tag HMAC; fixed at creation, never returned. */
  hmac_key: string;
  allow_instance_migration: boolean;
  disallow_reauthentication: boolean;
}

const roleKey = (name: string) => STORAGE_KEYS.rolePrefix + name.toLowerCase();

export async function readRole(storage: Storage, name: string): Promise<RoleEntry | undefined> {
  return readJson<RoleEntry>(storage, roleKey(name));
}

export async function writeRole(storage: Storage, name: string, role: RoleEntry): Promise<void> {
  await writeJson(storage, roleKey(name), role);
}

export async function deleteRole(storage: Storage, name: string): Promise<void> {
  await storage.delete(roleKey(name));
}

export async function listRoles(storage: Storage): Promise<string[]> {
  return (await storage.list(STORAGE_KEYS.rolePrefix)).filter((key) => !key.endsWith('/'));
}

/** The read response of a role (`hmac_key` never leaves storage). */
export function roleResponse(role: RoleEntry): Record<string, unknown> {
  return {
    auth_type: role.auth_type,
    bound_ami_id: role.bound_ami_id,
    bound_account_id: role.bound_account_id,
    // Vault answers null for an empty instance-ID list; clients written against it expect that.
    bound_ec2_instance_id: role.bound_ec2_instance_id.length > 0 ? role.bound_ec2_instance_id : null,
    bound_iam_principal_arn: role.bound_iam_principal_arn,
    bound_iam_principal_id: role.bound_iam_principal_id,
    bound_iam_role_arn: role.bound_iam_role_arn,
    bound_iam_instance_profile_arn: role.bound_iam_instance_profile_arn,
    bound_region: role.bound_region,
    bound_subnet_id: role.bound_subnet_id,
    bound_vpc_id: role.bound_vpc_id,
    inferred_entity_type: role.inferred_entity_type,
    inferred_cloud_region: role.inferred_cloud_region,
    resolve_cloud_unique_ids: role.resolve_cloud_unique_ids,
    // Vault's names too, so Vault clients and Terraform read back what they wrote.
    inferred_aws_region: role.inferred_cloud_region,
    resolve_aws_unique_ids: role.resolve_cloud_unique_ids,
    role_id: role.role_id,
    role_tag: role.role_tag,
    allow_instance_migration: role.allow_instance_migration,
    disallow_reauthentication: role.disallow_reauthentication,
    ...tokenSettingsResponse(role),
  };
}
