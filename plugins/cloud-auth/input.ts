/** Helpers for the weak typing of Vault clients that the framework leaves to handlers. */
import { BadRequestError, type LogicalRequest } from '../../sdk/index.js';

/** Whether a request carries a field at all, even empty (login dispatch counts `""` as present). */
export function present(req: LogicalRequest, name: string): boolean {
  const raw = req.data[name];
  return raw !== undefined && raw !== null;
}

/** An endpoint override must be an absolute http(s) URL; '' means "the provider's default". */
export function checkEndpoint(field: string, value: string | undefined): void {
  if (!value) return;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new BadRequestError(`invalid ${field} "${value}": not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new BadRequestError(`invalid ${field} "${value}": must be an http or https URL`);
}

/** Go's textproto.CanonicalMIMEHeaderKey: `x-amz-date` → `X-Amz-Date`; names with odd characters stay as they are. */
export function canonicalHeaderKey(name: string): string {
  if (!/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(name)) return name;
  return name
    .split('-')
    .map((part) => (part.length > 0 ? part[0]!.toUpperCase() + part.slice(1).toLowerCase() : part))
    .join('-');
}
