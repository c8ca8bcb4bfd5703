/**
 * A role: which names a certificate may carry, its key, its lifetime and usages, with Vault's
 * field names and defaults (https://developer.hashicorp.com/vault/api-docs/secret/pki#create-update-role),
 * and the check of requested names against it (Vault's rules: localhost, bare domains,
 * subdomains, globs, wildcards, any name; hostnames enforced unless turned off).
 */
import { isIP } from 'node:net';
import { BadRequestError, globMatch } from '../../sdk/index.js';
import type { KeyType } from './keys.js';

export interface Role {
  readonly ttl: number;
  readonly max_ttl: number;
  readonly allow_localhost: boolean;
  readonly allowed_domains: string[];
  readonly allow_bare_domains: boolean;
  readonly allow_subdomains: boolean;
  readonly allow_glob_domains: boolean;
  readonly allow_wildcard_certificates: boolean;
  readonly allow_any_name: boolean;
  readonly enforce_hostnames: boolean;
  readonly allow_ip_sans: boolean;
  readonly server_flag: boolean;
  readonly client_flag: boolean;
  readonly code_signing_flag: boolean;
  readonly email_protection_flag: boolean;
  readonly key_type: KeyType | 'any';
  readonly key_bits: number;
  readonly key_usage: string[];
  readonly ext_key_usage: string[];
  readonly use_csr_common_name: boolean;
  readonly use_csr_sans: boolean;
  readonly ou: string[];
  readonly organization: string[];
  readonly country: string[];
  readonly locality: string[];
  readonly province: string[];
  readonly street_address: string[];
  readonly postal_code: string[];
  readonly generate_lease: boolean;
  readonly no_store: boolean;
  readonly require_cn: boolean;
  readonly not_before_duration: number;
  readonly basic_constraints_valid_for_non_ca: boolean;
}

/** Checks a hostname as Vault does with enforce_hostnames: letters, digits and hyphens, with one leading `*.` label at most. */
function validHostname(name: string): boolean {
  const labels = (name.startsWith('*.') ? name.slice(2) : name).split('.');
  return name.length <= 253 && labels.every((l) => /^[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?$/.test(l));
}

/** Whether the role allows `name` (a common name or a DNS or e-mail SAN). */
function allows(role: Role, name: string): boolean {
  // An e-mail address is checked by its domain, as in Vault.
  const host = name.includes('@') ? name.slice(name.lastIndexOf('@') + 1) : name;
  if (role.enforce_hostnames && !validHostname(host)) return false;
  if (role.allow_any_name) return true;
  if (role.allow_localhost && (host === 'localhost' || host === 'localdomain' || host.endsWith('.localhost'))) return true;
  const wildcard = host.startsWith('*.');
  if (wildcard && !role.allow_wildcard_certificates) return false;
  const base = wildcard ? host.slice(2) : host;
  for (const domain of role.allowed_domains) {
    if (domain === '') continue;
    // A wildcard of a bare domain (`*.example.com` for `example.com`) is a subdomain certificate.
    if (role.allow_bare_domains && !wildcard && host === domain) return true;
    if (role.allow_subdomains && (base.endsWith(`.${domain}`) || (wildcard && base === domain))) return true;
    if (role.allow_glob_domains && domain.includes('*') && globMatch(domain, host)) return true;
  }
  return false;
}

/**
 * @throws BadRequestError with Vault's wording for the first name the role does not allow, or an
 *   IP SAN when the role takes none or one that is no IP address.
 */
export function checkNames(role: Role, commonName: string, dnsNames: readonly string[], emails: readonly string[], ips: readonly string[]): void {
  if (commonName !== '' && !allows(role, commonName)) throw new BadRequestError(`common name ${commonName} not allowed by this role`);
  for (const name of [...dnsNames, ...emails]) {
    if (!allows(role, name)) throw new BadRequestError(`subject alternate name ${name} not allowed by this role`);
  }
  if (ips.length > 0 && !role.allow_ip_sans) throw new BadRequestError(`IP Subject Alternative Names are not allowed in this role, but was provided ${ips.join(', ')}`);
  for (const ip of ips) if (isIP(ip) === 0) throw new BadRequestError(`the value "${ip}" is not a valid IP address`);
}
