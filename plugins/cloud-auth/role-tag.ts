/**
 * Role tags: a value an operator writes as a tag on an instance to narrow what its ec2 logins get
 * from the role. The format is exact (docs/cloud-auth.md, "Role tags"):
 *
 *   v1:<nonce>:r=<role>:d=<bool>:m=<bool>[:p=<policies>][:i=<instance_id>][:t=<max_ttl seconds>]:<hmac>
 *
 * where the HMAC is HMAC-SHA-256, keyed with the role's `hmac_key`, over everything before the
 * last `:`, in standard base64. The HMAC is checked over the canonical re-serialisation of what was
 * parsed, so a rewritten spelling of a tag (items reordered or repeated, `d=0`, padded policies,
 * `:t=0`) would carry a valid HMAC; such a spelling is refused outright (verifyRoleTag), and the
 * deny list is keyed by the canonical form (deny-list.ts), so no spelling slips past it.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { BadRequestError, CoercionError, createError, parseBool, type Storage } from '../../sdk/index.js';
import { readRole, type RoleEntry } from './role.js';

export const ROLE_TAG_VERSION = 'v1';
/** EC2 allows tag values of at most this many characters. */
export const MAX_ROLE_TAG_LENGTH = 255;

export interface RoleTag {
  readonly nonce: string;
  /** Lower-case role name. */
  readonly role: string;
  readonly disallowReauthentication: boolean;
  readonly allowInstanceMigration: boolean;
  /** Sorted and de-duplicated; empty: the role's policies apply. */
  readonly policies: readonly string[];
  /** Lower-case; '' for a tag any instance may carry. */
  readonly instanceId: string;
  /** Seconds; 0 for none. */
  readonly maxTtl: number;
}

/** A tag that cannot be parsed or does not verify: a 400, its message for the client (callers say where the tag came from). */
export const RoleTagError = createError('RoleTagError', 'KW_CLOUD_ROLE_TAG', 400, { parent: BadRequestError });
export type RoleTagError = InstanceType<typeof RoleTagError>;

/** Everything the HMAC covers, in the one canonical order. */
export function roleTagPlaintext(tag: RoleTag): string {
  let text = `${ROLE_TAG_VERSION}:${tag.nonce}:r=${tag.role}:d=${tag.disallowReauthentication}:m=${tag.allowInstanceMigration}`;
  if (tag.policies.length > 0) text += `:p=${tag.policies.join(',')}`;
  if (tag.instanceId) text += `:i=${tag.instanceId}`;
  if (tag.maxTtl > 0) text += `:t=${tag.maxTtl}`;
  return text;
}

export function roleTagHmac(plaintext: string, hmacKey: string): string {
  return createHmac('sha256', hmacKey).update(plaintext, 'utf8').digest('base64');
}

/** The complete tag value. */
export function serializeRoleTag(tag: RoleTag, hmacKey: string): string {
  const plaintext = roleTagPlaintext(tag);
  return `${plaintext}:${roleTagHmac(plaintext, hmacKey)}`;
}

/**
 * Policies as a tag carries them: trimmed, lower-cased, de-duplicated and sorted, `root` alone when
 * present. An empty list given on purpose means "only default" (as
 * https://developer.hashicorp.com/vault/api-docs/auth/aws#create-role-tags says;
 * docs/cloud-auth.md, "Role tags"): it is written as `p=default`, because a tag without `p=` means
 * "the role's policies".
 */
export function tagPolicies(given: readonly string[]): string[] {
  const clean = [...new Set(given.map((p) => p.trim().toLowerCase()).filter((p) => p !== ''))].sort();
  if (clean.includes('root')) return ['root'];
  return clean.length > 0 ? clean : ['default'];
}

/**
 * A new tag for a role. The nonce is drawn again while the value or its base64 would hold `//`:
 * a path segment cannot be empty, so such a tag could not be named in `roletag-denylist/<tag>`.
 */
