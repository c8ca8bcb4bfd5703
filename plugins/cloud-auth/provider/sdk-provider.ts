/**
 * The real provider: the official SDK clients for EC2, IAM and STS, built from `config/client`
 * (endpoints, retries, static keys), the environment or instance metadata, and — for a satellite
 * account — credentials of the role `config/sts/<account>` names. Clients are cached per region
 * and account until `flush()`, which the configuration paths call on every change.
 */
import type { EC2Client, Instance } from '@aws-sdk/client-ec2';
import type { IAMClient } from '@aws-sdk/client-iam';
import type { STSClient } from '@aws-sdk/client-sts';
import type { ClientConfig } from '../client-config.js';
import { baseCredentials, defaultRegion, type Credentials, type CredentialsProvider } from './credentials.js';
import {
  ProviderConfigError,
  ProviderRequestError,
  ProviderUnavailableError,
  type AccessKey,
  type CloudProvider,
  type IamIdentity,
  type InstanceDescription,
  type InstanceProfile,
  type KeyOwnerIam,
  type ProviderTarget,
} from './types.js';

export interface SdkProviderOptions {
  /** The current `config/client`, read whenever a client is built. */
  loadConfig(): Promise<ClientConfig | undefined>;
  /** The `config/sts/<account>` role, if any. */
  loadStsRole(accountId: string): Promise<string | undefined>;
  readonly env: NodeJS.ProcessEnv;
  /** Connection timeout and whole-answer timeout of one provider call, ms. */
  readonly timeoutMs: number;
}

/** Refresh assumed-role credentials this long before they expire. */
const ASSUMED_EXPIRY_MARGIN_MS = 5 * 60 * 1000;

type AnyClient = EC2Client | IAMClient | STSClient;

/**
 * The SDK client modules, each loaded on first use: EC2 is by far the largest (about 0.5 s and
 * 90 MB when imported) and only ec2 logins and inferred iam logins need it; IAM and STS (about 4
 * and 3 MB of heap, more in code and young space at start-up) serve only unique-ID resolution,
 * access-key rotation and cross-account roles, and an iam login itself never uses them (its
 * GetCallerIdentity goes out as the client signed it, sts.ts). A server that never calls the
 * provider does not pay for them, nor for the SDK's HTTP handler, in start-up time or memory.
 */
let ec2Module: Promise<typeof import('@aws-sdk/client-ec2')> | undefined;
const loadEc2 = () => (ec2Module ??= import('@aws-sdk/client-ec2'));
let iamModule: Promise<typeof import('@aws-sdk/client-iam')> | undefined;
const loadIam = () => (iamModule ??= import('@aws-sdk/client-iam'));
let stsModule: Promise<typeof import('@aws-sdk/client-sts')> | undefined;
const loadSts = () => (stsModule ??= import('@aws-sdk/client-sts'));
let httpModule: Promise<typeof import('@smithy/node-http-handler')> | undefined;
const loadHttp = () => (httpModule ??= import('@smithy/node-http-handler'));

export class SdkCloudProvider implements CloudProvider {
  private readonly clients = new Map<string, AnyClient>();
  private readonly assumed = new Map<string, CredentialsProvider>();
  /** The account of the default credentials, learned once (GetCallerIdentity) per configuration. */
  private defaultAccount: Promise<string> | undefined;
  /** Bumped by flush, so a client built from an older configuration is never cached. */
  private generation = 0;

  constructor(private readonly options: SdkProviderOptions) {}

  flush(): void {
    this.generation++;
    for (const client of this.clients.values()) client.destroy();
    this.clients.clear();
    this.assumed.clear();
    this.defaultAccount = undefined;
  }

  async describeInstances(target: ProviderTarget, instanceId: string): Promise<InstanceDescription[][]> {
    const client = await this.client('ec2', target);
    const { DescribeInstancesCommand } = await loadEc2();
    const out = await call(`DescribeInstances in ${target.region}`, () => client.send(new DescribeInstancesCommand({ InstanceIds: [instanceId] })));
    return (out.Reservations ?? []).map((reservation) => (reservation.Instances ?? []).map(describeInstance));
  }

  async getUser(target: ProviderTarget, userName: string): Promise<IamIdentity> {
    const client = await this.client('iam', target);
    const { GetUserCommand } = await loadIam();
    const out = await call('GetUser', () => client.send(new GetUserCommand({ UserName: userName })));
    if (!out.User?.UserId || !out.User.Arn) throw new ProviderUnavailableError('GetUser answered without a user');
    return { uniqueId: out.User.UserId, arn: out.User.Arn };
  }

  async getRole(target: ProviderTarget, roleName: string): Promise<IamIdentity> {
    const client = await this.client('iam', target);
    const { GetRoleCommand } = await loadIam();
    const out = await call('GetRole', () => client.send(new GetRoleCommand({ RoleName: roleName })));
    if (!out.Role?.RoleId || !out.Role.Arn) throw new ProviderUnavailableError('GetRole answered without a role');
    return { uniqueId: out.Role.RoleId, arn: out.Role.Arn };
  }

