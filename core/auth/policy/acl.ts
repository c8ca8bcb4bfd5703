/**
 * The ACL: a token's policies compiled into one lookup structure, answering "may this request
 * proceed?" exactly as Vault does (core-api §4.3–§4.4). Build one per distinct policy set (and
 * identity, for templated policies) and cache it; each lookup is then a few map probes plus a scan
 * of the `+` rules.
 */
import { InternalError } from '../../errors.js';
import { globbedStringsMatch } from '../../framework/glob.js';
import type { Operation } from '../../framework/request.js';
import { ROOT_POLICY_NAME } from './builtin.js';
import { mergePathRules, type Capability, type PathRule, type Policy } from './policy.js';
import { isTemplatedPath, renderPathTemplate, type IdentityContext } from './template.js';
import { RESOURCE_NAMES } from './resource-names.js';

export type { IdentityContext, IdentityAlias } from './template.js';

export interface AclRequest {
  /** The full request path, mount included; leading slashes are ignored. List paths end in `/`. */
  readonly path: string;
  readonly operation: Operation;
  /** Request parameters, checked against allowed/denied/required parameters. */
  readonly data?: Readonly<Record<string, unknown>>;
  /**
   * The response-wrapping TTL the client asked for, in seconds; absent when the response is not
   * wrapped. Checked against `min_wrapping_ttl` / `max_wrapping_ttl`.
   */
  readonly wrapTtl?: number;
}

export interface AclDecision {
  readonly allowed: boolean;
  /** The rule that applies grants `sudo` (needed in addition on root-protected paths). */
  readonly sudo: boolean;
  /** The policies that granted the operation's capability on the applying rule (empty when refused). */
  readonly grantingPolicies: readonly string[];
  /** Why the request was refused, for logs; never shown to the client. */
  readonly reason?: string;
}

const BIT: Readonly<Record<Capability, number>> = {
  deny: 1 << 0, create: 1 << 1, read: 1 << 2, update: 1 << 3, delete: 1 << 4, list: 1 << 5, sudo: 1 << 6, patch: 1 << 7,
};

/** Capabilities as `capabilities()` reports them (deny is reported on its own). */
const REPORTED: readonly Capability[] = ['create', 'delete', 'list', 'patch', 'read', 'sudo', 'update'];

/** Operations whose request parameters are checked against the rule's parameter constraints. */
const PARAMETER_CHECKED: ReadonlySet<Operation> = new Set(['read', 'create', 'update', 'patch']);

/**
 * Parameters whose values Vault lower-cases before use (policy names), so the policy check
 * compares them lower-cased too; otherwise `ROOT` would slip past a denied `root`.
 */
const LOWER_CASED_PARAMETERS: ReadonlySet<string> = new Set(['policies', 'token_policies']);

/** A pattern's merged permissions, ready to evaluate. */
interface Permissions {
  readonly pattern: string;
  readonly bits: number;
  /** For each capability, the policies that contributed it. */
  readonly grantedBy: ReadonlyMap<Capability, readonly string[]>;
  readonly allowed: ReadonlyMap<string, readonly unknown[]>;
  readonly denied: ReadonlyMap<string, readonly unknown[]>;
  readonly required: readonly string[];
  readonly minWrappingTtl: number;
  readonly maxWrappingTtl: number;
}

/** A `+` rule, split into segments once. */
interface SegmentRule {
  readonly segments: readonly string[];
  readonly isPrefix: boolean;
  readonly rank: Rank;
  readonly permissions: Permissions;
}

/** What orders competing non-exact matches (core-api §4.3 (a)–(e)). */
interface Rank {
  /** Index of the first `+` (for `+` rules) or of the `*` (for prefix rules). */
  readonly firstWildcard: number;
  readonly isPrefix: boolean;
  /** Number of `+` segments. */
  readonly wildcards: number;
  /** The pattern without its trailing `*`. */
  readonly path: string;
}

interface Candidate {
  readonly rank: Rank;
  readonly permissions: Permissions;
}

interface PatternEntry {
  rule: PathRule;
  grantedBy: Map<Capability, string[]>;
}

const ROOT_DECISION: AclDecision = Object.freeze({ allowed: true, sudo: true, grantingPolicies: Object.freeze([ROOT_POLICY_NAME]) });

