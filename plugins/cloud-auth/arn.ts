/**
 * IAM and STS ARNs as GetCallerIdentity returns them, and the glob rules roles use to match them.
 * `arn:<partition>:iam::<account>:user/<path>/<name>`, `…:role/<path>/<name>`,
 * `…:instance-profile/<path>/<name>` and `arn:<partition>:sts::<account>:assumed-role/<role>/<session>`.
 */
import { BadRequestError, createError } from '../../sdk/index.js';

/** The principal types a login or a role binding can name. */
export type IamEntityType = 'user' | 'role' | 'instance-profile' | 'assumed-role';

export interface IamEntity {
  /** `aws`, `aws-cn`, `aws-us-gov`, …: decides which endpoints and regions apply. */
  readonly partition: string;
  readonly accountId: string;
  readonly type: IamEntityType;
  /** The path between the type and the name, without slashes at the ends; '' for assumed roles. */
  readonly path: string;
  /** The user or role name (for an assumed role: the role's name). */
  readonly friendlyName: string;
  /** An assumed role's session name (an EC2 instance ID for instance-profile credentials); '' otherwise. */
  readonly sessionName: string;
}

/** An ARN that is not one of the shapes above: a 400, its message saying which part is wrong. */
export const ArnError = createError('ArnError', 'KW_CLOUD_ARN', 400, { parent: BadRequestError });
export type ArnError = InstanceType<typeof ArnError>;

const ENTITY_TYPES: ReadonlySet<string> = new Set(['user', 'role', 'instance-profile', 'assumed-role']);

export function parseIamArn(arn: string): IamEntity {
  const parts = arn.split(':');
  if (parts.length !== 6) throw new ArnError(`unrecognized arn: contains ${parts.length} colon-separated parts, expected 6`);
  const [prefix, partition, service, , accountId, resource] = parts as [string, string, string, string, string, string];
  if (prefix !== 'arn') throw new ArnError('unrecognized arn: does not begin with "arn:"');
  if (service !== 'iam' && service !== 'sts') throw new ArnError(`unrecognized service: ${service}, not one of iam or sts`);
  const pieces = resource.split('/');
  if (pieces.length < 2) throw new ArnError(`unrecognized arn: "${resource}" contains fewer than 2 slash-separated parts`);
  const type = pieces[0]!;
  if (!ENTITY_TYPES.has(type)) throw new ArnError(`unrecognized principal type: "${type}"`);
  if (type === 'assumed-role') {
    if (pieces.length < 3) throw new ArnError(`unrecognized arn: "${resource}" contains fewer than 3 slash-separated parts`);
    return { partition, accountId, type, path: '', friendlyName: pieces[1]!, sessionName: pieces[2]! };
  }
  return {
    partition,
    accountId,
    type: type as IamEntityType,
    path: pieces.slice(1, -1).join('/'),
    friendlyName: pieces[pieces.length - 1]!,
    sessionName: '',
  };
}

/**
 * The ARN without path, with `assumed-role` turned into `role`: what a role binding without
 * unique-ID resolution is compared with, because GetCallerIdentity never reports a role's path.
 */
export function canonicalArn(entity: IamEntity): string {
  const type = entity.type === 'assumed-role' ? 'role' : entity.type;
  return `arn:${entity.partition}:iam::${entity.accountId}:${type}/${entity.friendlyName}`;
}

/** How a login names itself in a token's display name: the user or role name, plus the session. */
export function displayNameOf(entity: IamEntity): string {
  return entity.type === 'assumed-role' ? `${entity.friendlyName}/${entity.sessionName}` : entity.friendlyName;
}

/**
 * Instance-profile and IAM-role bindings: a value ending in `*` matches by prefix, anything else
 * exactly; a `*` elsewhere is an ordinary character.
 */
export function prefixOrExactMatches(pattern: string, value: string): boolean {
  return pattern.endsWith('*') ? value.startsWith(pattern.slice(0, -1)) : pattern === value;
}
