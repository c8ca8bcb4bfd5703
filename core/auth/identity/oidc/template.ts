/**
 * A role's claims template (https://developer.hashicorp.com/vault/docs/secrets/identity/identity-token#token-contents-and-templates):
 * a JSON object whose `{{...}}` placeholders are replaced by JSON values from the token's entity
 * (`identity.entity.id`, `.name`, `.metadata[.key]`, `.groups.ids`, `.groups.names`,
 * `.aliases.<mount accessor>.id|name|metadata[.key]|custom_metadata[.key]`) or the time
 * (`time.now`, `time.now.plus.<duration>`, `time.now.minus.<duration>`). A value that is missing
 * renders as an empty string. Keys the issuer sets itself may not be templated.
 */
import { BadRequestError } from '../../../errors.js';
import { parseDurationSeconds } from '../../../framework/fields.js';

/** Claims the issuer sets; a template may not set them. */
const RESERVED = ['iat', 'aud', 'exp', 'iss', 'sub', 'namespace', 'nonce', 'auth_time', 'at_hash', 'c_hash'];

export interface TemplateAlias {
  readonly id: string;
  readonly name: string;
  readonly metadata: Readonly<Record<string, string>>;
  readonly custom_metadata: Readonly<Record<string, string>>;
}

export interface TemplateIdentity {
  readonly entityId: string;
  readonly entityName: string;
  readonly metadata: Readonly<Record<string, string>>;
  readonly groupIds: readonly string[];
  readonly groupNames: readonly string[];
  /** By mount accessor. */
  readonly aliases: Readonly<Record<string, TemplateAlias>>;
}

const EMPTY: TemplateIdentity = { entityId: '', entityName: '', metadata: {}, groupIds: [], groupNames: [], aliases: {} };

/** A template as given: JSON, or JSON in base64 (as Vault accepts). Returns the JSON text. */
export function templateText(template: string): string {
  const trimmed = template.trim();
  if (trimmed === '' || trimmed.startsWith('{')) return trimmed;
  const decoded = Buffer.from(trimmed, 'base64').toString('utf8').trim();
  return decoded.startsWith('{') ? decoded : trimmed;
}

/** Checks a template when a role is written: it must render to a JSON object without reserved keys. */
export function checkTemplate(template: string): void {
  render(templateText(template), EMPTY, new Date(0));
}

/** The template's claims for one token. */
export function render(template: string, identity: TemplateIdentity, now: Date): Record<string, unknown> {
  if (template === '') return {};
  const text = template.replace(/\{\{\s*([^{}\s]+)\s*\}\}/g, (_match, selector: string) => JSON.stringify(valueOf(selector, identity, now)));
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new BadRequestError(`error parsing template JSON: ${(err as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new BadRequestError('template must be a JSON object');
  for (const key of Object.keys(parsed)) {
    if (RESERVED.includes(key)) throw new BadRequestError(`top level key "${key}" not allowed. Restricted keys: ${RESERVED.join(', ')}`);
  }
  return parsed as Record<string, unknown>;
}

function valueOf(selector: string, identity: TemplateIdentity, now: Date): unknown {
  const seconds = Math.floor(now.getTime() / 1000);
  if (selector === 'time.now') return seconds;
  const shifted = /^time\.now\.(plus|minus)\.(.+)$/.exec(selector);
  if (shifted) {
    const amount = durationOf(shifted[2]!);
    return shifted[1] === 'plus' ? seconds + amount : seconds - amount;
  }
  const entity = 'identity.entity.';
  if (!selector.startsWith(entity)) throw new BadRequestError(`unknown template placeholder "${selector}"`);
  const rest = selector.slice(entity.length);
  if (rest === 'id') return identity.entityId;
  if (rest === 'name') return identity.entityName;
  if (rest === 'metadata') return identity.metadata;
  if (rest.startsWith('metadata.')) return identity.metadata[rest.slice('metadata.'.length)] ?? '';
  if (rest === 'groups.ids') return identity.groupIds;
  if (rest === 'groups.names') return identity.groupNames;
  const alias = /^aliases\.([^.]+)\.(id|name|metadata|custom_metadata)(?:\.(.+))?$/.exec(rest);
  if (alias) {
    const found = Object.hasOwn(identity.aliases, alias[1]!) ? identity.aliases[alias[1]!] : undefined;
    const field = alias[2] as 'id' | 'name' | 'metadata' | 'custom_metadata';
    if (field === 'id' || field === 'name') return alias[3] === undefined ? (found?.[field] ?? '') : badSelector(selector);
    const map = found?.[field] ?? {};
    return alias[3] === undefined ? map : (map[alias[3]] ?? '');
  }
  return badSelector(selector);
}

function badSelector(selector: string): never {
  throw new BadRequestError(`unknown template placeholder "${selector}"`);
}

function durationOf(text: string): number {
  try {
    return parseDurationSeconds(text);
  } catch {
    throw new BadRequestError(`invalid duration "${text}" in template placeholder`);
  }
}
