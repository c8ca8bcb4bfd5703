/**
 * The role model: what a token must say to log in (audiences, subject, claims), which claims name
 * the user and their groups, the OIDC settings of the role, and the settings of the tokens it
 * gets. Stored as JSON under `role/<lower-case name>`.
 */
import type { LegacyTokenValues, Storage, TokenSettings } from '../../sdk/index.js';
import { STORAGE_KEYS, readJson, writeJson } from './storage.js';

/** Storage layout version of a role entry; bump with an upgrade step when the layout changes. */
export const ROLE_STORAGE_VERSION = 1;

export type RoleType = 'jwt' | 'oidc';
export type BoundClaimsType = 'string' | 'glob';

/**
 * The leeways' "unset" value: Vault stores 0 and reads it as the default (150 s for expiration and
 * not-before, 60 s of clock skew); -1 turns a leeway off.
 */
export const DEFAULT_LEEWAY = { expiration: 150, notBefore: 150, clockSkew: 60 } as const;

export interface JwtRole {
  version: number;
  role_type: RoleType;
  bound_audiences: string[];
  bound_subject: string;
  bound_claims_type: BoundClaimsType;
  bound_claims: Record<string, unknown>;
  claim_mappings: Record<string, string>;
  user_claim: string;
  user_claim_json_pointer: boolean;
  groups_claim: string;
  oidc_scopes: string[];
  allowed_redirect_uris: string[];
  /** Seconds; 0 is the default, -1 none. */
  expiration_leeway: number;
  not_before_leeway: number;
  clock_skew_leeway: number;
  /** Seconds since the user last authenticated at the provider that an OIDC login accepts; 0: any. */
  max_age: number;
  token: TokenSettings;
  legacy: LegacyTokenValues;
}

export function readRole(storage: Storage, name: string): Promise<JwtRole | undefined> {
  return readJson<JwtRole>(storage, STORAGE_KEYS.rolePrefix + name.toLowerCase());
}

export function writeRole(storage: Storage, name: string, role: JwtRole): Promise<void> {
  return writeJson(storage, STORAGE_KEYS.rolePrefix + name.toLowerCase(), role);
}

export async function deleteRole(storage: Storage, name: string): Promise<void> {
  await storage.delete(STORAGE_KEYS.rolePrefix + name.toLowerCase());
}

export function listRoles(storage: Storage): Promise<string[]> {
  return storage.list(STORAGE_KEYS.rolePrefix);
}
