/** `config/client`: credentials, endpoints and retries for provider calls, and the iam login header rules. */
import { definePath, type AnyPathDefinition, type FieldSpecs, type FieldValues, type LogicalRequest, BadRequestError, givenValue } from '../../../sdk/index.js';
import type { CloudAuthContext } from '../context.js';
import { emptyClientConfig, readClientConfig, type ClientConfig } from '../client-config.js';
import { STORAGE_KEYS, writeJson } from '../storage.js';
import { canonicalHeaderKey, checkEndpoint } from '../input.js';

const FIELDS = {
  access_key: { type: 'string', description: 'Access key for provider calls (describe instances, read IAM principals, assume STS roles).' },
  secret_key: { type: 'string', description: 'Secret key paired with access_key; never returned.', sensitive: true },
  endpoint: { type: 'string', description: 'URL overriding the EC2 endpoint.' },
  iam_endpoint: { type: 'string', description: 'URL overriding the IAM endpoint.' },
  sts_endpoint: { type: 'string', description: 'URL overriding the STS endpoint (also where iam logins are sent); set sts_region with it.' },
  sts_region: { type: 'string', description: 'Region of sts_endpoint.' },
  use_sts_region_from_client: {
    type: 'bool',
    description: "Send iam logins to the regional STS endpoint of the region in the client's signature, instead of sts_endpoint.",
  },
  iam_server_id_header_value: {
    type: 'string',
    description: 'Value that iam logins must send, signed, in the X-Service-Cloud-IAM-Server-ID (or X-Vault-AWS-IAM-Server-ID) header.',
  },
  allowed_sts_header_values: {
    type: 'comma-string-list',
    description: 'X-Amz-* headers allowed in iam login requests beyond the default list.',
  },
  max_retries: { type: 'int', description: 'Retries of recoverable provider errors; -1 is the SDK default.', minimum: -1 },
  disable_automated_rotation: {
    type: 'bool',
    description: 'Whether automated rotation of the access key is off: it never runs here (rotate with config/rotate-root), so it is off either way.',
  },
} as const satisfies FieldSpecs;

type Input = FieldValues<typeof FIELDS>;

export function configClientPath(ctx: CloudAuthContext): AnyPathDefinition {
  return definePath({
    pattern: 'config/client',
    fields: FIELDS,
    refusedFields: {
      role_arn: 'the role is assumed with a plugin identity token, which this server does not issue; configure access_key and secret_key',
      identity_token_audience: 'plugin identity tokens (workload identity federation) are not issued here',
      identity_token_ttl: 'plugin identity tokens (workload identity federation) are not issued here',
      rotation_period: 'automated root-credential rotation is a Vault Enterprise feature; rotate with config/rotate-root',
      rotation_schedule: 'automated root-credential rotation is a Vault Enterprise feature; rotate with config/rotate-root',
      rotation_window: 'automated root-credential rotation is a Vault Enterprise feature; rotate with config/rotate-root',
    },
    existenceCheck: async () => (await readClientConfig(ctx.storage)) !== undefined,
    operations: {
      read: {
        summary: 'Read the client configuration (without the secret key).',
        handler: async () => {
          const config = await readClientConfig(ctx.storage);
          if (!config) return null;
          const { secret_key: _secret, ...visible } = config;
          return { data: visible };
        },
      },
      create: { summary: 'Write the client configuration.', handler: (req, input) => write(req, input) },
      update: { summary: 'Update the client configuration; fields not sent keep their values.', handler: (req, input) => write(req, input) },
      delete: {
        summary: 'Delete the client configuration.',
        handler: async () => {
          await ctx.storage.delete(STORAGE_KEYS.clientConfig);
          ctx.provider.flush();
          return null;
        },
      },
    },
    synopsis: 'Configure how the method reaches the cloud provider.',
    description:
      'Static credentials (else CLOUD_ACCESS_KEY/CLOUD_SECRET_KEY, else instance metadata), endpoint overrides, retries, ' +
      'and the rules for iam login requests. Changing credentials, endpoints or retries drops the cached provider clients.',
  });

  async function write(req: LogicalRequest, input: Input) {
    const current = (await readClientConfig(ctx.storage)) ?? emptyClientConfig();
    const next: ClientConfig = { ...current };
    let changedClients = false;
    const strings = ['access_key', 'secret_key', 'endpoint', 'iam_endpoint', 'sts_endpoint', 'sts_region'] as const;
    for (const name of strings) {
      const value = givenValue(req, input[name], name, '');
      if (value !== undefined && value !== next[name]) {
        next[name] = value;
        changedClients = true;
      }
    }
    checkEndpoint('endpoint', next.endpoint);
    checkEndpoint('iam_endpoint', next.iam_endpoint);
    checkEndpoint('sts_endpoint', next.sts_endpoint);
    if (input.max_retries !== undefined && input.max_retries !== next.max_retries) {
      next.max_retries = input.max_retries;
      changedClients = true;
    }
    if (input.use_sts_region_from_client !== undefined) next.use_sts_region_from_client = input.use_sts_region_from_client;
    const serverId = givenValue(req, input.iam_server_id_header_value, 'iam_server_id_header_value', '');
    if (serverId !== undefined) next.iam_server_id_header_value = serverId;
    const allowed = givenValue(req, input.allowed_sts_header_values, 'allowed_sts_header_values', []);
    if (allowed !== undefined) {
      const bad = allowed.find((name) => !/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(name));
      if (bad !== undefined) throw new BadRequestError(`invalid header name "${bad}" in allowed_sts_header_values`);
      next.allowed_sts_header_values = allowed.map(canonicalHeaderKey);
    }
    await writeJson(ctx.storage, STORAGE_KEYS.clientConfig, next);
    if (changedClients) ctx.provider.flush();
    return null;
  }
}