  async getInstanceProfile(target: ProviderTarget, profileName: string): Promise<InstanceProfile> {
    const client = await this.client('iam', target);
    const { GetInstanceProfileCommand } = await loadIam();
    const out = await call('GetInstanceProfile', () => client.send(new GetInstanceProfileCommand({ InstanceProfileName: profileName })));
    const profile = out.InstanceProfile;
    if (!profile?.InstanceProfileId || !profile.Arn) throw new ProviderUnavailableError('GetInstanceProfile answered without a profile');
    return {
      uniqueId: profile.InstanceProfileId,
      arn: profile.Arn,
      roleArns: (profile.Roles ?? []).map((role) => role.Arn ?? '').filter((arn) => arn !== ''),
    };
  }

  withKey(key: AccessKey): KeyOwnerIam {
    const client = this.keyClient(key);
    return {
      async currentUserName() {
        const { GetUserCommand } = await loadIam();
        const out = await call('GetUser', () => client.then((c) => c.send(new GetUserCommand({}))));
        if (!out.User?.UserName) throw new ProviderUnavailableError('GetUser answered without a user name');
        return out.User.UserName;
      },
      async createAccessKey(userName) {
        const { CreateAccessKeyCommand } = await loadIam();
        const out = await call('CreateAccessKey', () => client.then((c) => c.send(new CreateAccessKeyCommand({ UserName: userName }))));
        const created = out.AccessKey;
        if (!created?.AccessKeyId || !created.SecretAccessKey) throw new ProviderUnavailableError('CreateAccessKey answered without a key');
        return { accessKeyId: created.AccessKeyId, secretAccessKey: created.SecretAccessKey };
      },
      async deleteAccessKey(userName, accessKeyId) {
        const { DeleteAccessKeyCommand } = await loadIam();
        await call('DeleteAccessKey', () => client.then((c) => c.send(new DeleteAccessKeyCommand({ UserName: userName, AccessKeyId: accessKeyId }))));
      },
      close() {
        void client.then((c) => c.destroy());
      },
    };
  }

  /** A cached EC2 or IAM client for a region and account. */
  private async client(kind: 'ec2', target: ProviderTarget): Promise<EC2Client>;
  private async client(kind: 'iam', target: ProviderTarget): Promise<IAMClient>;
  private async client(kind: 'ec2' | 'iam', target: ProviderTarget): Promise<AnyClient> {
    const key = `${kind}|${target.region}|${target.accountId}`;
    const cached = this.clients.get(key);
    if (cached) return cached;
    const generation = this.generation;
    const config = await this.options.loadConfig();
    const credentials = await this.credentialsFor(config, target.accountId);
    const settings = await this.settings(config, target.region, credentials);
    const client =
      kind === 'ec2'
        ? new (await loadEc2()).EC2Client({ ...settings, ...(config?.endpoint ? { endpoint: config.endpoint } : {}) })
        : new (await loadIam()).IAMClient({ ...settings, ...(config?.iam_endpoint ? { endpoint: config.iam_endpoint } : {}) });
    if (generation === this.generation && !this.clients.has(key)) this.clients.set(key, client);
    return client;
  }

  /** The credentials for an account: its STS role's, or the default ones if they are that account's. */
  private async credentialsFor(config: ClientConfig | undefined, accountId: string): Promise<CredentialsProvider> {
    const base = baseCredentials({ config, env: this.options.env, timeoutMs: this.options.timeoutMs });
    if (!accountId) return base;
    const stsRole = await this.options.loadStsRole(accountId);
    if (stsRole) return this.assumedRole(config, base, stsRole);
    const defaultAccount = await this.defaultAccountId(config, base);
    if (defaultAccount !== accountId) {
      throw new ProviderConfigError(`unable to fetch client for account ID "${accountId}" -- default client is for account "${defaultAccount}"`);
    }
    return base;
  }

  private defaultAccountId(config: ClientConfig | undefined, base: CredentialsProvider): Promise<string> {
    if (!this.defaultAccount) {
      const generation = this.generation;
      const lookup = (async () => {
        const { GetCallerIdentityCommand } = await loadSts();
        const sts = await this.stsClient(config, base);
        try {
          const out = await call('GetCallerIdentity', () => sts.send(new GetCallerIdentityCommand({})));
          if (!out.Account) throw new ProviderUnavailableError('GetCallerIdentity answered without an account');
          return out.Account;
        } finally {
          sts.destroy();
        }
      })();
      // A failed lookup is not remembered: the next call tries again.
      lookup.catch(() => {
        if (this.defaultAccount === lookup) this.defaultAccount = undefined;
      });
      if (generation === this.generation) this.defaultAccount = lookup;
      return lookup;
    }
    return this.defaultAccount;
  }