export function createRoleTag(fields: Omit<RoleTag, 'nonce'>, hmacKey: string): string {
  for (;;) {
    const value = serializeRoleTag({ ...fields, nonce: randomBytes(8).toString('base64') }, hmacKey);
    if (!value.includes('//') && !Buffer.from(value, 'utf8').toString('base64').includes('//')) return value;
  }
}

/** Reads a tag's fields; the HMAC is not checked here (see verifyRoleTag). */
export function parseRoleTag(value: string): RoleTag & { readonly hmac: string } {
  const items = value.split(':');
  if (items.length < 4) throw new RoleTagError('invalid tag');
  if (items[0] !== ROLE_TAG_VERSION) throw new RoleTagError('invalid role tag version');
  const hmac = items[items.length - 1]!;
  let role = '';
  let policies: string[] = [];
  let instanceId = '';
  let maxTtl = 0;
  let disallowReauthentication = false;
  let allowInstanceMigration = false;
  const bool = (item: string): boolean => {
    try {
      return parseBool(item.slice(2));
    } catch (err) {
      if (err instanceof CoercionError) throw new RoleTagError(`invalid item "${item}" in tag: ${err.message}`);
      throw err;
    }
  };
  for (const item of items.slice(2, -1)) {
    switch (item.slice(0, 2)) {
      case 'r=':
        role = item.slice(2);
        break;
      case 'd=':
        disallowReauthentication = bool(item);
        break;
      case 'm=':
        allowInstanceMigration = bool(item);
        break;
      case 'p=':
        policies = [...new Set(item.slice(2).split(',').map((p) => p.trim()).filter((p) => p !== ''))].sort();
        break;
      case 'i=':
        instanceId = item.slice(2);
        break;
      case 't=':
        if (!/^\d+$/.test(item.slice(2))) throw new RoleTagError(`invalid item "${item}" in tag: max_ttl must be whole seconds`);
        maxTtl = Number(item.slice(2));
        break;
      default:
        throw new RoleTagError(`unrecognized item "${item}" in tag`);
    }
  }
  if (!role) throw new RoleTagError('missing role name');
  return { nonce: items[1]!, role, disallowReauthentication, allowInstanceMigration, policies, instanceId, maxTtl, hmac };
}

/** The one spelling of a tag that this server writes and accepts: its canonical plaintext and its HMAC. */
export function canonicalRoleTag(value: string): string {
  return canonicalSpelling(parseRoleTag(value));
}

function canonicalSpelling(parsed: RoleTag & { readonly hmac: string }): string {
  return `${roleTagPlaintext(parsed)}:${parsed.hmac}`;
}

/**
 * Parses a tag, refuses any spelling but the canonical one, loads the role it names and checks the
 * HMAC with that role's key.
 */
export async function verifyRoleTag(storage: Storage, value: string): Promise<{ tag: RoleTag; role: RoleEntry }> {
  const parsed = parseRoleTag(value);
  if (value !== canonicalSpelling(parsed)) {
    throw new RoleTagError(
      'the role tag is not in its canonical form (as role/<role>/tag wrote it: items r, d, m, p, i, t in that order and each ' +
        'at most once, d and m as true or false, policies sorted and unique without spaces, no empty p= and no t=0)',
    );
  }
  const role = await readRole(storage, parsed.role);
  if (!role) throw new RoleTagError(`entry not found for "${parsed.role}"`);
  const expected = Buffer.from(roleTagHmac(roleTagPlaintext(parsed), role.hmac_key), 'utf8');
  const given = Buffer.from(parsed.hmac, 'utf8');
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) throw new RoleTagError('role tag signature verification failed');
  const { hmac: _hmac, ...tag } = parsed;
  return { tag, role };
}

/** Whether every policy of the tag is the role's; `default` is every token's and always allowed. */
export function tagPoliciesAllowed(tagPolicies: readonly string[], rolePolicies: readonly string[]): boolean {
  return tagPolicies.every((p) => p === 'default' || rolePolicies.includes(p));
}
