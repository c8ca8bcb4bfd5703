/**
 * Instance checks shared by ec2 logins and iam logins that infer an instance: the instance must
 * exist and be running, and meet every instance constraint of the role.
 */
import { BadRequestError, createError } from '../../sdk/index.js';
import { parseIamArn, prefixOrExactMatches, ArnError } from './arn.js';
import type { CloudAuthContext } from './context.js';
import type { RoleEntry } from './role.js';
import type { InstanceDescription } from './provider/types.js';
import { ProviderRequestError } from './provider/types.js';

/** The instance is not what the role needs: a 400, its message for the client (callers say which login it failed). */
export const InstanceCheckError = createError('InstanceCheckError', 'KW_CLOUD_INSTANCE_CHECK', 400, { parent: BadRequestError });
export type InstanceCheckError = InstanceType<typeof InstanceCheckError>;

/** What the login knows about the instance beyond DescribeInstances (from a document, or inferred). */
export interface InstanceIdentity {
  readonly instanceId: string;
  readonly accountId: string;
  readonly region: string;
}

/**
 * DescribeInstances for the instance in its region and account: it must be the one asked for and
 * be running. Provider errors propagate (the caller words them); the rest is InstanceCheckError.
 */
export async function describeRunningInstance(ctx: CloudAuthContext, instanceId: string, region: string, accountId: string): Promise<InstanceDescription> {
  let reservations: InstanceDescription[][];
  try {
    reservations = await ctx.provider.describeInstances({ region, accountId }, instanceId);
  } catch (err) {
    if (err instanceof ProviderRequestError) {
      throw new InstanceCheckError(`error fetching description for instance ID "${instanceId}": ${err.message}`);
    }
    throw err;
  }
  const first = reservations[0];
  if (!first) throw new InstanceCheckError('no reservations found in instance description');
  const instance = first[0];
  if (!instance) throw new InstanceCheckError('no instance details found in reservations');
  if (instance.instanceId !== instanceId) throw new InstanceCheckError('expected instance ID not matching the instance ID in the instance description');
  if (!instance.state) throw new InstanceCheckError('instance state in instance description is nil');
  if (instance.state !== 'running') throw new InstanceCheckError("instance is not in 'running' state");
  return instance;
}

/**
 * The role's instance constraints, in Vault's order (region first, as ec2 logins check it). Returns the first unmet one as a message,
 * or undefined when the instance qualifies. Provider errors propagate.
 */
export async function unmetInstanceConstraint(
  ctx: CloudAuthContext,
  instance: InstanceDescription,
  identity: InstanceIdentity,
  role: RoleEntry,
  roleName: string,
): Promise<string | undefined> {
  if (role.bound_region.length > 0 && !role.bound_region.includes(identity.region)) {
    return `Region "${identity.region}" does not satisfy the constraint on role "${roleName}"`;
  }
  if (role.bound_ec2_instance_id.length > 0 && !role.bound_ec2_instance_id.includes(instance.instanceId)) {
    return `instance ID "${instance.instanceId}" does not belong to the role "${roleName}"`;
  }
  if (role.bound_account_id.length > 0 && !role.bound_account_id.includes(identity.accountId)) {
    return `account ID "${identity.accountId}" does not belong to role "${roleName}"`;
  }
  if (role.bound_ami_id.length > 0) {
    if (!instance.imageId) return 'AMI ID in the instance description is missing';
    if (!role.bound_ami_id.includes(instance.imageId)) return `AMI ID "${instance.imageId}" does not belong to role "${roleName}"`;
  }
  if (role.bound_subnet_id.length > 0) {
    if (!instance.subnetId) return 'subnet ID in the instance description is missing';
    if (!role.bound_subnet_id.includes(instance.subnetId)) return `subnet ID "${instance.subnetId}" does not satisfy the constraint on role "${roleName}"`;
  }
  if (role.bound_vpc_id.length > 0) {
    if (!instance.vpcId) return 'VPC ID in the instance description is missing';
    if (!role.bound_vpc_id.includes(instance.vpcId)) return `VPC ID "${instance.vpcId}" does not satisfy the constraint on role "${roleName}"`;
  }
  if (role.bound_iam_instance_profile_arn.length > 0) {
    const profileArn = instance.iamInstanceProfileArn;
    if (!profileArn) return 'the instance has no IAM instance profile';
    if (!role.bound_iam_instance_profile_arn.some((bound) => prefixOrExactMatches(bound, profileArn))) {
      return `IAM instance profile ARN "${profileArn}" does not satisfy the constraint role "${roleName}"`;
    }
  }
  if (role.bound_iam_role_arn.length > 0) {
    const profileArn = instance.iamInstanceProfileArn;
    if (!profileArn) return 'the instance has no IAM instance profile';
    let profileName: string;
    try {
      profileName = parseIamArn(profileArn).friendlyName;
    } catch (err) {
      if (err instanceof ArnError) return `failed to parse IAM instance profile ARN "${profileArn}": ${err.message}`;
      throw err;
    }
    let roleArns: readonly string[];
    try {
      roleArns = (await ctx.provider.getInstanceProfile({ region: identity.region, accountId: identity.accountId }, profileName)).roleArns;
    } catch (err) {
      if (err instanceof ProviderRequestError) return `IAM role ARN could not be fetched: ${err.message}`;
      throw err;
    }
    if (roleArns.length !== 1) return `IAM role ARN could not be fetched: instance profile "${profileName}" has ${roleArns.length} roles, expected 1`;
    const roleArn = roleArns[0]!;
    if (!role.bound_iam_role_arn.some((bound) => prefixOrExactMatches(bound, roleArn))) {
      return `IAM role ARN "${roleArn}" does not satisfy the constraint role "${roleName}"`;
    }
  }
  return undefined;
}