export class ACL {
  private readonly root: boolean;
  private readonly exact = new Map<string, Permissions>();
  /** Prefix rules by their prefix (the pattern without `*`), probed longest first. */
  private readonly prefixes = new Map<string, Permissions>();
  private readonly prefixLengths: readonly number[];
  /** `+` rules without a trailing `*`, by segment count: only those can match a path of that length. */
  private readonly segmentRulesByLength = new Map<number, SegmentRule[]>();
  private readonly segmentPrefixRules: SegmentRule[] = [];

  /**
   * @param policies the token's policies; a policy named `root` must come alone.
   * @param identity the caller's identity, for templated paths; a path whose template cannot be
   *   rendered for this caller is left out.
   * @throws InternalError when `root` is combined with other policies (a broken invariant).
   */
  constructor(policies: readonly Policy[], identity?: IdentityContext) {
    this.root = policies.some((policy) => policy.name === ROOT_POLICY_NAME);
    if (this.root && policies.length !== 1) throw new InternalError('other policies present along with root');

    const patterns = new Map<string, PatternEntry>();
    for (const policy of policies) {
      for (const rule of policy.rules) {
        const path = isTemplatedPath(rule.path) ? renderPathTemplate(rule.path, identity) : rule.path;
        if (path === undefined || path.includes('+*')) continue;
        addToPattern(patterns, path === rule.path ? rule : { ...rule, path }, policy.name);
      }
    }
    for (const [pattern, entry] of patterns) this.insert(pattern, compilePermissions(pattern, entry));
    this.prefixLengths = [...new Set([...this.prefixes.keys()].map((prefix) => prefix.length))].sort((a, b) => b - a);
  }

  private static rootAcl: ACL | undefined;

  /** The ACL of a root token: everything is allowed, with sudo (one shared instance: an ACL never changes). */
  static root(): ACL {
    return (ACL.rootAcl ??= new ACL([{ name: ROOT_POLICY_NAME, raw: '', rules: [], templated: false }]));
  }

  /**
   * Decides one request. Deny by default: no matching rule means refused. A path that names a
   * resource with other names (resource-names.ts) is decided by the rules of every name.
   */
  allowOperation(request: AclRequest): AclDecision {
    if (this.root) return ROOT_DECISION;
    const path = stripLeadingSlashes(request.path);
    const names = RESOURCE_NAMES.get(path);
    return names ? this.allowUnderEveryName(names, request) : this.allowPath(path, request);
  }

  /** Every rule that applies to one of `names` must allow the request, and one must apply. */
  private allowUnderEveryName(names: readonly string[], request: AclRequest): AclDecision {
    let allowed: AclDecision | undefined;
    for (const name of names) {
      if (!this.lookup(name, request.operation === 'list')) continue;
      const decision = this.allowPath(name, request);
      if (!decision.allowed) return decision;
      allowed = allowed
        ? { allowed: true, sudo: allowed.sudo && decision.sudo, grantingPolicies: [...new Set([...allowed.grantingPolicies, ...decision.grantingPolicies])] }
        : decision;
    }
    return allowed ?? refused(false, 'no policy rule matches the path');
  }

  private allowPath(path: string, request: AclRequest): AclDecision {
    const permissions = this.lookup(path, request.operation === 'list');
    if (!permissions) return refused(false, 'no policy rule matches the path');
    const sudo = (permissions.bits & BIT.sudo) !== 0;
    if (permissions.bits & BIT.deny) return refused(false, `denied by the rule for ${JSON.stringify(permissions.pattern)}`);

    const capability: Capability = request.operation;
    if ((permissions.bits & BIT[capability]) === 0) {
      return refused(sudo, `the rule for ${JSON.stringify(permissions.pattern)} does not grant ${JSON.stringify(capability)}`);
    }
    const wrappingProblem = checkWrappingTtl(permissions, request.wrapTtl);
    if (wrappingProblem) return refused(sudo, wrappingProblem);
    if (PARAMETER_CHECKED.has(request.operation)) {
      const parameterProblem = checkParameters(permissions, request.data ?? {});
      if (parameterProblem) return refused(sudo, parameterProblem);
    }
    return { allowed: true, sudo, grantingPolicies: permissions.grantedBy.get(capability) ?? [] };
  }

