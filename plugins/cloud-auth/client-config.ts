/** The `config/client` entry: how the method reaches the provider, and the iam login header rules. */
import type { Storage } from '../../sdk/index.js';
import { STORAGE_KEYS, readJson } from './storage.js';

export interface ClientConfig {
  access_key: string;
  secret_key: string;
  /** EC2 endpoint override. */
  endpoint: string;
  iam_endpoint: string;
  sts_endpoint: string;
  sts_region: string;
  use_sts_region_from_client: boolean;
  iam_server_id_header_value: string;
  /** Canonical header names (`X-Amz-Foo`) allowed in iam login requests beyond the defaults. */
  allowed_sts_header_values: string[];
  /** -1: the SDK's default. */
  max_retries: number;
}

export function emptyClientConfig(): ClientConfig {
  return {
    access_key: '',
    secret_key: '',
    endpoint: '',
    iam_endpoint: '',
    sts_endpoint: '',
    sts_region: '',
    use_sts_region_from_client: false,
    iam_server_id_header_value: '',
    allowed_sts_header_values: [],
    max_retries: -1,
  };
}

export async function readClientConfig(storage: Storage): Promise<ClientConfig | undefined> {
  const stored = await readJson<Partial<ClientConfig>>(storage, STORAGE_KEYS.clientConfig);
  return stored ? { ...emptyClientConfig(), ...stored } : undefined;
}

/** The role to assume for an account (`config/sts/<account>`), if one is configured. */
export async function readStsRole(storage: Storage, accountId: string): Promise<string | undefined> {
  return (await readJson<{ sts_role: string }>(storage, STORAGE_KEYS.stsPrefix + accountId))?.sts_role;
}
