/**
 * The token settings every Vault auth method keeps on its roles or users: `token_ttl`,
 * `token_max_ttl`, `token_period`, `token_explicit_max_ttl`, `token_policies`,
 * `token_bound_cidrs`, `token_no_default_policy`, `token_num_uses` and `token_type`, with the
 * rules Vault applies to them (https://developer.hashicorp.com/vault/docs/concepts/tokens), the
 * deprecated names some methods still accept (`policies`, `ttl`, `max_ttl`, `period`,
 * `bound_cidrs`, `num_uses`), and the token settings a login hands the host.
 *
 * A plugin spreads {@link TOKEN_FIELDS} (and the {@link LEGACY_TOKEN_FIELDS} it accepts) into a
 * path's fields, keeps a {@link TokenSettings} in its stored record, updates it with
 * {@link applyTokenFields}, shows it with {@link tokenSettingsResponse}, refuses a login from
 * outside its CIDR blocks with {@link checkLoginAddress} and logs in with {@link tokenAuth}.
 */
import { isIP } from 'node:net';
import { BadRequestError, PermissionDeniedError } from '../core/errors.js';
import { cidrAllows } from '../core/auth/cidr.js';
import type { FieldSpecs } from '../core/framework/fields.js';
import type { AuthResult, LogicalRequest } from '../core/framework/request.js';

export type TokenTypeSetting = 'default' | 'service' | 'batch';

const TOKEN_TYPES: readonly TokenTypeSetting[] = ['default', 'service', 'batch'];

/** The stored token settings; durations in seconds. */
export interface TokenSettings {
  token_ttl: number;
  token_max_ttl: number;
  token_period: number;
  token_explicit_max_ttl: number;
  token_policies: string[];
  token_bound_cidrs: string[];
  token_no_default_policy: boolean;
  token_num_uses: number;
  token_type: TokenTypeSetting;
}

/**
 * Values written through a deprecated name, echoed back under that name on read, as Vault does:
 * a client that wrote `policies` reads `policies` back, until it writes `token_policies`.
 */
export interface LegacyTokenValues {
  policies?: string[];
  ttl?: number;
  max_ttl?: number;
  period?: number;
  bound_cidrs?: string[];
  num_uses?: number;
}

/** A record that carries token settings and the deprecated names it was written with. */
export interface WithTokenSettings extends TokenSettings {
  legacy: LegacyTokenValues;
}

export const TOKEN_FIELDS = {
  token_ttl: { type: 'duration', description: 'Incremental lifetime of tokens.' },
  token_max_ttl: { type: 'duration', description: 'Maximum lifetime of tokens.' },
  token_period: { type: 'duration', description: 'Tokens are periodic with this period.' },
  token_explicit_max_ttl: { type: 'duration', description: 'Hard cap on token lifetime.' },
  token_policies: { type: 'comma-string-list', description: 'Policies of tokens.' },
  token_bound_cidrs: { type: 'comma-string-list', description: 'CIDR blocks logins and tokens are limited to.' },
  token_no_default_policy: { type: 'bool', description: 'Do not add the default policy.' },
  token_num_uses: { type: 'int', description: 'Uses of a token; 0 is unlimited.' },
  token_type: { type: 'string', description: 'service, batch or default (the mount tune).' },
} as const satisfies FieldSpecs;

/** The deprecated names; a plugin declares only those Vault's method of the same kind accepts. */
export const LEGACY_TOKEN_FIELDS = {
  policies: { type: 'comma-string-list', description: 'Deprecated: use token_policies.' },
  ttl: { type: 'duration', description: 'Deprecated: use token_ttl.', deprecated: true },
  max_ttl: { type: 'duration', description: 'Deprecated: use token_max_ttl.', deprecated: true },
  period: { type: 'duration', description: 'Deprecated: use token_period.', deprecated: true },
  bound_cidrs: { type: 'comma-string-list', description: 'Deprecated: use token_bound_cidrs.', deprecated: true },
  num_uses: { type: 'int', description: 'Deprecated: use token_num_uses.', deprecated: true },
} as const satisfies FieldSpecs;

/** The coerced input of a path that declares TOKEN_FIELDS and some of LEGACY_TOKEN_FIELDS. */
export interface TokenFieldInput {
  readonly token_ttl?: number | undefined;
  readonly token_max_ttl?: number | undefined;
  readonly token_period?: number | undefined;
  readonly token_explicit_max_ttl?: number | undefined;
  readonly token_policies?: string[] | undefined;
  readonly token_bound_cidrs?: string[] | undefined;
  readonly token_no_default_policy?: boolean | undefined;
  readonly token_num_uses?: number | undefined;
  readonly token_type?: string | undefined;
  readonly policies?: string[] | undefined;
  readonly ttl?: number | undefined;
  readonly max_ttl?: number | undefined;
  readonly period?: number | undefined;
  readonly bound_cidrs?: string[] | undefined;
  readonly num_uses?: number | undefined;
}

