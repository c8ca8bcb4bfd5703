/**
 * The seam between the cloud auth method and the cloud provider: the few provider calls the
 * method makes, as one small interface. `SdkCloudProvider` implements it with the official SDK
 * clients; every failure comes out as one of the two sentinel errors below, never as an SDK type.
 */
import { BadRequestError, UpstreamError, createError } from '../../../sdk/index.js';

/** Which account's view of the provider a call needs, and in which region. */
export interface ProviderTarget {
  readonly region: string;
  /**
   * The account whose resources are read. With a `config/sts/<account>` role the call runs with
   * that role's credentials; otherwise the default credentials must belong to this account.
   * '' means "the default credentials, whatever their account".
   */
  readonly accountId: string;
}

export interface InstanceDescription {
  readonly instanceId: string;
  readonly imageId?: string;
  /** `pending`, `running`, `stopped`, … */
  readonly state?: string;
  readonly launchTime?: Date;
  readonly subnetId?: string;
  readonly vpcId?: string;
  readonly iamInstanceProfileArn?: string;
  readonly tags: Readonly<Record<string, string>>;
}

export interface IamIdentity {
  /** `AIDA…` for users, `AROA…` for roles, `AIPA…` for instance profiles. */
  readonly uniqueId: string;
  /** The full ARN, path included. */
  readonly arn: string;
}

export interface InstanceProfile extends IamIdentity {
  /** ARNs of the roles in the profile (EC2 allows exactly one). */
  readonly roleArns: readonly string[];
}

export interface AccessKey {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
}

/** What rotate-root needs: the key owner's IAM calls, made with that key. */
export interface KeyOwnerIam {
  /** The IAM user the key belongs to (GetUser without a name). */
  currentUserName(): Promise<string>;
  createAccessKey(userName: string): Promise<AccessKey>;
  deleteAccessKey(userName: string, accessKeyId: string): Promise<void>;
  /** Releases the client's connections. */
  close(): void;
}

export interface CloudProvider {
  /** DescribeInstances for one instance ID: the reservations, each with its instances. */
  describeInstances(target: ProviderTarget, instanceId: string): Promise<InstanceDescription[][]>;
  getUser(target: ProviderTarget, userName: string): Promise<IamIdentity>;
  getRole(target: ProviderTarget, roleName: string): Promise<IamIdentity>;
  getInstanceProfile(target: ProviderTarget, profileName: string): Promise<InstanceProfile>;
  /** IAM calls made with one given key pair (rotate-root), outside the cached clients. */
  withKey(key: AccessKey): KeyOwnerIam;
  /** Drops cached clients, assumed credentials and the default account: the configuration changed. */
  flush(): void;
}

/**
 * The provider answered and refused (an unknown instance, a missing user, a quota, access denied):
 * the request or the configuration is wrong, a 400. Its message starts with the provider's error
 * code.
 */
export const ProviderRequestError = createError('ProviderRequestError', 'KW_CLOUD_PROVIDER_REFUSED', 400, { parent: BadRequestError });
export type ProviderRequestError = InstanceType<typeof ProviderRequestError>;

/**
 * The provider could not be reached, did not answer in time, failed on its side, or answered with
 * something unreadable. Nothing the caller can fix by changing the request: a 502.
 */
export const ProviderUnavailableError = createError('ProviderUnavailableError', 'KW_CLOUD_PROVIDER_UNAVAILABLE', 502, { parent: UpstreamError });
export type ProviderUnavailableError = InstanceType<typeof ProviderUnavailableError>;

/** The configuration cannot produce a usable client (half-set static keys, wrong account): a 400. */
export const ProviderConfigError = createError('ProviderConfigError', 'KW_CLOUD_PROVIDER_CONFIG', 400, { parent: BadRequestError });
export type ProviderConfigError = InstanceType<typeof ProviderConfigError>;