  /**
   * The capabilities of the rule that applies to `path`, sorted, as `sys/capabilities-self`
   * reports them: `["root"]` for a root ACL, `["deny"]` when no rule applies, the rule denies, or
   * it grants nothing. Looked up as a list request, so a list rule without the trailing slash counts.
   */
  capabilities(path: string): string[] {
    if (this.root) return ['root'];
    const stripped = stripLeadingSlashes(path);
    // A resource with several names: what every rule applying to one of them grants.
    const rules = (RESOURCE_NAMES.get(stripped) ?? [stripped]).map((name) => this.lookup(name, true)).filter((p) => p !== undefined);
    if (rules.length === 0 || rules.some((p) => p.bits & BIT.deny)) return ['deny'];
    const granted = REPORTED.filter((capability) => rules.every((p) => (p.bits & BIT[capability]) !== 0));
    return granted.length > 0 ? granted : ['deny'];
  }

  /**
   * Whether some rule grants a capability on `prefix` or on any path under it (Vault's mount
   * access check): `sys/internal/ui/mounts` tells a token about a mount only if it may use
   * something in it.
   */
  grantsUnder(prefix: string): boolean {
    if (this.root) return true;
    const target = stripLeadingSlashes(prefix);
    const grants = (p: Permissions) => (p.bits & BIT.deny) === 0 && REPORTED.some((capability) => (p.bits & BIT[capability]) !== 0);
    const covered = this.lookup(target, true);
    if (covered && grants(covered)) return true;
    for (const [path, permissions] of this.exact) if (path.startsWith(target) && grants(permissions)) return true;
    for (const [path, permissions] of this.prefixes) if (path.startsWith(target) && grants(permissions)) return true;
    const parts = target.split('/');
    const segmentRules = [...this.segmentPrefixRules, ...[...this.segmentRulesByLength.values()].flat()];
    return segmentRules.some(
      (rule) => grants(rule.permissions) && rule.segments.length >= parts.length &&
        // Every segment of the prefix matches the rule's (the last may be the start of one).
        parts.every((part, i) => rule.segments[i] === '+' || rule.segments[i] === part || (i === parts.length - 1 && rule.segments[i]!.startsWith(part))),
    );
  }

  /** Steps 1–4 of core-api §4.3; undefined is step 5 (deny by default). */
  private lookup(path: string, isList: boolean): Permissions | undefined {
    const exact = this.exact.get(path);
    if (exact) return exact;
    const trimmed = isList && path.endsWith('/') ? path.slice(0, -1) : undefined;
    if (trimmed !== undefined) {
      const exactTrimmed = this.exact.get(trimmed);
      if (exactTrimmed) return exactTrimmed;
    }
    return this.bestNonExact(path) ?? (trimmed !== undefined ? this.bestNonExact(trimmed) : undefined);
  }

  /** The single highest-ranked match among the longest prefix rule and all matching `+` rules. */
  private bestNonExact(path: string): Permissions | undefined {
    let best: Candidate | undefined = this.longestPrefix(path);
    if (this.segmentPrefixRules.length === 0 && this.segmentRulesByLength.size === 0) return best?.permissions;
    const parts = path.split('/');
    const consider = (rule: SegmentRule): void => {
      if (matchesSegments(rule, parts) && (!best || outranks(rule.rank, best.rank))) best = rule;
    };
    for (const rule of this.segmentRulesByLength.get(parts.length) ?? []) consider(rule);
    for (const rule of this.segmentPrefixRules) consider(rule);
    return best?.permissions;
  }

  private longestPrefix(path: string): Candidate | undefined {
    for (const length of this.prefixLengths) {
      if (length > path.length) continue;
      const prefix = path.slice(0, length);
      const permissions = this.prefixes.get(prefix);
      if (permissions) return { rank: { firstWildcard: length, isPrefix: true, wildcards: 0, path: prefix }, permissions };
    }
    return undefined;
  }

  private insert(pattern: string, permissions: Permissions): void {
    if (hasSegmentWildcard(pattern)) {
      const isPrefix = pattern.endsWith('*');
      const path = isPrefix ? pattern.slice(0, -1) : pattern;
      const segments = path.split('/');
      const rank: Rank = {
        // The first `+` character anywhere, even inside a literal segment such as `a+b`, as in Vault.
        firstWildcard: pattern.indexOf('+'),
        isPrefix,
        wildcards: segments.filter((segment) => segment === '+').length,
        path,
      };
      const rule: SegmentRule = { segments, isPrefix, rank, permissions };
      if (isPrefix) {
        this.segmentPrefixRules.push(rule);
      } else {
        const sameLength = this.segmentRulesByLength.get(segments.length);
        if (sameLength) sameLength.push(rule);
        else this.segmentRulesByLength.set(segments.length, [rule]);
      }
    } else if (pattern.endsWith('*')) {
      this.prefixes.set(pattern.slice(0, -1), permissions);
    } else {
      this.exact.set(pattern, permissions);
    }
  }
}