/**
 * Where Vault's auth methods differ on the common fields: how the deprecated `policies` is read and
 * how a period or maximum TTL above the mount's is answered. Absent members keep the rules of
 * Vault's built-in methods (approle, aws, userpass).
 */
export interface TokenFieldRules {
  /** The deprecated `policies` is lower-cased, sorted and de-duplicated (policyutil.ParsePolicies); true when absent. */
  readonly sanitizeLegacyPolicies?: boolean;
  /** The 400's message for a `token_period` above the mount's maximum lease TTL (seconds both). */
  periodTooLong?(period: number, maxLeaseTtl: number): string;
  /** The warning for a `token_max_ttl` above the mount's maximum lease TTL (seconds both). */
  maxTtlWarning?(maxTtl: number, maxLeaseTtl: number): string;
}

/**
 * The rules of Vault's separately released auth plugins (vault-plugin-auth-jwt,
 * vault-plugin-auth-kubernetes), which move the deprecated fields over with tokenutil.UpgradeValue
 * and word the answers their own way.
 */
export const PLUGIN_TOKEN_FIELD_RULES: TokenFieldRules = {
  sanitizeLegacyPolicies: false,
  periodTooLong: (period, maxLeaseTtl) => `'token_period' of "${period}s" is greater than the backend's maximum lease TTL of "${maxLeaseTtl}s"`,
  maxTtlWarning: () => "token max ttl is greater than the system or backend mount's maximum TTL value; issued tokens' max TTL value will be truncated",
};

/** Settings of a new record: everything from the mount and the system defaults. */
export function defaultTokenSettings(): TokenSettings {
  return {
    token_ttl: 0,
    token_max_ttl: 0,
    token_period: 0,
    token_explicit_max_ttl: 0,
    token_policies: [],
    token_bound_cidrs: [],
    token_no_default_policy: false,
    token_num_uses: 0,
    token_type: 'default',
  };
}

/**
 * A field's new value on an update: the coerced input; the type's zero value when the client sent
 * `""` (Vault's way of clearing a field, e.g. `token_policies=""` from the CLI); undefined when the
 * field was not sent at all (keep the stored value).
 */
export function givenValue<T>(req: LogicalRequest, value: T | undefined, name: string, zero: T): T | undefined {
  if (value !== undefined) return value;
  return req.data[name] === '' ? zero : undefined;
}

/**
 * Applies the token fields a request sets (and the deprecated names, which set the current field
 * too and are remembered so a read shows them) with Vault's rules, refusing what they forbid with
 * a 400. `maxLeaseTtl` is the mount's; `rules` where the method differs from Vault's built-in
 * ones. Returns the warnings to answer with.
 * @throws BadRequestError naming the field and the problem.
 */
export function applyTokenFields(req: LogicalRequest, input: TokenFieldInput, target: WithTokenSettings, maxLeaseTtl: number, rules: TokenFieldRules = {}): string[] {
  const durations = [
    ['token_ttl', 'ttl'],
    ['token_max_ttl', 'max_ttl'],
    ['token_period', 'period'],
    ['token_num_uses', 'num_uses'],
  ] as const;
  for (const [current, legacy] of durations) {
    const value = givenValue(req, input[current], current, 0);
    const old = givenValue(req, input[legacy], legacy, 0);
    if (value !== undefined) {
      target[current] = value;
      delete target.legacy[legacy];
    } else if (old !== undefined) {
      target[current] = old;
      target.legacy[legacy] = old;
    }
  }
  const explicitMax = givenValue(req, input.token_explicit_max_ttl, 'token_explicit_max_ttl', 0);
  if (explicitMax !== undefined) target.token_explicit_max_ttl = explicitMax;

  const policies = givenValue(req, input.token_policies, 'token_policies', []);
  const legacyPolicies = givenValue(req, input.policies, 'policies', []);
  if (policies !== undefined) {
    target.token_policies = policies;
    delete target.legacy.policies;
  } else if (legacyPolicies !== undefined) {
    // Vault's built-in methods sanitise the deprecated field: lower-case, trimmed, sorted, de-duplicated.
    const clean = rules.sanitizeLegacyPolicies === false ? legacyPolicies : sanitizePolicies(legacyPolicies);
    target.token_policies = clean;
    target.legacy.policies = clean;
  }

  const cidrs = givenValue(req, input.token_bound_cidrs, 'token_bound_cidrs', []);
  const legacyCidrs = givenValue(req, input.bound_cidrs, 'bound_cidrs', []);
  if (cidrs !== undefined) {
    checkCidrs(cidrs, 'token_bound_cidrs');
    target.token_bound_cidrs = cidrs;
    delete target.legacy.bound_cidrs;
  } else if (legacyCidrs !== undefined) {
    checkCidrs(legacyCidrs, 'bound_cidrs');
    target.token_bound_cidrs = legacyCidrs;
    target.legacy.bound_cidrs = legacyCidrs;
  }
  if (input.token_no_default_policy !== undefined) target.token_no_default_policy = input.token_no_default_policy;
  if (target.token_num_uses < 0) throw new BadRequestError(`'${target.legacy.num_uses === undefined ? 'token_num_uses' : 'num_uses'}' cannot be negative`);
  const tokenType = givenValue(req, input.token_type, 'token_type', 'default');
  if (tokenType !== undefined) {
    if (!(TOKEN_TYPES as readonly string[]).includes(tokenType)) throw new BadRequestError(`invalid 'token_type' value "${tokenType}"`);
    target.token_type = tokenType as TokenTypeSetting;
  }
  if (target.token_type === 'batch') {
    if (target.token_period !== 0) throw new BadRequestError("'token_type' cannot be 'batch' when set to generate periodic tokens");
    if (target.token_num_uses !== 0) throw new BadRequestError("'token_type' cannot be 'batch' when set to generate tokens with limited use count");
  }
  if (target.token_max_ttl !== 0 && target.token_ttl > target.token_max_ttl) throw new BadRequestError("'token_ttl' cannot be greater than 'token_max_ttl'");

  if (target.token_period > maxLeaseTtl) {
    throw new BadRequestError(
      rules.periodTooLong?.(target.token_period, maxLeaseTtl) ?? `period of "${target.token_period}s" is greater than the backend's maximum lease TTL of "${maxLeaseTtl}s"`,
    );
  }
  const warnings: string[] = [];
  if (target.token_max_ttl > maxLeaseTtl) {
    warnings.push(
      rules.maxTtlWarning?.(target.token_max_ttl, maxLeaseTtl) ??
        `Given max ttl of ${target.token_max_ttl} seconds greater than current mount/system default of ${maxLeaseTtl} seconds; max ttl will be capped at login time`,
    );
  }
  return warnings;
}

