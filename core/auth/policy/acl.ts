/**
 * The ACL: a token's policies compiled into one lookup structure, answering "may this request
 * proceed?" exactly as Vault does (https://developer.hashicorp.com/vault/docs/concepts/policies).
 * Build one per distinct policy set (and identity, for templated policies) and cache it; each
 * lookup is then a few map probes plus a scan of the `+` rules. What a pattern's merged rules
 * compile to is permissions.ts's; the parameter and wrapping constraints are parameters.ts's.
 */
import { InternalError } from '../../errors.js';
import type { Operation } from '../../framework/request.js';
import { ROOT_POLICY_NAME } from './builtin.js';
import type { Capability, Policy } from './policy.js';
import { addToPattern, BIT, compilePermissions, type PatternEntry, type Permissions } from './permissions.js';
import { checkParameters, checkWrappingTtl } from './parameters.js';
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

/** Capabilities as `capabilities()` reports them (deny is reported on its own). */
const REPORTED: readonly Capability[] = ['create', 'delete', 'list', 'patch', 'read', 'sudo', 'update'];

/** Operations whose request parameters are checked against the rule's parameter constraints. */
const PARAMETER_CHECKED: ReadonlySet<Operation> = new Set(['read', 'create', 'update', 'patch']);

/** A `+` rule, split into segments once. */
interface SegmentRule {
  readonly segments: readonly string[];
  readonly isPrefix: boolean;
  readonly rank: Rank;
  readonly permissions: Permissions;
}

/** What orders competing non-exact matches (Vault's priority matching, see `outranks`). */
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

  /** An exact rule, else the best non-exact one, for the path and (listing) the path without its `/`; undefined denies. */
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

/**
 * True when `a` has higher priority than `b`, by Vault's rules in order: the later first wildcard,
 * not a prefix, fewer `+` segments, the longer, the lexically greater
 * (https://developer.hashicorp.com/vault/docs/concepts/policies#priority-matching).
 */
function outranks(a: Rank, b: Rank): boolean {
  if (a.firstWildcard !== b.firstWildcard) return a.firstWildcard > b.firstWildcard;
  if (a.isPrefix !== b.isPrefix) return !a.isPrefix;
  if (a.wildcards !== b.wildcards) return a.wildcards < b.wildcards;
  if (a.path.length !== b.path.length) return a.path.length > b.path.length;
  return a.path > b.path;
}

function refused(sudo: boolean, reason: string): AclDecision {
  return { allowed: false, sudo, grantingPolicies: [], reason };
}

function stripLeadingSlashes(path: string): string {
  let start = 0;
  while (path[start] === '/') start++;
  return path.slice(start);
}
