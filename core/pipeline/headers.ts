/**
 * Stage 2, header checks: a Vault request header that changes what a request means, and that
 * Keywarden does not honour, is refused with a 400 naming it — never ignored, so no client believes
 * its answer came back wrapped, from a namespace, or past an MFA or policy check that never ran.
 */
import { BadRequestError } from '../errors.js';
import type { ReadRequest } from './types.js';

/** Headers refused whatever their value, with the reason a client reads. */
const REFUSED: ReadonlyArray<readonly [header: string, reason: string]> = [
  ['x-vault-mfa', 'login MFA is not supported'],
  ['x-vault-policy-override', 'Sentinel policy overrides are not supported'],
  ['x-vault-index', 'replication consistency (X-Vault-Index) is not supported'],
  ['x-vault-inconsistent', 'replication consistency (X-Vault-Inconsistent) is not supported'],
  ['x-vault-forward', 'replication forwarding (X-Vault-Forward) is not supported'],
];

const WRAP_FORMAT = 'x-vault-wrap-format';
const NAMESPACE = 'x-vault-namespace';
/** The root namespace, the only one there is: an empty value or `root`, with or without slashes. */
const ROOT_NAMESPACE = /^\/*(root)?\/*$/;

export function checkHeaders(request: ReadRequest): void {
  const headers = request.http.headers;
  for (const [header, reason] of REFUSED) {
    if (headers[header] !== undefined) throw new BadRequestError(`header ${canonical(header)}: ${reason}`);
  }
  const format = headers[WRAP_FORMAT];
  if (format !== undefined && !(Array.isArray(format) ? format : [format]).every((value) => value.trim() === '')) {
    throw new BadRequestError('header X-Vault-Wrap-Format: only the default (token) wrapping format is supported, not JWT');
  }
  const namespace = headers[NAMESPACE];
  if (namespace !== undefined) {
    const values = Array.isArray(namespace) ? namespace : [namespace];
    if (!values.every((value) => ROOT_NAMESPACE.test(value.trim()))) {
      throw new BadRequestError('header X-Vault-Namespace: namespaces are not supported; only the root namespace exists');
    }
  }
}

/** `x-vault-wrap-ttl` → `X-Vault-Wrap-TTL`, as Vault's documentation spells it. */
function canonical(header: string): string {
  return header
    .split('-')
    .map((part) => (part === 'ttl' || part === 'mfa' ? part.toUpperCase() : part[0]!.toUpperCase() + part.slice(1)))
    .join('-');
}
