/**
 * The role-tag deny list: tags that may no longer be used to log in. Tokens already issued with
 * a tag stay valid; an entry is kept until tidy finds it past its expiration and safety buffer.
 */
import type { Storage } from '../../storage/storage.js';
import { STORAGE_KEYS, readJson, writeJson } from './storage.js';

export interface DenyListEntry {
  creation_time: string;
  /** Once this (plus the tidy safety buffer) has passed, no token from the tag can be alive. */
  expiration_time: string;
}

const entryKey = (tag: string) => STORAGE_KEYS.denyListPrefix + Buffer.from(tag, 'utf8').toString('base64url');

export async function readDenyListEntry(storage: Storage, tag: string): Promise<DenyListEntry | undefined> {
  return readJson<DenyListEntry>(storage, entryKey(tag));
}

export async function writeDenyListEntry(storage: Storage, tag: string, entry: DenyListEntry): Promise<void> {
  await writeJson(storage, entryKey(tag), entry);
}

export async function deleteDenyListEntry(storage: Storage, tag: string): Promise<void> {
  await storage.delete(entryKey(tag));
}

/** The deny-listed tags, as tags (not as storage keys). */
export async function listDenyList(storage: Storage): Promise<string[]> {
  const keys = (await storage.list(STORAGE_KEYS.denyListPrefix)).filter((key) => !key.endsWith('/'));
  return keys.map((key) => Buffer.from(key, 'base64url').toString('utf8'));
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
