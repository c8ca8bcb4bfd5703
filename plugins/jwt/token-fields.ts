/**
 * The `token_*` fields every role of a login method carries (Vault's tokenutil), with the
 * deprecated names they replaced: how they are declared, updated, read back, checked at login and
 * handed to the host. A role stores them as a `TokenSettings` plus the deprecated values a client
 * wrote (echoed on read under their old names, as Vault does).
 */
import { isIP } from 'node:net';
import { BadRequestError, PermissionDeniedError, cidrAllows, type AuthResult, type FieldSpecs, type FieldValues, type LogicalRequest } from '../../sdk/index.js';

const list = (description: string) => ({ type: 'comma-string-list', description }) as const;

export const TOKEN_FIELDS = {
  token_ttl: { type: 'duration', description: 'Incremental lifetime of the tokens a login gets.' },
  token_max_ttl: { type: 'duration', description: 'Maximum lifetime of the tokens a login gets.' },
  token_period: { type: 'duration', description: 'Tokens are periodic with this period.' },
  token_explicit_max_ttl: { type: 'duration', description: 'Hard cap on the lifetime of the tokens, past renewals.' },
  token_policies: list('Policies of the tokens.'),
  token_bound_cidrs: list('CIDR blocks logins come from and the tokens are used from.'),
  token_no_default_policy: { type: 'bool', description: 'Do not add the default policy to the tokens.' },
  token_num_uses: { type: 'int', description: 'Uses of a token; 0 is unlimited.' },
  token_type: { type: 'string', description: 'service, batch or default (the mount tune decides).' },
  policies: { ...list('Deprecated: use token_policies.'), deprecated: true },
  bound_cidrs: { ...list('Deprecated: use token_bound_cidrs.'), deprecated: true },
  num_uses: { type: 'int', description: 'Deprecated: use token_num_uses.', deprecated: true },
  ttl: { type: 'duration', description: 'Deprecated: use token_ttl.', deprecated: true },
  max_ttl: { type: 'duration', description: 'Deprecated: use token_max_ttl.', deprecated: true },
  period: { type: 'duration', description: 'Deprecated: use token_period.', deprecated: true },
} as const satisfies FieldSpecs;

export type TokenFieldInput = FieldValues<typeof TOKEN_FIELDS>;

export type TokenType = 'default' | 'service' | 'batch';
const TOKEN_TYPES: readonly TokenType[] = ['default', 'service', 'batch'];

export interface TokenSettings {
  token_ttl: number;
  token_max_ttl: number;
  token_period: number;
  token_explicit_max_ttl: number;
  token_policies: string[];
  token_bound_cidrs: string[];
  token_no_default_policy: boolean;
  token_num_uses: number;
  token_type: TokenType;
}

