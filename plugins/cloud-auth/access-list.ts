/**
 * The identity access list: one entry per instance that logged in with ec2, holding the client
 * nonce that lets it log in again, the pendingTime of the document it used, and until when the
 * entry matters. Every read-check-write of an entry runs under the instance's lock
 * (`CloudAuthContext.accessListLocks`).
 */
import type { Storage } from '../../sdk/index.js';
import { STORAGE_KEYS, readJson, writeJson } from './storage.js';

export interface AccessListEntry {
  /** The role of the first login, as the client named it. */
  role: string;
  /** '' when reauthentication is disabled. */
  client_nonce: string;
  creation_time: string;
  disallow_reauthentication: boolean;
  /** The pendingTime of the last login's document, verbatim. */
  pending_time: string;
  /** After this (plus the tidy safety buffer) tidy removes the entry. */
  expiration_time: string;
  last_updated_time: string;
}

const entryKey = (instanceId: string) => STORAGE_KEYS.accessListPrefix + instanceId;

export async function readAccessListEntry(storage: Storage, instanceId: string): Promise<AccessListEntry | undefined> {
  return readJson<AccessListEntry>(storage, entryKey(instanceId));
}

export async function writeAccessListEntry(storage: Storage, instanceId: string, entry: AccessListEntry): Promise<void> {
  await writeJson(storage, entryKey(instanceId), entry);
}

export async function deleteAccessListEntry(storage: Storage, instanceId: string): Promise<void> {
  await storage.delete(entryKey(instanceId));
}

export async function listAccessList(storage: Storage): Promise<string[]> {
  return (await storage.list(STORAGE_KEYS.accessListPrefix)).filter((key) => !key.endsWith('/'));
}
