/**
 * `config/identity`: which identity alias a login creates and which metadata fields it puts on the
 * token, the audit log and the alias. A metadata list that was never set (or set to `default`)
 * means the defaults, so changing the defaults later needs no storage migration.
 */
import type { Storage } from '../../storage/storage.js';
import { STORAGE_KEYS, readJson } from './storage.js';

export const IAM_ALIAS_VALUES = ['role_id', 'unique_id', 'full_arn'] as const;
export const EC2_ALIAS_VALUES = ['role_id', 'instance_id', 'image_id'] as const;

/** Fields every login carries unless the operator chose others. */
export const DEFAULT_METADATA_FIELDS = ['account_id', 'auth_type'] as const;
export const IAM_METADATA_FIELDS = [
  'canonical_arn',
  'client_arn',
  'client_user_id',
  'inferred_cloud_region',
  'inferred_entity_id',
  'inferred_entity_type',
] as const;
export const EC2_METADATA_FIELDS = ['ami_id', 'instance_id', 'region'] as const;

/**
 * Vault's names for our metadata fields. A selection may use either and is stored as written (so a
 * Vault client reads back what it wrote); a login's metadata carries both keys, so policies
 * templated on Vault's key and on ours both work.
 */
export const VAULT_METADATA_NAMES: Readonly<Record<string, string>> = { inferred_cloud_region: 'inferred_aws_region' };
const OUR_METADATA_NAMES: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(VAULT_METADATA_NAMES).map(([ours, vaults]) => [vaults, ours]),
);

export interface IdentityConfig {
  iam_alias: string;
  /** Undefined: the defaults. */
  iam_metadata?: string[];
  ec2_alias: string;
  ec2_metadata?: string[];
}

export async function readIdentityConfig(storage: Storage): Promise<IdentityConfig> {
  const stored = await readJson<IdentityConfig>(storage, STORAGE_KEYS.identityConfig);
  return stored ?? { iam_alias: 'role_id', ec2_alias: 'role_id' };
}

/** The fields in effect: the chosen ones, or the defaults. */
export function effectiveMetadataFields(chosen: readonly string[] | undefined): string[] {
  return chosen ? [...chosen] : [...DEFAULT_METADATA_FIELDS];
}

/**
 * Checks a metadata selection: `["default"]` alone means the defaults (undefined), `default`
 * mixed with other fields is refused, and so is a field the login type does not have.
 * Returns the error message, or the selection to store.
 */
export function parseMetadataSelection(
  selection: readonly string[],
  available: readonly string[],
): { fields: string[] | undefined } | { error: string } {
  if (selection.length === 1 && selection[0] === 'default') return { fields: undefined };
  if (selection.includes('default')) {
    return { error: `[${selection.map((f) => JSON.stringify(f)).join(' ')}] contains default - default can't be used in combination with other fields` };
  }
  const all = [...DEFAULT_METADATA_FIELDS, ...available];
  if (selection.some((field) => !all.includes(ourName(field)))) {
    return { error: `"${selection.join(', ')}" contains an unavailable field, please select from "${all.join(', ')}"` };
  }
  const seen = new Set<string>();
  return { fields: selection.filter((field) => !seen.has(ourName(field)) && seen.add(ourName(field))) };
}

/** The chosen fields that have a non-empty value, each also under Vault's name where that differs. */
export function selectMetadata(fields: readonly string[], values: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const field of fields) {
    const ours = ourName(field);
    const value = values[ours];
    if (!value) continue;
    out[ours] = value;
    const vaults = VAULT_METADATA_NAMES[ours];
    if (vaults) out[vaults] = value;
  }
  return out;
}

function ourName(field: string): string {
  return OUR_METADATA_NAMES[field] ?? field;
}
