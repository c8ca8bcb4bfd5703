/**
 * The request headers a backend receives: only those its mount lets through
 * (`passthrough_request_headers`), and never one that carries the caller's token. No backend
 * served here reads a header of its own accord (cloud-auth's server-ID header travels signed inside
 * the `iam_request_headers` field of the login body), so the host adds none: a mount that lists
 * nothing gets no headers. Vault filters at the same boundary (its router) and never passes
 * X-Vault-Token through; since CVE-2026-4525 (https://nvd.nist.gov/vuln/detail/CVE-2026-4525,
 * https://discuss.hashicorp.com/t/hcsec-2026-07-vault-may-expose-tokens-to-auth-plugins-due-to-incorrect-header-sanitization/77344)
 * it also drops an Authorization header that carries the Vault token.
 */
import { timingSafeEqual } from 'node:crypto';

export type RequestHeaders = Readonly<Record<string, string | string[] | undefined>>;

/**
 * The headers a client authenticates with here (core/pipeline/read.ts reads the token from them),
 * lower case, with their canonical spelling for error messages: a mount can never list them.
 */
export const TOKEN_HEADERS: ReadonlyMap<string, string> = new Map([
  ['x-vault-token', 'X-Vault-Token'],
  ['x-service-token', 'X-Service-Token'],
]);

const AUTHORIZATION = 'authorization';
const BEARER = /^bearer\s+/i;
const NO_HEADERS: RequestHeaders = Object.freeze({});

/**
 * The headers of `headers` named in `passthrough` (matched without regard to case, keyed in lower
 * case as Node delivers them), less the token headers and any `Authorization: Bearer` value that is
 * the request's client token.
 */
export function backendHeaders(headers: RequestHeaders, passthrough: readonly string[], clientToken: string | undefined): RequestHeaders {
  if (passthrough.length === 0) return NO_HEADERS;
  const out: Record<string, string | string[]> = {};
  for (const listed of passthrough) {
    const name = listed.toLowerCase();
    if (TOKEN_HEADERS.has(name)) continue;
    const value = headers[name];
    if (value === undefined) continue;
    if (name !== AUTHORIZATION) {
      out[name] = value;
      continue;
    }
    const kept = (Array.isArray(value) ? value : [value]).filter((one) => !carriesToken(one, clientToken));
    if (kept.length > 0) out[name] = kept.length === 1 ? kept[0]! : kept;
  }
  return out;
}

/** Whether an Authorization value is a bearer credential equal to the client token (compared in constant time). */
function carriesToken(value: string, clientToken: string | undefined): boolean {
  if (clientToken === undefined || !BEARER.test(value)) return false;
  const given = Buffer.from(value.replace(BEARER, '').trim());
  const token = Buffer.from(clientToken);
  return given.length === token.length && timingSafeEqual(given, token);
}
