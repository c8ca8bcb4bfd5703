/**
 * ACL policy documents: HCL or JSON text → validated path rules, with Vault's rules for what a
 * policy may say (https://developer.hashicorp.com/vault/docs/concepts/policies#policy-syntax).
 * Evaluation lives in `acl.ts`.
 */
import { BadRequestError } from '../../errors.js';
import { CoercionError, parseDurationSeconds } from '../../framework/fields.js';
import { HclSyntaxError, describeHclValue, parseHclDocument, type HclItem, type HclValue, type SourcePosition } from '../../hcl.js';
import { checkPathTemplate, isTemplatedPath } from './template.js';

export type Capability = 'create' | 'read' | 'update' | 'patch' | 'delete' | 'list' | 'sudo' | 'deny';

/** Every capability a policy may name. */
export const CAPABILITIES: readonly Capability[] = ['create', 'read', 'update', 'patch', 'delete', 'list', 'sudo', 'deny'];

/** Parameter name (lower-cased) → the values it may (or may not) take; an empty list means any value. */
export type ParameterValues = Readonly<Record<string, readonly unknown[]>>;

/** One `path "..." { ... }` statement, after validation. */
export interface PathRule {
  /** Leading "/" stripped; may end in `*` (prefix), may contain `+` segments and `{{identity...}}`. */
  readonly path: string;
  /** `deny` is never combined with another capability: a deny rule holds `deny` alone. */
  readonly capabilities: ReadonlySet<Capability>;
  readonly allowedParameters: ParameterValues;
  readonly deniedParameters: ParameterValues;
  readonly requiredParameters: readonly string[];
  /** Seconds; absent when not set. */
  readonly minWrappingTtl?: number;
  readonly maxWrappingTtl?: number;
}

export interface Policy {
  readonly name: string;
  /** The text as written, returned by the policy read endpoints. */
  readonly raw: string;
  /** One rule per distinct path, in order of first appearance. */
  readonly rules: readonly PathRule[];
  /** Some rule path contains a template, rendered per caller when an ACL is built. */
  readonly templated: boolean;
}

/** The legacy `policy = "<word>"` form (still sent by node-vault) and what each word grants. */
const LEGACY_POLICY_CAPABILITIES: Readonly<Record<string, readonly Capability[]>> = {
  deny: ['deny'],
  read: ['read', 'list'],
  write: ['create', 'read', 'update', 'delete', 'list'],
  sudo: ['create', 'read', 'update', 'delete', 'list', 'sudo'],
};

/**
 * Keys a path statement may hold. `comment` is documentation only. `min_wrapping_ttl` and
 * `max_wrapping_ttl` hold once response wrapping exists; until then every wrapping request is
 * refused, so they cannot be bypassed.
 */
const PATH_KEYS = new Set([
  'capabilities', 'policy', 'allowed_parameters', 'denied_parameters', 'required_parameters',
  'min_wrapping_ttl', 'max_wrapping_ttl', 'comment',
]);

/**
 * Vault Enterprise keys that Vault's community edition accepts and silently does not enforce. A
 * policy carrying one would grant its path without the MFA or approval its author asked for, so
 * Keywarden refuses it (a documented deviation) instead of loading a weaker policy.
 */
const UNENFORCED_KEYS: Readonly<Record<string, string>> = {
  mfa_methods: 'MFA on a policy path is a Vault Enterprise feature Keywarden does not enforce; remove it (the path would be granted without MFA)',
  control_group: 'control groups are a Vault Enterprise feature Keywarden does not enforce; remove it (the path would be granted without approval)',
};

/**
 * Parses and validates a policy document.
 * @throws BadRequestError "failed to parse policy: line N, column M: ..." for bad syntax, an unknown
 * key or capability, a misplaced wildcard, an invalid template or an invalid wrapping TTL.
 */
export function parsePolicy(name: string, text: string): Policy {
  let document;
  try {
    document = parseHclDocument(text);
  } catch (err) {
    if (err instanceof HclSyntaxError) throw new BadRequestError(`failed to parse policy: ${err.message}`);
    throw err;
  }
  const rules = new Map<string, PathRule>();
  let sawName = false;
  for (const item of document.items) {
    if (item.key === 'name') {
      if (sawName) fail(item.keyPos, 'duplicate key "name"');
      sawName = true;
      if (item.value.kind !== 'string') fail(item.value.pos, `expected a string for "name", got ${describeHclValue(item.value)}`);
      continue;
    }
    if (item.key !== 'path') fail(item.keyPos, `unknown key ${JSON.stringify(item.key)} (a policy holds only "name" and "path")`);
    for (const statement of pathStatements(item)) {
      const rule = parsePathStatement(statement);
      const existing = rules.get(rule.path);
      rules.set(rule.path, existing ? mergePathRules(existing, rule) : rule);
    }
  }
  const list = [...rules.values()];
  return { name, raw: text, rules: list, templated: list.some((rule) => isTemplatedPath(rule.path)) };
}

