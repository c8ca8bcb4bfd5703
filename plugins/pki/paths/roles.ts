/**
 * `roles/:name` and `roles/`: what certificates a role issues, with Vault's fields and defaults
 * (https://developer.hashicorp.com/vault/api-docs/secret/pki#create-update-role). A write replaces
 * the role: a field left out takes its default, as in Vault.
 */
import { BadRequestError, definePath, listResponse, type AnyPathDefinition, type FieldValues } from '../../../sdk/index.js';
import type { PkiContext } from '../context.js';
import { KEY_USAGE_BITS } from '../der.js';
import { checkKey } from '../keys.js';
import type { Role } from '../role.js';

const list = (description: string, value: string[] = []) => ({ type: 'comma-string-list', description, default: value }) as const;
const flag = (description: string, value: boolean) => ({ type: 'bool', description, default: value }) as const;

const ROLE_FIELDS = {
  name: { type: 'string', description: 'The role\'s name.', required: true },
  ttl: { type: 'duration', description: 'The certificates\' TTL when a request asks for none; 0: the mount\'s default.', default: 0 },
  max_ttl: { type: 'duration', description: 'The longest TTL a request may ask for; 0: the mount\'s max.', default: 0 },
  allow_localhost: flag('Allow `localhost` (and `localdomain`) as a name.', true),
  allowed_domains: list('Domains the names may be in (with allow_bare_domains, allow_subdomains, allow_glob_domains).'),
  allow_bare_domains: flag('Allow the allowed domains themselves as names.', false),
  allow_subdomains: flag('Allow names below the allowed domains.', false),
  allow_glob_domains: flag('Read `*` in allowed_domains as a glob.', false),
  allow_wildcard_certificates: flag('Allow wildcard names (`*.example.com`).', true),
  allow_any_name: flag('Allow any name.', false),
  enforce_hostnames: flag('Names must be valid hostnames (or e-mail addresses).', true),
  allow_ip_sans: flag('Allow IP SANs.', true),
  server_flag: flag('Certificates are for TLS servers (extended key usage serverAuth).', true),
  client_flag: flag('Certificates are for TLS clients (clientAuth).', true),
  code_signing_flag: flag('Certificates are for code signing.', false),
  email_protection_flag: flag('Certificates are for e-mail protection.', false),
  key_type: { type: 'string', description: '`rsa`, `ec`, `ed25519`, or `any` (sign only).', default: 'rsa', allowedValues: ['rsa', 'ec', 'ed25519', 'any'] },
  key_bits: { type: 'int', description: 'RSA modulus or EC curve size; 0 picks 2048 or 256. A CSR\'s key must be at least this.', default: 0 },
  key_usage: list('Key usages (Vault\'s names: DigitalSignature, KeyAgreement, KeyEncipherment, …).', ['DigitalSignature', 'KeyAgreement', 'KeyEncipherment']),
  ext_key_usage: list('More extended key usages: refused unless empty.'),
  use_csr_common_name: flag('sign: take the CN from the CSR, not common_name.', true),
  use_csr_sans: flag('sign: take the SANs from the CSR, not alt_names and ip_sans.', true),
  ou: list('The OU values of issued certificates\' subjects.'),
  organization: list('The O values.'),
  country: list('The C values.'),
  locality: list('The L values.'),
  province: list('The ST values.'),
  street_address: list('The street address values.'),
  postal_code: list('The postal code values.'),
  generate_lease: flag('Issue every certificate with a lease; revoking the lease revokes the certificate.', false),
  no_store: flag('Do not store issued certificates (they cannot be revoked or listed).', false),
  require_cn: flag('A request must name a common name.', true),
  not_before_duration: { type: 'duration', description: 'How far before the issue time the validity starts.', default: 30 },
  basic_constraints_valid_for_non_ca: flag('Write basicConstraints (CA false) into issued certificates.', false),
  issuer_ref: { type: 'string', description: 'Only `default`: one issuer per mount.', default: 'default', allowedValues: ['default', ''] },
} as const;