  /** Credentials of an assumed role, renewed shortly before they expire. */
  private assumedRole(config: ClientConfig | undefined, base: CredentialsProvider, roleArn: string): CredentialsProvider {
    const existing = this.assumed.get(roleArn);
    if (existing) return existing;
    let current: Credentials | undefined;
    const provider: CredentialsProvider = async () => {
      if (current?.expiration && current.expiration.getTime() - Date.now() > ASSUMED_EXPIRY_MARGIN_MS) return current;
      const { AssumeRoleCommand } = await loadSts();
      const sts = await this.stsClient(config, base);
      try {
        const out = await call(`AssumeRole of ${roleArn}`, () =>
          sts.send(new AssumeRoleCommand({ RoleArn: roleArn, RoleSessionName: `keywarden-${Date.now()}` })),
        );
        const c = out.Credentials;
        if (!c?.AccessKeyId || !c.SecretAccessKey) throw new ProviderUnavailableError(`AssumeRole of ${roleArn} answered without credentials`);
        current = {
          accessKeyId: c.AccessKeyId,
          secretAccessKey: c.SecretAccessKey,
          ...(c.SessionToken ? { sessionToken: c.SessionToken } : {}),
          ...(c.Expiration ? { expiration: c.Expiration } : {}),
        };
        return current;
      } finally {
        sts.destroy();
      }
    };
    this.assumed.set(roleArn, provider);
    return provider;
  }

  private async stsClient(config: ClientConfig | undefined, credentials: CredentialsProvider): Promise<STSClient> {
    const region = config?.sts_region || defaultRegion(this.options.env);
    const { STSClient } = await loadSts();
    return new STSClient({ ...(await this.settings(config, region, credentials)), ...(config?.sts_endpoint ? { endpoint: config.sts_endpoint } : {}) });
  }

  private async keyClient(key: AccessKey): Promise<IAMClient> {
    const config = await this.options.loadConfig();
    const credentials = { accessKeyId: key.accessKeyId, secretAccessKey: key.secretAccessKey };
    const { IAMClient } = await loadIam();
    return new IAMClient({
      ...(await this.settings(config, defaultRegion(this.options.env), async () => credentials)),
      ...(config?.iam_endpoint ? { endpoint: config.iam_endpoint } : {}),
    });
  }

  private async settings(config: ClientConfig | undefined, region: string, credentials: CredentialsProvider) {
    const timeout = this.options.timeoutMs;
    const { NodeHttpHandler } = await loadHttp();
    return {
      region,
      credentials,
      // max_retries counts retries; the SDK counts attempts. -1 keeps the SDK's default (3 attempts).
      ...(config && config.max_retries >= 0 ? { maxAttempts: config.max_retries + 1 } : {}),
      requestHandler: new NodeHttpHandler({ connectionTimeout: timeout, requestTimeout: timeout, throwOnRequestTimeout: true }),
    };
  }
}

function describeInstance(instance: Instance): InstanceDescription {
  const tags: Record<string, string> = {};
  for (const tag of instance.Tags ?? []) if (tag.Key !== undefined) tags[tag.Key] = tag.Value ?? '';
  return {
    instanceId: instance.InstanceId ?? '',
    ...(instance.ImageId ? { imageId: instance.ImageId } : {}),
    ...(instance.State?.Name ? { state: instance.State.Name } : {}),
    ...(instance.LaunchTime ? { launchTime: instance.LaunchTime } : {}),
    ...(instance.SubnetId ? { subnetId: instance.SubnetId } : {}),
    ...(instance.VpcId ? { vpcId: instance.VpcId } : {}),
    ...(instance.IamInstanceProfile?.Arn ? { iamInstanceProfileArn: instance.IamInstanceProfile.Arn } : {}),
    tags,
  };
}

/** Runs one SDK call and turns whatever it throws into the interface's sentinel errors. */
async function call<T>(what: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    throw translate(what, err);
  }
}

interface SdkError {
  /** The provider's own error code (`NoSuchEntity`), where the SDK's name is `NoSuchEntityException`. */
  Code?: string;
  name?: string;
  message?: string;
  code?: string;
  $fault?: string;
  $metadata?: { httpStatusCode?: number };
}

function translate(what: string, err: unknown): Error {
  if (err instanceof ProviderRequestError || err instanceof ProviderUnavailableError || err instanceof ProviderConfigError) return err;
  const e = (err ?? {}) as SdkError;
  const status = e.$metadata?.httpStatusCode;
  const name = e.Code ?? e.name ?? 'Error';
  const message = e.message || e.code || String(err);
  if (typeof e.$fault === 'string' && status !== undefined && status >= 400 && status < 500 && name !== 'Error') {
    return new ProviderRequestError(`${name}: ${message}`);
  }
  if (status !== undefined && status >= 500) return new ProviderUnavailableError(`${what} failed on the provider's side (${status}): ${name}: ${message}`);
  if (name === 'TimeoutError' || e.code === 'ETIMEDOUT') return new ProviderUnavailableError(`${what}: the provider did not answer in time`);
  if (e.code) return new ProviderUnavailableError(`${what}: the provider could not be reached (${e.code})`);
  return new ProviderUnavailableError(`${what}: the provider's answer could not be read (${message})`);
}
