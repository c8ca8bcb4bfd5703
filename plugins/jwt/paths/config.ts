/** `config`: where the keys come from, what tokens must say, and the OIDC client. */
import { X509Certificate } from 'node:crypto';
import { BadRequestError, definePath, type AnyPathDefinition, type FieldSpecs, type FieldValues, type LogicalRequest } from '../../../sdk/index.js';
import { CONFIG_STORAGE_VERSION, SUPPORTED_ALGORITHMS, configResponse, readConfig, writeConfig, type JwtConfig } from '../config.js';
import type { JwtAuthContext } from '../context.js';
import { KeysUnavailableError, TokenKeys, parsePublicKeys } from '../keys.js';

const FIELDS = {
  oidc_discovery_url: {
    type: 'string',
    description: 'The OIDC provider\'s issuer URL, without "/.well-known/openid-configuration". Exclusive with jwks_url and jwt_validation_pubkeys.',
  },
  oidc_discovery_ca_pem: { type: 'string', description: 'CA certificates (PEM) trusted for the discovery URL and its endpoints instead of the system\'s.' },
  oidc_client_id: { type: 'string', description: 'The OAuth client ID registered with the provider (the OIDC flow).' },
  oidc_client_secret: { type: 'string', description: 'The OAuth client secret; never returned.', sensitive: true },
  oidc_response_mode: { type: 'string', description: 'How the provider answers the authorization request: "query" (the default, and the only mode served here).' },
  oidc_response_types: { type: 'comma-string-list', description: 'Response types requested: "code" (the default, and the only type served here).' },
  jwks_url: { type: 'string', description: 'URL of a JWKS document holding the signing keys. Exclusive with oidc_discovery_url and jwt_validation_pubkeys.' },
  jwks_ca_pem: { type: 'string', description: 'CA certificates (PEM) trusted for jwks_url instead of the system\'s.' },
  default_role: { type: 'lowercase-string', description: 'The role of a login that names none.' },
  jwt_validation_pubkeys: {
    type: 'comma-string-list',
    description: 'PEM public keys (or certificates) tokens are verified with, locally. Exclusive with jwks_url and oidc_discovery_url.',
  },
  jwt_supported_algs: {
    type: 'comma-string-list',
    description: `Signing algorithms accepted, among ${SUPPORTED_ALGORITHMS.join(', ')}. Default: all of them for JWT logins, RS256 for the OIDC flow.`,
  },
  bound_issuer: { type: 'string', description: 'The value the "iss" claim of a JWT login must have; empty: not checked.' },
  override_allowed_server_names: {
    type: 'comma-string-list',
    description: 'Names the provider\'s TLS certificate may be valid for, instead of the host of the URL.',
  },
  namespace_in_state: {
    type: 'bool',
    description: 'Vault\'s choice of carrying the namespace in the OIDC state; Keywarden has no namespaces, so neither way carries one.',
  },
  skip_jwks_validation: {
    type: 'bool',
    description: 'Save the configuration with a warning when its discovery URL or JWKS URL cannot be fetched now, instead of refusing it.',
  },
} as const satisfies FieldSpecs;

type Input = FieldValues<typeof FIELDS>;

export function configPath(ctx: JwtAuthContext): AnyPathDefinition {
  return definePath({
    pattern: 'config',
    fields: FIELDS,
    refusedFields: {
      provider_config: 'provider-specific group and user lookups (Azure, Google Workspace) are not supported here',
      jwks_pairs: 'several key sets are not supported here: configure one jwks_url',
    },
    operations: {
      read: {
        summary: 'Read the configuration (without the client secret).',
        handler: async () => {
          const config = await readConfig(ctx.storage);
          return config ? { data: configResponse(config) } : null;
        },
      },
      update: { summary: 'Write the configuration; it replaces the one before.', handler: (req, input) => write(ctx, req, input) },
    },
    synopsis: 'Configure how tokens are verified.',
    description:
      'Exactly one source of keys: jwt_validation_pubkeys (PEM keys, checked locally), jwks_url (a JWKS document), or ' +
      'oidc_discovery_url (an OIDC provider; with oidc_client_id and oidc_client_secret it also serves the authorization-code ' +
      'flow). A URL is fetched when the configuration is written, so a wrong one is refused at once. Only the URLs configured ' +
      'here (and the endpoints the discovery document names) are ever fetched.',
  });
}

