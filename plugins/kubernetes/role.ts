/**
 * The role model: which service accounts may log in (names and namespaces, globs, or a label
 * selector of namespaces), the audience their tokens must name, how the entity alias is named,
 * and the settings of the tokens they get. Stored as JSON under `role/<lower-case name>`.
 */
import type { LegacyTokenValues, Storage, TokenSettings } from '../../sdk/index.js';
import { STORAGE_KEYS, readJson, writeJson } from './storage.js';

/** Storage layout version of a role entry; bump with an upgrade step when the layout changes. */
export const ROLE_STORAGE_VERSION = 1;

/** The entity alias name: the service account's UID (the default; a recreated account is a new identity) or `namespace/name`. */
export const ALIAS_NAME_SOURCES = ['serviceaccount_uid', 'serviceaccount_name'] as const;
export type AliasNameSource = (typeof ALIAS_NAME_SOURCES)[number];

export interface KubernetesRole {
  version: number;
  bound_service_account_names: string[];
  bound_service_account_namespaces: string[];
  /** A label selector (JSON or YAML `matchLabels`) of the namespaces allowed besides the listed ones. */
  bound_service_account_namespace_selector: string;
  audience: string;
  alias_name_source: AliasNameSource;
  token: TokenSettings;
  legacy: LegacyTokenValues;
}

export function readRole(storage: Storage, name: string): Promise<KubernetesRole | undefined> {
  return readJson<KubernetesRole>(storage, STORAGE_KEYS.rolePrefix + name.toLowerCase());
}

export function writeRole(storage: Storage, name: string, role: KubernetesRole): Promise<void> {
  return writeJson(storage, STORAGE_KEYS.rolePrefix + name.toLowerCase(), role);
}

export async function deleteRole(storage: Storage, name: string): Promise<void> {
  await storage.delete(STORAGE_KEYS.rolePrefix + name.toLowerCase());
}

export function listRoles(storage: Storage): Promise<string[]> {
  return storage.list(STORAGE_KEYS.rolePrefix);
}
