/**
 * The role-tag deny list: tags that may no longer be used to log in. Tokens already issued with
 * a tag stay valid; an entry is kept until tidy finds it past its expiration and safety buffer.
 *
 * Entries are keyed by the tag's canonical form (role-tag.ts), whatever spelling a request names
 * it by: the HMAC covers only the canonical form, so keying by the spelling let a rewritten tag
 * (same fields, valid HMAC) miss its entry. Earlier versions keyed by the spelling given; such a
 * legacy entry still denies its tag. It is found by a scan of the list until `migrateDenyList`
 * (run by the periodic hook, on the active node) has moved every one under its canonical key and
 * written the marker that ends the scans.
 */
import type { Storage } from '../../sdk/index.js';
import { STORAGE_KEYS, readJson, writeJson } from './storage.js';
import { RoleTagError, canonicalRoleTag } from './role-tag.js';

export interface DenyListEntry {
  creation_time: string;
  /** Once this (plus the tidy safety buffer) has passed, no token from the tag can be alive. */
  expiration_time: string;
}

const entryKey = (tag: string) => STORAGE_KEYS.denyListPrefix + Buffer.from(tag, 'utf8').toString('base64url');

/**
 * The name a tag is deny-listed under: its canonical form. A value that is not a role tag at all
 * names itself (no entry can exist for it, as only verified tags are ever written).
 */
export function denyListName(value: string): string {
  try {
    return canonicalRoleTag(value);
  } catch (err) {
    if (err instanceof RoleTagError) return value;
    throw err;
  }
}

/** The entry of a tag, under any of its spellings. */
export async function readDenyListEntry(storage: Storage, tag: string): Promise<DenyListEntry | undefined> {
  const name = denyListName(tag);
  const entries = [await readJson<DenyListEntry>(storage, entryKey(name))];
  for (const key of await legacyKeys(storage, name)) entries.push(await readJson<DenyListEntry>(storage, key));
  return merged(entries);
}

/** Writes the entry under the canonical key and drops the tag's legacy entries (the caller's read merged them in). */
export async function writeDenyListEntry(storage: Storage, tag: string, entry: DenyListEntry): Promise<void> {
  const name = denyListName(tag);
  await writeJson(storage, entryKey(name), entry);
  for (const key of await legacyKeys(storage, name)) await storage.delete(key);
}

/** Removes the tag's entry, under every spelling it was stored by. */
export async function deleteDenyListEntry(storage: Storage, tag: string): Promise<void> {
  const name = denyListName(tag);
  for (const key of await legacyKeys(storage, name)) await storage.delete(key);
  await storage.delete(entryKey(name));
}

/** The deny-listed tags, in canonical form and each once (not as storage keys). */
export async function listDenyList(storage: Storage): Promise<string[]> {
  return [...new Set((await storedTags(storage)).map(({ tag }) => denyListName(tag)))];
}

/**
 * Moves every legacy entry under its canonical key (merged with an entry already there), then
 * writes the marker so lookups stop scanning. Idempotent; returns how many entries were moved.
 */
export async function migrateDenyList(storage: Storage): Promise<number> {
  if (await keyedCanonically(storage)) return 0;
  let moved = 0;
  for (const { key, tag } of await storedTags(storage)) {
    const name = denyListName(tag);
    if (name === tag) continue;
    const entry = merged([await readJson<DenyListEntry>(storage, entryKey(name)), await readJson<DenyListEntry>(storage, key)]);
    if (entry) await writeJson(storage, entryKey(name), entry);
    await storage.delete(key);
    moved++;
  }
  await writeJson(storage, STORAGE_KEYS.denyListKeyedCanonically, { migrated_entries: moved });
  return moved;
}

async function keyedCanonically(storage: Storage): Promise<boolean> {
  return (await readJson(storage, STORAGE_KEYS.denyListKeyedCanonically)) !== undefined;
}

async function storedTags(storage: Storage): Promise<{ key: string; tag: string }[]> {
  const keys = (await storage.list(STORAGE_KEYS.denyListPrefix)).filter((key) => !key.endsWith('/'));
  return keys.map((key) => ({ key: STORAGE_KEYS.denyListPrefix + key, tag: Buffer.from(key, 'base64url').toString('utf8') }));
}

/** Storage keys of entries stored under another spelling of the tag named `name`; none once migrated. */
async function legacyKeys(storage: Storage, name: string): Promise<string[]> {
  if (await keyedCanonically(storage)) return [];
  return (await storedTags(storage)).filter(({ tag }) => tag !== name && denyListName(tag) === name).map(({ key }) => key);
}

/** One entry for several spellings of a tag: denied since the earliest, until the latest expiry. */
function merged(entries: readonly (DenyListEntry | undefined)[]): DenyListEntry | undefined {
  const present = entries.filter((entry): entry is DenyListEntry => entry !== undefined);
  if (present.length === 0) return undefined;
  const at = (time: string) => Date.parse(time);
  return {
    creation_time: present.reduce((a, b) => (at(b.creation_time) < at(a.creation_time) ? b : a)).creation_time,
    expiration_time: present.reduce((a, b) => (at(b.expiration_time) > at(a.expiration_time) ? b : a)).expiration_time,
  };
}

/**
 * A deny-list path value: the tag as is, or the tag in base64 (standard or URL-safe). A role tag
 * always holds `:`, which base64 never does, so the two cannot be confused.
 */
export function tagFromPath(value: string): string {
  if (value.includes(':')) return value;
  const decoded = Buffer.from(value, /[-_]/.test(value) ? 'base64url' : 'base64').toString('utf8');
  return decoded.startsWith('v') && decoded.includes(':') ? decoded : value;
}