const REFUSED = {
  allowed_uri_sans: 'URI SANs are not supported by Keywarden\'s pki engine',
  allowed_other_sans: 'other SANs are not supported by Keywarden\'s pki engine',
  allowed_serial_numbers: 'subject serial numbers are not supported by Keywarden\'s pki engine',
  allowed_user_ids: 'user ids are not supported by Keywarden\'s pki engine',
  allowed_domains_template: 'templated domains are not supported by Keywarden\'s pki engine',
  allowed_uri_sans_template: 'URI SANs are not supported by Keywarden\'s pki engine',
  policy_identifiers: 'certificate policies are not supported by Keywarden\'s pki engine',
  signature_bits: 'the signature hash follows the issuer\'s key',
  use_pss: 'PSS signatures are not supported by Keywarden\'s pki engine',
  not_after: 'set ttl instead',
  cn_validations: 'the common name is checked as Vault\'s default does',
} as const;

function roleOf(input: FieldValues<typeof ROLE_FIELDS>): Role {
  const keyType = input.key_type as Role['key_type'];
  const keyBits = keyType === 'any' ? input.key_bits : checkKey(keyType, input.key_bits).bits;
  const unknownUsage = input.key_usage.find((u) => KEY_USAGE_BITS[u.toLowerCase()] === undefined);
  if (unknownUsage !== undefined) throw new BadRequestError(`key_usage: unknown key usage "${unknownUsage}"`);
  if (input.ext_key_usage.length > 0) throw new BadRequestError('ext_key_usage: not supported by Keywarden\'s pki engine; use server_flag, client_flag, code_signing_flag and email_protection_flag');
  if (input.max_ttl > 0 && input.ttl > input.max_ttl) throw new BadRequestError('"ttl" value must be less than "max_ttl" value');
  if (input.generate_lease && input.no_store) throw new BadRequestError('generate_lease and no_store cannot both be set: revoking a lease revokes the stored certificate');
  const { name: _name, issuer_ref: _issuer, key_type: _type, key_bits: _bits, ...rest } = input;
  return { ...rest, key_type: keyType, key_bits: keyBits };
}

export function rolePaths(ctx: PkiContext): AnyPathDefinition[] {
  const role = definePath({
    pattern: 'roles/:name',
    fields: ROLE_FIELDS,
    refusedFields: REFUSED,
    existenceCheck: async (_req, input) => (await ctx.store.role(input.name)) !== undefined,
    operations: {
      create: { summary: 'Create a role.', handler: async (_req, input) => write(input) },
      update: { summary: 'Replace a role.', handler: async (_req, input) => write(input) },
      read: {
        summary: 'Read a role.',
        handler: async (_req, input) => {
          const found = await ctx.store.role(input.name);
          return found ? { data: show(found) } : null;
        },
      },
      delete: {
        summary: 'Delete a role.',
        handler: async (_req, input) => {
          await ctx.store.deleteRole(input.name);
          return null;
        },
      },
    },
    synopsis: 'A role: the certificates it issues.',
    description: 'Names a certificate may carry, its key, TTLs and usages; whether it is stored and leased.',
  });

  async function write(input: FieldValues<typeof ROLE_FIELDS>) {
    const stored = roleOf(input);
    await ctx.store.putRole(input.name, stored);
    return { data: show(stored) };
  }

  const roles = definePath({
    pattern: 'roles/',
    fields: {},
    operations: { list: { summary: 'List the roles.', handler: async () => listResponse(await ctx.store.roles()) } },
    synopsis: 'The roles.',
    description: 'Their names.',
  });

  return [role, roles];
}

/** A role as read: Vault's fields, the ones not supported shown empty. */
function show(role: Role): Record<string, unknown> {
  return { ...role, issuer_ref: 'default', allowed_uri_sans: [], allowed_other_sans: [], ext_key_usage: [], allowed_domains_template: false };
}
