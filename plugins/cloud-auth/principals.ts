/**
 * IAM principal lookups: a bound ARN resolved to the provider's unique ID (so a principal deleted
 * and recreated under the same name no longer matches), and a caller's full ARN (with path) for
 * wildcard bindings.
 */
import { parseIamArn, type IamEntity } from './arn.js';
import type { CloudAuthContext } from './context.js';
import { iamRegionForPartition } from './regions.js';
import { ProviderConfigError } from './provider/types.js';

/** The unique ID (`AIDA…`, `AROA…`, `AIPA…`) of a user, role or instance profile ARN. */
export async function resolveUniqueId(ctx: CloudAuthContext, arn: string): Promise<string> {
  const entity = parseIamArn(arn);
  const target = { region: iamRegion(entity), accountId: entity.accountId };
  switch (entity.type) {
    case 'user':
      return (await ctx.provider.getUser(target, entity.friendlyName)).uniqueId;
    case 'role':
      return (await ctx.provider.getRole(target, entity.friendlyName)).uniqueId;
    case 'instance-profile':
      return (await ctx.provider.getInstanceProfile(target, entity.friendlyName)).uniqueId;
    default:
      throw new ProviderConfigError(`unrecognized entity type "${entity.type}"`);
  }
}

/** The full ARN (path included) of a user or of the role behind an assumed role. */
export async function fullArnOf(ctx: CloudAuthContext, entity: IamEntity): Promise<string> {
  const target = { region: iamRegion(entity), accountId: entity.accountId };
  switch (entity.type) {
    case 'user':
      return (await ctx.provider.getUser(target, entity.friendlyName)).arn;
    case 'role':
    case 'assumed-role':
      return (await ctx.provider.getRole(target, entity.friendlyName)).arn;
    default:
      throw new ProviderConfigError(`unrecognized entity type: ${entity.type}`);
  }
}

function iamRegion(entity: IamEntity): string {
  const region = iamRegionForPartition(entity.partition);
  if (!region) throw new ProviderConfigError(`unable to resolve partition "${entity.partition}" to a region`);
  return region;
}