/**
 * Merges two rules for the same path, as Vault merges the same pattern across policies: a deny in
 * either wins and drops everything else; otherwise capabilities are OR-ed, parameter lists are
 * concatenated (an empty list, meaning "any value", wins), required parameters are unioned, and
 * the lower of two wrapping TTL bounds is kept.
 */
export function mergePathRules(existing: PathRule, incoming: PathRule): PathRule {
  if (existing.capabilities.has('deny')) return existing;
  if (incoming.capabilities.has('deny')) return denyRule(existing.path);
  const rule: { -readonly [K in keyof PathRule]: PathRule[K] } = {
    path: existing.path,
    capabilities: new Set([...existing.capabilities, ...incoming.capabilities]),
    allowedParameters: mergeParameterValues(existing.allowedParameters, incoming.allowedParameters),
    deniedParameters: mergeParameterValues(existing.deniedParameters, incoming.deniedParameters),
    requiredParameters: [...new Set([...existing.requiredParameters, ...incoming.requiredParameters])],
  };
  const minWrappingTtl = lowerBound(existing.minWrappingTtl, incoming.minWrappingTtl);
  const maxWrappingTtl = lowerBound(existing.maxWrappingTtl, incoming.maxWrappingTtl);
  if (minWrappingTtl !== undefined) rule.minWrappingTtl = minWrappingTtl;
  if (maxWrappingTtl !== undefined) rule.maxWrappingTtl = maxWrappingTtl;
  return rule;
}

/** An object without a prototype, so a parameter named `__proto__` is just a key. */
function emptyParameterValues(): Record<string, readonly unknown[]> {
  return Object.create(null) as Record<string, readonly unknown[]>;
}

interface PathStatement {
  readonly path: string;
  readonly pos: SourcePosition;
  readonly body: HclValue;
}

/**
 * The `path` item's statements. HCL `path "a" {}` and JSON `{"path": {"a": {}}}` give an object
 * of path → body; HCL's JSON reader also accepts a list of such objects.
 */
function pathStatements(item: HclItem): PathStatement[] {
  const containers = item.value.kind === 'list' ? item.value.items : [item.value];
  const statements: PathStatement[] = [];
  for (const container of containers) {
    if (container.kind !== 'object') {
      fail(container.pos, `expected an object of path rules for "path", got ${describeHclValue(container)}`);
    }
    for (const entry of container.items) statements.push({ path: entry.key, pos: entry.keyPos, body: entry.value });
  }
  return statements;
}

function parsePathStatement(statement: PathStatement): PathRule {
  const path = statement.path.startsWith('/') ? statement.path.slice(1) : statement.path;
  const where = `path ${JSON.stringify(path)}`;
  checkPathPattern(path, statement.pos, where);
  if (statement.body.kind !== 'object') {
    fail(statement.body.pos, `${where}: expected an object, got ${describeHclValue(statement.body)}`);
  }

  const seen = new Set<string>();
  const capabilities: Capability[] = [];
  const legacy: Capability[] = [];
  let allowedParameters = emptyParameterValues();
  let deniedParameters = emptyParameterValues();
  let requiredParameters: string[] = [];
  let minWrappingTtl: number | undefined;
  let maxWrappingTtl: number | undefined;

  for (const item of statement.body.items) {
    const unenforced = UNENFORCED_KEYS[item.key];
    if (unenforced) fail(item.keyPos, `${where}: ${JSON.stringify(item.key)}: ${unenforced}`);
    if (!PATH_KEYS.has(item.key)) fail(item.keyPos, `${where}: unknown key ${JSON.stringify(item.key)}`);
    if (seen.has(item.key)) fail(item.keyPos, `${where}: duplicate key ${JSON.stringify(item.key)}`);
    seen.add(item.key);
    const value = item.value;
    switch (item.key) {
      case 'capabilities':
        for (const entry of stringList(value, where, item.key)) {
          if (!(CAPABILITIES as readonly string[]).includes(entry.value)) {
            fail(entry.pos, `${where}: invalid capability ${JSON.stringify(entry.value)}`);
          }
          capabilities.push(entry.value as Capability);
        }
        break;
      case 'policy': {
        const word = expectString(value, where, item.key);
        const mapped = Object.hasOwn(LEGACY_POLICY_CAPABILITIES, word) ? LEGACY_POLICY_CAPABILITIES[word] : undefined;
        if (!mapped) fail(value.pos, `${where}: invalid policy ${JSON.stringify(word)} (expected deny, read, write or sudo)`);
        legacy.push(...mapped);
        break;
      }
      case 'allowed_parameters':
        allowedParameters = parameterValues(value, where, item.key);
        break;
      case 'denied_parameters':
        deniedParameters = parameterValues(value, where, item.key);
        break;
      case 'required_parameters':
        requiredParameters = [...new Set(stringList(value, where, item.key).map((entry) => entry.value))];
        break;
      case 'min_wrapping_ttl':
        minWrappingTtl = wrappingTtl(value, where, item.key);
        break;
      case 'max_wrapping_ttl':
        maxWrappingTtl = wrappingTtl(value, where, item.key);
        break;
      case 'comment':
        expectString(value, where, item.key);
        break;
    }
  }

  if (minWrappingTtl && maxWrappingTtl && maxWrappingTtl < minWrappingTtl) {
    fail(statement.pos, `${where}: max_wrapping_ttl cannot be less than min_wrapping_ttl`);
  }
  const granted = new Set<Capability>([...legacy, ...capabilities]);
  if (granted.has('deny')) return denyRule(path);
  const rule: { -readonly [K in keyof PathRule]: PathRule[K] } = {
    path, capabilities: granted, allowedParameters, deniedParameters, requiredParameters,
  };
  if (minWrappingTtl) rule.minWrappingTtl = minWrappingTtl;
  if (maxWrappingTtl) rule.maxWrappingTtl = maxWrappingTtl;
  return rule;
}