async function write(ctx: JwtAuthContext, _req: LogicalRequest, input: Input) {
  const config: JwtConfig = {
    version: CONFIG_STORAGE_VERSION,
    oidc_discovery_url: input.oidc_discovery_url ?? '',
    oidc_discovery_ca_pem: input.oidc_discovery_ca_pem ?? '',
    oidc_client_id: input.oidc_client_id ?? '',
    oidc_client_secret: input.oidc_client_secret ?? '',
    oidc_response_mode: input.oidc_response_mode ?? '',
    oidc_response_types: input.oidc_response_types ?? [],
    jwks_url: input.jwks_url ?? '',
    jwks_ca_pem: input.jwks_ca_pem ?? '',
    jwt_validation_pubkeys: input.jwt_validation_pubkeys ?? [],
    jwt_supported_algs: input.jwt_supported_algs ?? [],
    bound_issuer: input.bound_issuer ?? '',
    default_role: input.default_role ?? '',
    override_allowed_server_names: input.override_allowed_server_names ?? [],
  };
  const sources = [config.oidc_discovery_url !== '', config.jwks_url !== '', config.jwt_validation_pubkeys.length > 0].filter(Boolean).length;
  if (sources !== 1) throw new BadRequestError("exactly one of 'jwt_validation_pubkeys', 'jwks_url', or 'oidc_discovery_url' must be set");
  if ((config.oidc_client_id === '') !== (config.oidc_client_secret === '')) {
    throw new BadRequestError("both 'oidc_client_id' and 'oidc_client_secret' must be set for OIDC");
  }
  if (config.oidc_client_id !== '' && config.oidc_discovery_url === '') throw new BadRequestError("'oidc_discovery_url' must be set for OIDC");
  if (config.oidc_discovery_url.includes('.well-known/openid-configuration')) throw new BadRequestError("'oidc_discovery_url' contains '.well-known' component");
  for (const [field, url] of [['oidc_discovery_url', config.oidc_discovery_url], ['jwks_url', config.jwks_url]] as const) {
    if (url !== '' && !/^https?:\/\/[^/]/.test(url)) throw new BadRequestError(`'${field}' must be an http or https URL`);
  }
  for (const field of ['oidc_discovery_ca_pem', 'jwks_ca_pem'] as const) {
    if (config[field] !== '' && !holdsCertificates(config[field])) throw new BadRequestError(`error checking ${field}: could not parse CA PEM value successfully`);
  }
  try {
    parsePublicKeys(config.jwt_validation_pubkeys);
  } catch (err) {
    throw new BadRequestError((err as Error).message);
  }
  for (const alg of config.jwt_supported_algs) {
    if (!(SUPPORTED_ALGORITHMS as readonly string[]).includes(alg)) throw new BadRequestError(`invalid jwt_supported_algs: unsupported signing algorithm "${alg}"`);
  }
  for (const type of config.oidc_response_types) {
    if (type === 'id_token') throw new BadRequestError('oidc_response_types "id_token" (the implicit flow) is not supported here: use "code"');
    if (type !== 'code') throw new BadRequestError(`invalid response_types [${config.oidc_response_types.join(' ')}]. 'code' and 'id_token' are allowed`);
  }
  if (config.oidc_response_mode === 'form_post') throw new BadRequestError('oidc_response_mode "form_post" is not supported here: use "query"');
  if (config.oidc_response_mode !== '' && config.oidc_response_mode !== 'query') throw new BadRequestError(`invalid response_mode: "${config.oidc_response_mode}"`);

  const warnings: string[] = [];
  const remote = config.oidc_discovery_url !== '' ? 'oidc discovery URL' : config.jwks_url !== '' ? 'jwks URL' : undefined;
  if (remote) {
    const keys = new TokenKeys(config, { clock: ctx.clock, timeoutMs: ctx.timeoutMs });
    try {
      if (config.oidc_discovery_url !== '') await keys.provider();
      else await keys.check();
    } catch (err) {
      if (!(err instanceof KeysUnavailableError)) throw err;
      if (!input.skip_jwks_validation) throw new BadRequestError(`error checking ${remote}: ${err.message}`);
      warnings.push(`error checking ${remote}: ${err.message}`);
    }
  }
  await writeConfig(ctx.storage, config);
  ctx.keys.reset();
  return warnings.length > 0 ? { warnings } : null;
}

/** Whether a PEM text holds at least one certificate, and nothing unreadable. */
function holdsCertificates(pem: string): boolean {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0) return false;
  try {
    for (const block of blocks) new X509Certificate(block);
    return true;
  } catch {
    return false;
  }
}
