/**
 * The constraints of the rule that applies to a request, beyond its capabilities: the wrapping TTL
 * bounds and the parameters (required, denied, allowed), in Vault's order
 * (https://developer.hashicorp.com/vault/docs/concepts/policies#parameter-constraints).
 */
import { globbedStringsMatch } from '../../framework/glob.js';
import type { Permissions } from './permissions.js';

/**
 * Parameters whose values Vault lower-cases before use (policy names), so the policy check
 * compares them lower-cased too; otherwise `ROOT` would slip past a denied `root`.
 */
const LOWER_CASED_PARAMETERS: ReadonlySet<string> = new Set(['policies', 'token_policies']);

/** A rule with wrapping TTL bounds demands a wrapped response within them. */
export function checkWrappingTtl(permissions: Permissions, wrapTtl: number | undefined): string | undefined {
  const { minWrappingTtl: min, maxWrappingTtl: max } = permissions;
  if (max > 0 && (wrapTtl === undefined || wrapTtl > max)) return `the response must be wrapped with a TTL of at most ${max}s`;
  if (min > 0 && (wrapTtl === undefined || wrapTtl < min)) return `the response must be wrapped with a TTL of at least ${min}s`;
  // Merging policies can leave min above max; nothing can satisfy that.
  if (min > 0 && max > 0 && max < min) return 'the merged wrapping TTL bounds cannot be met';
  return undefined;
}

/** In Vault's order: required, empty data, denied (wins), allowed. */
export function checkParameters(permissions: Permissions, data: Readonly<Record<string, unknown>>): string | undefined {
  for (const name of permissions.required) {
    if (!Object.hasOwn(data, name.toLowerCase())) return `required parameter ${JSON.stringify(name)} is missing`;
  }
  const keys = Object.keys(data);
  if (keys.length === 0) return undefined;

  if (permissions.denied.size > 0) {
    if (permissions.denied.has('*')) return 'the rule denies all parameters';
    for (const key of keys) {
      const denied = permissions.denied.get(key.toLowerCase());
      if (denied && isDeniedValue(normalizeValue(key, data[key]), denied)) return `parameter ${JSON.stringify(key)} has a denied value`;
    }
  }

  if (permissions.allowed.size === 0) return undefined;
  const allowedAll = permissions.allowed.has('*');
  if (allowedAll && permissions.allowed.size === 1) return undefined;
  for (const key of keys) {
    const allowed = permissions.allowed.get(key.toLowerCase());
    if (!allowed) {
      if (allowedAll) continue;
      return `parameter ${JSON.stringify(key)} is not allowed`;
    }
    if (!isAllowedValue(normalizeValue(key, data[key]), allowed)) return `parameter ${JSON.stringify(key)} has a value that is not allowed`;
  }
  return undefined;
}

function normalizeValue(key: string, value: unknown): unknown {
  if (!LOWER_CASED_PARAMETERS.has(key.toLowerCase())) return value;
  if (typeof value === 'string') return value.toLowerCase();
  if (Array.isArray(value)) return (value as unknown[]).map((item) => (typeof item === 'string' ? item.toLowerCase() : item));
  return value;
}

/**
 * A value is allowed when it matches the list as a whole, or when each element of a list value
 * (or each item of a comma-separated string, which many fields accept as a list) matches.
 */
function isAllowedValue(value: unknown, list: readonly unknown[]): boolean {
  if (list.length === 0 || matchesAny(value, list)) return true;
  const items = listItems(value);
  return items !== undefined && items.every((item) => matchesAny(item, list));
}

/** A value is denied when it, or any element of it, or any comma-separated item of it, matches. */
function isDeniedValue(value: unknown, list: readonly unknown[]): boolean {
  if (list.length === 0 || matchesAny(value, list)) return true;
  const items = listItems(value);
  return items !== undefined && items.some((item) => matchesAny(item, list));
}

function listItems(value: unknown): readonly unknown[] | undefined {
  if (Array.isArray(value)) return value as unknown[];
  if (typeof value === 'string') return value === '' ? [] : value.split(',').map((item) => item.trim());
  return undefined;
}

/** String entries may glob with a leading and/or trailing `*`; other values compare deeply. */
function matchesAny(value: unknown, list: readonly unknown[]): boolean {
  for (const entry of list) {
    if (typeof entry === 'string') {
      if (typeof value === 'string' && globbedStringsMatch(entry, value)) return true;
    } else if (deepEqual(entry, value)) {
      return true;
    }
  }
  return false;
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const other = b as unknown[];
    return a.length === other.length && a.every((item, i) => deepEqual(item, other[i]));
  }
  const aKeys = Object.keys(a);
  const bRecord = b as Record<string, unknown>;
  const aRecord = a as Record<string, unknown>;
  return aKeys.length === Object.keys(b).length && aKeys.every((key) => Object.hasOwn(b, key) && deepEqual(aRecord[key], bRecord[key]));
}
