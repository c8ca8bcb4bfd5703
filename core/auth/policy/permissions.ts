/**
 * A token's policies compiled for its ACL (acl.ts): each path pattern's rules from every policy,
 * merged as Vault merges them (a `deny` anywhere wins), into the capability bits and parameter
 * constraints that evaluation reads, with the policies that granted each capability.
 */
import { mergePathRules, type Capability, type PathRule } from './policy.js';

/** One bit per capability, so a rule is checked for one with a single AND. */
export const BIT: Readonly<Record<Capability, number>> = {
  deny: 1 << 0, create: 1 << 1, read: 1 << 2, update: 1 << 3, delete: 1 << 4, list: 1 << 5, sudo: 1 << 6, patch: 1 << 7,
};

/** A pattern's merged permissions, ready to evaluate. */
export interface Permissions {
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

/** The rules of one pattern so far, merged across policies. */
export interface PatternEntry {
  rule: PathRule;
  grantedBy: Map<Capability, string[]>;
}

export function addToPattern(patterns: Map<string, PatternEntry>, rule: PathRule, policyName: string): void {
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

export function compilePermissions(pattern: string, entry: PatternEntry): Permissions {
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
