/** The tidy settings of the identity access list and the role-tag deny list (two singletons of one shape). */
import type { Storage } from '../../sdk/index.js';
import { STORAGE_KEYS, readJson } from './storage.js';

export interface TidyConfig {
  /** Seconds past an entry's expiry before tidy removes it. */
  safety_buffer: number;
  disable_periodic_tidy: boolean;
}

/** 72h for both lists, as Vault's API documentation says; its code defaults the deny list's to 180 days (docs/cloud-auth.md, "Tidy"). */
export const DEFAULT_SAFETY_BUFFER = 72 * 3600;

export type TidyList = 'accesslist' | 'denylist';

export function tidyConfigKey(list: TidyList): string {
  return list === 'accesslist' ? STORAGE_KEYS.tidyAccessList : STORAGE_KEYS.tidyDenyList;
}

export async function readTidyConfig(storage: Storage, list: TidyList): Promise<TidyConfig | undefined> {
  return readJson<TidyConfig>(storage, tidyConfigKey(list));
}
