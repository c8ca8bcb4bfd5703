/**
 * Vault's ACL path templating: `{{identity.entity.id}}` and friends in a policy path are replaced
 * with the caller's identity when an ACL is built. A path whose template cannot be resolved for
 * this caller is left out of that caller's ACL (it grants nothing, and it shadows nothing).
 */

/** An entity alias, keyed by the mount accessor of the auth method that created it. */
export interface IdentityAlias {
  readonly id: string;
  readonly name: string;
  readonly metadata?: Readonly<Record<string, string>>;
  readonly customMetadata?: Readonly<Record<string, string>>;
}

/** What templates may read about the caller; everything is optional (a token may have no entity). */
export interface IdentityContext {
  readonly entityId?: string;
  readonly entityName?: string;
  readonly entityMetadata?: Readonly<Record<string, string>>;
  /** Keyed by mount accessor, as `identity.entity.aliases.<mount accessor>.name` names them. */
  readonly aliases?: Readonly<Record<string, IdentityAlias>>;
  /** The entity's groups, direct and inherited, for `identity.groups.ids.<id>.…` and `identity.groups.names.<name>.…`. */
  readonly groups?: readonly IdentityGroup[];
}

export interface IdentityGroup {
  readonly id: string;
  readonly name: string;
  readonly metadata?: Readonly<Record<string, string>>;
}

/** Reads one value from the identity; undefined when it is missing. */
type Selector = (identity: IdentityContext) => string | undefined;

type TemplatePart = string | Selector;

/** True when the path contains a template that must be resolved per caller. */
export function isTemplatedPath(path: string): boolean {
  return path.includes('{{');
}

/** Checks every `{{ ... }}` in the path. Returns what is wrong, or undefined when the path is valid. */
export function checkPathTemplate(path: string): string | undefined {
  const parsed = parseTemplate(path);
  return typeof parsed === 'string' ? parsed : undefined;
}

/**
 * Renders a templated path for one caller. Returns undefined when a value is missing, or when a
 * value contains `*` or `+`: a user-chosen name such as `*` must not turn a path into a wildcard
 * (current Vault and OpenBao refuse wildcard characters in rendered values the same way).
 */
export function renderPathTemplate(path: string, identity: IdentityContext | undefined): string | undefined {
  const parsed = parseTemplate(path);
  if (typeof parsed === 'string') return undefined;
  let out = '';
  for (const part of parsed) {
    if (typeof part === 'string') {
      out += part;
      continue;
    }
    if (!identity) return undefined;
    const value = part(identity);
    if (value === undefined || value.includes('*') || value.includes('+')) return undefined;
    out += value;
  }
  return out;
}

/** The literal pieces and selectors of a path, or a message saying why the template is invalid. */
function parseTemplate(path: string): TemplatePart[] | string {
  const parts: TemplatePart[] = [];
  let rest = path;
  for (;;) {
    const open = rest.indexOf('{{');
    if (open < 0) {
      if (rest !== '') parts.push(rest);
      return parts;
    }
    if (open > 0) parts.push(rest.slice(0, open));
    const close = rest.indexOf('}}', open + 2);
    const inner = close < 0 ? undefined : rest.slice(open + 2, close);
    if (inner === undefined || inner.includes('{{')) return 'unbalanced templating characters: "{{" without a matching "}}"';
    const expression = inner.trim();
    const selector = parseSelector(expression);
    if (!selector) return `unsupported template "{{${expression}}}"`;
    parts.push(selector);
    rest = rest.slice(close + 2);
  }
}

function parseSelector(expression: string): Selector | undefined {
  const entityPrefix = 'identity.entity.';
  if (expression.startsWith(entityPrefix)) return parseEntitySelector(expression.slice(entityPrefix.length));
  const groups = /^identity\.groups\.(ids|names)\.([^.]+)\.(id|name|metadata\..+)$/.exec(expression);
  if (!groups) return undefined;
  const [, by, key, field] = groups as unknown as [string, 'ids' | 'names', string, string];
  // A group is named by id to read its name or metadata, by name to read its id or metadata.
  if ((by === 'ids' && field === 'id') || (by === 'names' && field === 'name')) return undefined;
  const group = (identity: IdentityContext) => identity.groups?.find((g) => (by === 'ids' ? g.id === key : g.name === key));
  if (field === 'id') return (identity) => nonEmpty(group(identity)?.id);
  if (field === 'name') return (identity) => nonEmpty(group(identity)?.name);
  const metadataKey = field.slice('metadata.'.length);
  return (identity) => lookup(group(identity)?.metadata, metadataKey);
}

function parseEntitySelector(field: string): Selector | undefined {
  if (field === 'id') return (identity) => nonEmpty(identity.entityId);
  if (field === 'name') return (identity) => nonEmpty(identity.entityName);
  const metadataKey = afterPrefix(field, 'metadata.');
  if (metadataKey !== undefined) return (identity) => lookup(identity.entityMetadata, metadataKey);
  const aliasSelector = afterPrefix(field, 'aliases.');
  if (aliasSelector === undefined) return undefined;
  const dot = aliasSelector.indexOf('.');
  if (dot <= 0) return undefined;
  const accessor = aliasSelector.slice(0, dot);
  const aliasField = aliasSelector.slice(dot + 1);
  const alias = (identity: IdentityContext): IdentityAlias | undefined =>
    identity.aliases && Object.hasOwn(identity.aliases, accessor) ? identity.aliases[accessor] : undefined;
  if (aliasField === 'id') return (identity) => nonEmpty(alias(identity)?.id);
  if (aliasField === 'name') return (identity) => nonEmpty(alias(identity)?.name);
  const aliasMetadataKey = afterPrefix(aliasField, 'metadata.');
  if (aliasMetadataKey !== undefined) return (identity) => lookup(alias(identity)?.metadata, aliasMetadataKey);
  const customKey = afterPrefix(aliasField, 'custom_metadata.');
  if (customKey !== undefined) return (identity) => lookup(alias(identity)?.customMetadata, customKey);
  return undefined;
}

/** The rest of `text` after `prefix`, when that rest is not empty. */
function afterPrefix(text: string, prefix: string): string | undefined {
  return text.startsWith(prefix) && text.length > prefix.length ? text.slice(prefix.length) : undefined;
}

/** An empty id or name counts as missing, as in Vault; an empty metadata value is a value. */
function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

function lookup(map: Readonly<Record<string, string>> | undefined, key: string): string | undefined {
  return map && Object.hasOwn(map, key) ? map[key] : undefined;
}