/** The token settings as a read shows them, with the deprecated names a client wrote. */
export function tokenSettingsResponse(settings: WithTokenSettings): Record<string, unknown> {
  const { legacy } = settings;
  return {
    token_bound_cidrs: settings.token_bound_cidrs,
    token_explicit_max_ttl: settings.token_explicit_max_ttl,
    token_max_ttl: settings.token_max_ttl,
    token_no_default_policy: settings.token_no_default_policy,
    token_num_uses: settings.token_num_uses,
    token_period: settings.token_period,
    token_policies: settings.token_policies,
    token_ttl: settings.token_ttl,
    token_type: settings.token_type,
    ...(legacy.policies ? { policies: legacy.policies } : {}),
    ...(legacy.ttl !== undefined ? { ttl: legacy.ttl } : {}),
    ...(legacy.max_ttl !== undefined ? { max_ttl: legacy.max_ttl } : {}),
    ...(legacy.period !== undefined ? { period: legacy.period } : {}),
    ...(legacy.bound_cidrs ? { bound_cidrs: legacy.bound_cidrs } : {}),
    ...(legacy.num_uses !== undefined ? { num_uses: legacy.num_uses } : {}),
  };
}

/** A login from outside the record's token_bound_cidrs is refused (403), as in Vault. */
export function checkLoginAddress(settings: Pick<TokenSettings, 'token_bound_cidrs'>, req: LogicalRequest): void {
  if (!cidrAllows(settings.token_bound_cidrs, req.connection.remoteAddress)) throw new PermissionDeniedError();
}

/** The token settings a login (or a renewal) hands the host. */
export function tokenAuth(settings: TokenSettings): AuthResult {
  return {
    policies: settings.token_policies,
    ttl: settings.token_ttl,
    maxTtl: settings.token_max_ttl,
    explicitMaxTtl: settings.token_explicit_max_ttl,
    period: settings.token_period,
    numUses: settings.token_num_uses,
    boundCidrs: settings.token_bound_cidrs,
    noDefaultPolicy: settings.token_no_default_policy,
    tokenType: settings.token_type,
    renewable: true,
  };
}

/** Vault's policyutil.SanitizePolicies without the default policy added: lower-case, trimmed, sorted, de-duplicated. */
export function sanitizePolicies(policies: readonly string[]): string[] {
  return [...new Set(policies.map((p) => p.trim().toLowerCase()).filter((p) => p !== ''))].sort();
}

/** Whether a value is an IP address or a CIDR block (`10.0.0.0/8`, `::1/128`). */
export function isCidr(value: string): boolean {
  const [address, bits, ...rest] = value.split('/');
  if (rest.length > 0 || !address) return false;
  const family = isIP(address);
  if (family === 0) return false;
  if (bits === undefined) return true;
  if (!/^\d+$/.test(bits)) return false;
  return Number(bits) <= (family === 4 ? 32 : 128);
}

/** @throws BadRequestError naming the first value of `field` that is no CIDR block. */
export function checkCidrs(values: readonly string[], field: string): void {
  for (const cidr of values) if (!isCidr(cidr)) throw new BadRequestError(`invalid CIDR block "${cidr}" in ${field}`);
}