/** Vault's test for a `+` rule: a whole segment that is `+`, the first or any later one. */
function hasSegmentWildcard(pattern: string): boolean {
  return pattern === '+' || pattern.startsWith('+/') || pattern.includes('/+');
}

/**
 * `+` matches any one segment (even an empty one); a trailing `*` lets the last segment be a
 * prefix and allows more segments after it.
 */
function matchesSegments(rule: SegmentRule, parts: readonly string[]): boolean {
  const segments = rule.segments;
  if (parts.length < segments.length || (!rule.isPrefix && parts.length !== segments.length)) return false;
  const last = segments.length - 1;
  for (let i = 0; i <= last; i++) {
    const segment = segments[i]!;
    const part = parts[i]!;
    if (segment === '+' || segment === part) continue;
    if (rule.isPrefix && i === last && part.startsWith(segment)) continue;
    return false;
  }
  return true;
}

/** True when `a` has higher priority than `b`: rules (a)–(e) of core-api §4.3, in order. */
function outranks(a: Rank, b: Rank): boolean {
  if (a.firstWildcard !== b.firstWildcard) return a.firstWildcard > b.firstWildcard;
  if (a.isPrefix !== b.isPrefix) return !a.isPrefix;
  if (a.wildcards !== b.wildcards) return a.wildcards < b.wildcards;
  if (a.path.length !== b.path.length) return a.path.length > b.path.length;
  return a.path > b.path;
}

function addToPattern(patterns: Map<string, PatternEntry>, rule: PathRule, policyName: string): void {
  const entry = patterns.get(rule.path);
  if (!entry) {
    patterns.set(rule.path, { rule, grantedBy: grants(new Map(), rule, policyName) });
    return;
  }
  if (entry.rule.capabilities.has('deny')) return;
  entry.rule = mergePathRules(entry.rule, rule);
  if (entry.rule.capabilities.has('deny')) entry.grantedBy.clear();
  else grants(entry.grantedBy, rule, policyName);
}

function grants(grantedBy: Map<Capability, string[]>, rule: PathRule, policyName: string): Map<Capability, string[]> {
  if (rule.capabilities.has('deny')) return grantedBy;
  for (const capability of rule.capabilities) {
    const names = grantedBy.get(capability);
    if (!names) grantedBy.set(capability, [policyName]);
    else if (!names.includes(policyName)) names.push(policyName);
  }
  return grantedBy;
}

function compilePermissions(pattern: string, entry: PatternEntry): Permissions {
  const rule = entry.rule;
  let bits = 0;
  for (const capability of rule.capabilities) bits |= BIT[capability];
  return {
    pattern,
    bits,
    grantedBy: entry.grantedBy,
    allowed: new Map(Object.entries(rule.allowedParameters)),
    denied: new Map(Object.entries(rule.deniedParameters)),
    required: rule.requiredParameters,
    minWrappingTtl: rule.minWrappingTtl ?? 0,
    maxWrappingTtl: rule.maxWrappingTtl ?? 0,
  };
}

function refused(sudo: boolean, reason: string): AclDecision {
  return { allowed: false, sudo, grantingPolicies: [], reason };
}

function stripLeadingSlashes(path: string): string {
  let start = 0;
  while (path[start] === '/') start++;
  return path.slice(start);
}

/** A rule with wrapping TTL bounds demands a wrapped response within them. */
function checkWrappingTtl(permissions: Permissions, wrapTtl: number | undefined): string | undefined {
  const { minWrappingTtl: min, maxWrappingTtl: max } = permissions;
  if (max > 0 && (wrapTtl === undefined || wrapTtl > max)) return `the response must be wrapped with a TTL of at most ${max}s`;
  if (min > 0 && (wrapTtl === undefined || wrapTtl < min)) return `the response must be wrapped with a TTL of at least ${min}s`;
  // Merging policies can leave min above max; nothing can satisfy that.
  if (min > 0 && max > 0 && max < min) return 'the merged wrapping TTL bounds cannot be met';
  return undefined;
}

/** core-api §4.4, in Vault's order: required, empty data, denied (wins), allowed. */
function checkParameters(permissions: Permissions, data: Readonly<Record<string, unknown>>): string | undefined {
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
  if (Array.isArray(value)) return value.map((item) => (typeof item === 'string' ? item.toLowerCase() : item));
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
  if (Array.isArray(value)) return value;
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