/**
 * `*` is a prefix glob and only means that as the last character (Vault would take it literally
 * elsewhere, which is never what the author meant, so it is refused here). `+*` is refused as in
 * Vault. Templates must be well formed.
 */
function checkPathPattern(path: string, pos: SourcePosition, where: string): void {
  if (path.includes('+*')) fail(pos, `${where}: invalid use of wildcards ('+*' is forbidden)`);
  const star = path.indexOf('*');
  if (star >= 0 && star !== path.length - 1) fail(pos, `${where}: '*' is only allowed as the last character`);
  const templateProblem = checkPathTemplate(path);
  if (templateProblem) fail(pos, `${where}: ${templateProblem}`);
}

function denyRule(path: string): PathRule {
  return {
    path,
    capabilities: new Set<Capability>(['deny']),
    allowedParameters: emptyParameterValues(),
    deniedParameters: emptyParameterValues(),
    requiredParameters: [],
  };
}

function mergeParameterValues(existing: ParameterValues, incoming: ParameterValues): Record<string, readonly unknown[]> {
  const merged = emptyParameterValues();
  for (const key of Object.keys(existing)) merged[key] = existing[key]!;
  for (const key of Object.keys(incoming)) {
    const before = Object.hasOwn(merged, key) ? merged[key] : undefined;
    const added = incoming[key]!;
    merged[key] = added.length === 0 || before?.length === 0 ? [] : [...added, ...(before ?? [])];
  }
  return merged;
}

function lowerBound(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Math.min(a, b);
}

/** `{ "name" = [values...] }`; names are lower-cased as Vault does, so matching ignores case. */
function parameterValues(value: HclValue, where: string, key: string): Record<string, readonly unknown[]> {
  if (value.kind !== 'object') fail(value.pos, `${where}: expected an object for ${JSON.stringify(key)}, got ${describeHclValue(value)}`);
  let out = emptyParameterValues();
  for (const entry of value.items) {
    if (entry.value.kind !== 'list') {
      fail(entry.value.pos, `${where}: expected a list of values for ${key} ${JSON.stringify(entry.key)}, got ${describeHclValue(entry.value)}`);
    }
    const single = emptyParameterValues();
    single[entry.key.toLowerCase()] = entry.value.items.map(plainValue);
    out = mergeParameterValues(out, single);
  }
  return out;
}

function wrappingTtl(value: HclValue, where: string, key: string): number {
  if (value.kind !== 'string' && value.kind !== 'number') {
    fail(value.pos, `${where}: expected a duration for ${JSON.stringify(key)}, got ${describeHclValue(value)}`);
  }
  try {
    return parseDurationSeconds(value.value);
  } catch (err) {
    if (err instanceof CoercionError) fail(value.pos, `${where}: invalid ${key}: ${err.message}`);
    throw err;
  }
}

function stringList(value: HclValue, where: string, key: string): { value: string; pos: SourcePosition }[] {
  if (value.kind !== 'list') fail(value.pos, `${where}: expected a list of strings for ${JSON.stringify(key)}, got ${describeHclValue(value)}`);
  return value.items.map((entry) => {
    if (entry.kind !== 'string') fail(entry.pos, `${where}: expected a string in ${JSON.stringify(key)}, got ${describeHclValue(entry)}`);
    return { value: entry.value, pos: entry.pos };
  });
}

function expectString(value: HclValue, where: string, key: string): string {
  if (value.kind !== 'string') fail(value.pos, `${where}: expected a string for ${JSON.stringify(key)}, got ${describeHclValue(value)}`);
  return value.value;
}

/** A parameter value as request data would carry it (objects keep the last of duplicate keys). */
function plainValue(value: HclValue): unknown {
  switch (value.kind) {
    case 'string':
    case 'number':
    case 'bool':
      return value.value;
    case 'null':
      return null;
    case 'list':
      return value.items.map(plainValue);
    case 'object': {
      const out = Object.create(null) as Record<string, unknown>;
      for (const item of value.items) out[item.key] = plainValue(item.value);
      return out;
    }
  }
}

function fail(pos: SourcePosition, message: string): never {
  throw new BadRequestError(`failed to parse policy: line ${pos.line}, column ${pos.column}: ${message}`);
}