/** Values written through the deprecated names, echoed on read under those names. */
export interface LegacyTokenSettings {
  policies?: string[];
  bound_cidrs?: string[];
  num_uses?: number;
  ttl?: number;
  max_ttl?: number;
  period?: number;
}

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
 * A field's new value on an update: the coerced input; the zero value when the client sent `""`
 * (Vault's way of clearing a field); undefined when it was not sent at all (keep what is stored).
 */
export function given<T>(req: LogicalRequest, value: T | undefined, name: string, zero: T): T | undefined {
  if (value !== undefined) return value;
  return req.data[name] === '' ? zero : undefined;
}

/**
 * Applies the token fields of a role write to `settings` and `legacy` (both changed in place) with
 * Vault's rules; `maxLeaseTtl` is the mount's. Returns the warnings of the answer.
 */
export function applyTokenFields(req: LogicalRequest, input: TokenFieldInput, settings: TokenSettings, legacy: LegacyTokenSettings, maxLeaseTtl: number): string[] {
  // A current name wins over its deprecated one; a value written through the old name is kept there too.
  const pairs = [
    ['token_ttl', 'ttl', 0],
    ['token_max_ttl', 'max_ttl', 0],
    ['token_period', 'period', 0],
    ['token_num_uses', 'num_uses', 0],
  ] as const;
  for (const [current, old, zero] of pairs) {
    const value = given(req, input[current], current, zero);
    const oldValue = given(req, input[old], old, zero);
    if (value !== undefined) {
      settings[current] = value;
      delete legacy[old];
    } else if (oldValue !== undefined) {
      settings[current] = oldValue;
      legacy[old] = oldValue;
    }
  }
  const lists = [
    ['token_policies', 'policies'],
    ['token_bound_cidrs', 'bound_cidrs'],
  ] as const;
  for (const [current, old] of lists) {
    const value = given(req, input[current], current, []);
    const oldValue = given(req, input[old], old, []);
    if (value !== undefined) {
      settings[current] = value;
      delete legacy[old];
    } else if (oldValue !== undefined) {
      settings[current] = oldValue;
      legacy[old] = oldValue;
    }
  }
  const explicitMax = given(req, input.token_explicit_max_ttl, 'token_explicit_max_ttl', 0);
  if (explicitMax !== undefined) settings.token_explicit_max_ttl = explicitMax;
  if (input.token_no_default_policy !== undefined) settings.token_no_default_policy = input.token_no_default_policy;
  const tokenType = given(req, input.token_type, 'token_type', 'default');
  if (tokenType !== undefined) {
    if (!(TOKEN_TYPES as readonly string[]).includes(tokenType)) throw new BadRequestError(`invalid 'token_type' value "${tokenType}"`);
    settings.token_type = tokenType as TokenType;
  }

  for (const cidr of settings.token_bound_cidrs) {
    if (!validCidr(cidr)) throw new BadRequestError(`invalid CIDR block "${cidr}" in token_bound_cidrs`);
  }
  if (settings.token_num_uses < 0) throw new BadRequestError("'token_num_uses' cannot be negative");
  if (settings.token_type === 'batch') {
    if (settings.token_period !== 0) throw new BadRequestError("'token_type' cannot be 'batch' when set to generate periodic tokens");
    if (settings.token_num_uses !== 0) throw new BadRequestError("'token_type' cannot be 'batch' when set to generate tokens with limited use count");
  }
  if (settings.token_max_ttl !== 0 && settings.token_ttl > settings.token_max_ttl) throw new BadRequestError("'token_ttl' cannot be greater than 'token_max_ttl'");
  if (settings.token_period > maxLeaseTtl) {
    throw new BadRequestError(`'token_period' of "${settings.token_period}s" is greater than the backend's maximum lease TTL of "${maxLeaseTtl}s"`);
  }
  return settings.token_max_ttl > maxLeaseTtl
    ? ["token max ttl is greater than the system or backend mount's maximum TTL value; issued tokens' max TTL value will be truncated"]
    : [];
}

/** The token fields of a role read, and the deprecated names a client wrote through. */
export function tokenSettingsResponse(settings: TokenSettings, legacy: LegacyTokenSettings): Record<string, unknown> {
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
    ...(legacy.policies !== undefined ? { policies: settings.token_policies } : {}),
    ...(legacy.bound_cidrs !== undefined ? { bound_cidrs: settings.token_bound_cidrs } : {}),
    ...(legacy.num_uses ? { num_uses: settings.token_num_uses } : {}),
    ...(legacy.ttl ? { ttl: settings.token_ttl } : {}),
    ...(legacy.max_ttl ? { max_ttl: settings.token_max_ttl } : {}),
    ...(legacy.period ? { period: settings.token_period } : {}),
  };
}

/** A login from outside the role's token_bound_cidrs is refused (403), as in Vault. */
export function checkLoginAddress(settings: TokenSettings, req: LogicalRequest): void {
  if (!cidrAllows(settings.token_bound_cidrs, req.connection.remoteAddress)) throw new PermissionDeniedError();
}

/** What the host needs from the token settings to mint the token of a login. */
export function tokenAuth(settings: TokenSettings): Pick<AuthResult, 'policies' | 'ttl' | 'maxTtl' | 'explicitMaxTtl' | 'period' | 'numUses' | 'boundCidrs' | 'noDefaultPolicy' | 'tokenType'> {
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
  };
}

function validCidr(value: string): boolean {
  const [address, bits, ...rest] = value.split('/');
  if (rest.length > 0 || !address) return false;
  const family = isIP(address);
  if (family === 0) return false;
  if (bits === undefined) return true;
  if (!/^\d+$/.test(bits)) return false;
  return Number(bits) <= (family === 4 ? 32 : 128);
}
