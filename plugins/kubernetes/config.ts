/**
 * The mount's configuration: the API server that reviews tokens (`kubernetes_host`, its CA, the
 * reviewer's own token), the keys that may verify service account tokens locally first
 * (`pem_keys`), and the issuer they must name. Stored as JSON under `config`.
 */
import type { Storage } from '../../sdk/index.js';
import { STORAGE_KEYS, readJson, writeJson } from './storage.js';

/** Storage layout version of the config entry; bump with an upgrade step when the layout changes. */
export const CONFIG_STORAGE_VERSION = 1;

/** The issuer of service account tokens when the configuration names none (Kubernetes' legacy tokens). */
export const DEFAULT_ISSUER = 'kubernetes/serviceaccount';

export interface KubernetesConfig {
  version: number;
  kubernetes_host: string;
  kubernetes_ca_cert: string;
  /** Never returned by a read (`token_reviewer_jwt_set` says whether there is one). */
  token_reviewer_jwt: string;
  pem_keys: string[];
  issuer: string;
  disable_iss_validation: boolean;
  disable_local_ca_jwt: boolean;
}

export function readConfig(storage: Storage): Promise<KubernetesConfig | undefined> {
  return readJson<KubernetesConfig>(storage, STORAGE_KEYS.config);
}

export function writeConfig(storage: Storage, config: KubernetesConfig): Promise<void> {
  return writeJson(storage, STORAGE_KEYS.config, config);
}

export function configResponse(config: KubernetesConfig): Record<string, unknown> {
  return {
    kubernetes_host: config.kubernetes_host,
    kubernetes_ca_cert: config.kubernetes_ca_cert,
    pem_keys: config.pem_keys,
    issuer: config.issuer,
    disable_iss_validation: config.disable_iss_validation,
    disable_local_ca_jwt: config.disable_local_ca_jwt,
    token_reviewer_jwt_set: config.token_reviewer_jwt !== '',
  };
}
