/**
 * Stage 11, shape: a backend's logical response becomes Vault's envelope. No data on a read or
 * list is a 404 with an empty error list; no data on a write is a 204.
 */
import type { LogicalResponse, Operation } from '../framework/request.js';
import type { HostResponse } from './types.js';

/**
 * Routes whose `data` keys are also copied to the top level of the body: a legacy Vault behaviour
 * clients read (hvac's sys.list_mounted_secrets_engines, node-vault's mounts()).
 */
const TOP_LEVEL_DATA_ROUTES = [/^sys\/mounts(\/|$)/, /^sys\/auth(\/|$)/, /^sys\/key-status$/, /^sys\/rotate$/, /^sys\/remount$/, /^sys\/policy(\/|$)/, /^sys\/capabilities/, /^sys\/audit/, /^sys\/rekey\/(recovery-key-)?backup$/];

export function shape(id: string, path: string, operation: Operation, response: LogicalResponse | null): HostResponse {
  if (response?.raw) {
    const { status, body, binary, contentType } = response.raw;
    if (binary) return contentType ? { status, binary, contentType } : { status, binary };
    return contentType ? { status, body, contentType } : { status, body };
  }
  if (!response || (!response.data && !response.warnings && !response.tokenAuth && !response.lease)) {
    return operation === 'read' || operation === 'list' ? { status: 404, body: { errors: [] } } : { status: 204 };
  }
  if (operation === 'list') {
    const keys = response.data?.keys;
    if (!Array.isArray(keys) || keys.length === 0) return { status: 404, body: { errors: [] } };
  }
  const body: Record<string, unknown> = {
    request_id: id,
    lease_id: response.lease?.id ?? '',
    renewable: response.lease?.renewable ?? false,
    lease_duration: response.lease?.duration ?? 0,
    data: response.data ?? null,
    wrap_info: null,
    warnings: response.warnings && response.warnings.length > 0 ? response.warnings : null,
    auth: response.tokenAuth ?? null,
  };
  if (response.data && path.startsWith('sys/') && TOP_LEVEL_DATA_ROUTES.some((re) => re.test(path))) {
    for (const [key, value] of Object.entries(response.data)) {
      if (!(key in body)) body[key] = value;
    }
  }
  return { status: response.status ?? 200, body };
}
