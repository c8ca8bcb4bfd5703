/**
 * The checks an iam login's signed GetCallerIdentity request must pass before it is forwarded,
 * in Vault's order: method, URL, body, headers, the server-ID header, the X-Amz-* allow-list, and
 * the STS endpoint it goes to. They stop a client from making the server call another action,
 * another host, or carry headers STS would act on.
 */
import { BadRequestError } from '../../sdk/index.js';
import type { ClientConfig } from './client-config.js';
import { canonicalHeaderKey } from './input.js';
import { DEFAULT_STS_ENDPOINT, regionalStsEndpoint } from './regions.js';

/** The header that binds a login to one server; `X-Vault-AWS-IAM-Server-ID` is what stock clients send. */
export const SERVER_ID_HEADER = 'X-Service-Cloud-IAM-Server-ID';
export const VAULT_SERVER_ID_HEADER = 'X-Vault-AWS-IAM-Server-ID';

/** X-Amz-* headers STS expects and that are always allowed. */
export const DEFAULT_ALLOWED_STS_HEADERS: readonly string[] = [
  'X-Amz-Algorithm',
  'X-Amz-Content-Sha256',
  'X-Amz-Credential',
  'X-Amz-Date',
  'X-Amz-Security-Token',
  'X-Amz-Signature',
  'X-Amz-SignedHeaders',
  'X-Amz-User-Agent',
];

/** Request headers by name, looked up without regard to case; one entry per name, values in order. */
export class HeaderList {
  private readonly byLower = new Map<string, { name: string; values: string[] }>();

  constructor(headers: Readonly<Record<string, readonly string[]>>) {
    for (const [name, values] of Object.entries(headers)) {
      const key = name.toLowerCase();
      const entry = this.byLower.get(key);
      if (entry) entry.values.push(...values);
      else this.byLower.set(key, { name, values: [...values] });
    }
  }

  get(name: string): string[] | undefined {
    return this.byLower.get(name.toLowerCase())?.values;
  }

  get size(): number {
    return this.byLower.size;
  }

  entries(): { name: string; values: string[] }[] {
    return [...this.byLower.values()];
  }
}

export interface CallerIdentityRequest {
  readonly method: 'GET' | 'POST';
  readonly url: URL;
  /** Decoded body; '' for GET. */
  readonly body: string;
  readonly headers: HeaderList;
}

export interface IamLoginFields {
  readonly iam_http_request_method?: string | undefined;
  readonly iam_request_url?: string | undefined;
  readonly iam_request_body?: string | undefined;
  readonly iam_request_headers?: Record<string, string[]> | undefined;
}

/** Steps 1–5: method, URL, body and headers, decoded and checked. */
export function parseLoginRequest(fields: IamLoginFields): CallerIdentityRequest {
  const method = fields.iam_http_request_method;
  if (!method) throw new BadRequestError('missing iam_http_request_method');
  if (method !== 'GET' && method !== 'POST') {
    throw new BadRequestError("invalid iam_http_request_method; currently only 'GET' and 'POST' are supported");
  }

  if (!fields.iam_request_url) throw new BadRequestError('missing iam_request_url');
  const rawUrl = decodeBase64(fields.iam_request_url);
  if (rawUrl === undefined) throw new BadRequestError('failed to base64 decode iam_request_url');
  let url: URL;
  try {
    url = new URL(rawUrl.toString('utf8'));
  } catch {
    throw new BadRequestError('error parsing iam_request_url');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new BadRequestError('error parsing iam_request_url');
  checkUrl(method, url);

  let body = '';
  if (method === 'POST') {
    if (!fields.iam_request_body) throw new BadRequestError('missing iam_request_body which is required for POST requests');
    const raw = decodeBase64(fields.iam_request_body);
    if (raw === undefined) throw new BadRequestError('failed to base64 decode iam_request_body');
    body = raw.toString('utf8');
    checkBody(body);
  }

  const headers = new HeaderList(fields.iam_request_headers ?? {});
  if (headers.size === 0) throw new BadRequestError('missing iam_request_headers');
  for (const { name, values } of headers.entries()) {
    // What HTTP cannot carry is the client's error, not a failure of the upstream call.
    if (!/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(name) || values.some((v) => /[\r\n\0]/.test(v))) {
      throw new BadRequestError(`invalid request header: ${name}`);
    }
  }
  return { method, url, body, headers };
}

/** POST carries its parameters in the body, so the URL must have no query; GET must ask for exactly GetCallerIdentity. */
function checkUrl(method: 'GET' | 'POST', url: URL): void {
  if (method === 'POST') {
    if (url.search !== '') throw new BadRequestError('invalid request: the iam_request_url of a POST must have no query string');
    return;
  }
  const actions = parseForm(url.search.slice(1))?.get('Action') ?? [];
  if (actions.length === 0) throw new BadRequestError('no action found in request');
  if (actions.length > 1) throw new BadRequestError('found multiple actions');
  if (actions[0] !== 'GetCallerIdentity') throw new BadRequestError(`unexpected action parameter, ${actions[0]}`);
}

/** Only `Action=GetCallerIdentity` and `Version` may be in the body. */
function checkBody(body: string): void {
  const form = parseForm(body);
  if (!form) throw new BadRequestError('iam request body is invalid');
  for (const [key, values] of form) {
    if (key === 'Action' && values.length === 1 && values[0] === 'GetCallerIdentity') continue;
    if (key === 'Version') continue;
    throw new BadRequestError('iam request body is invalid');
  }
}

/** Step 7: the server-ID header has the configured value and is among the signed headers. */
export function checkServerIdHeader(request: CallerIdentityRequest, required: string): void {
  const fail = (why: string): never => {
    throw new BadRequestError(`error validating ${SERVER_ID_HEADER} header: ${why}`);
  };
  const name = request.headers.get(SERVER_ID_HEADER) ? SERVER_ID_HEADER : VAULT_SERVER_ID_HEADER;
  const provided = (request.headers.get(name) ?? []).join(',');
  if (provided === '') fail(`missing header "${SERVER_ID_HEADER}"`);
  if (provided !== required) fail(`expected "${required}" but got "${provided}"`);

  let signed: string;
  if (request.method === 'POST') {
    const authorization = request.headers.get('Authorization');
    if (!authorization) return fail('missing Authorization header');
    const match = /.*SignedHeaders=([^,]+)/s.exec(authorization.join(','));
    if (!match) return fail('server ID header wasn\'t signed');
    signed = match[1]!;
  } else {
    signed = queryParam(request.url, 'X-Amz-SignedHeaders') ?? '';
  }
  if (!signed.split(';').includes(name.toLowerCase())) fail("server ID header wasn't signed");
}

/** Step 8: X-Amz-* headers (and, for GET, query parameters) only from the default list or allowed_sts_header_values. */
export function checkAllowedHeaders(request: CallerIdentityRequest, allowed: readonly string[]): void {
  const permitted = (name: string) => DEFAULT_ALLOWED_STS_HEADERS.includes(name) || allowed.includes(name);
  for (const { name } of request.headers.entries()) {
    const canonical = amzCanonical(name);
    if (canonical.startsWith('X-Amz-') && !permitted(canonical)) throw new BadRequestError(`invalid request header: ${name}`);
  }
  if (request.method === 'GET') {
    for (const key of parseForm(request.url.search.slice(1))?.keys() ?? []) {
      // Query names are compared as written: the signature covers them byte for byte.
      if (amzCanonical(key).startsWith('X-Amz-') && !permitted(key)) throw new BadRequestError(`invalid request query param: ${key}`);
    }
  }
}

function amzCanonical(name: string): string {
  const canonical = canonicalHeaderKey(name);
  return canonical === 'X-Amz-Signedheaders' ? 'X-Amz-SignedHeaders' : canonical;
}

/**
 * Step 9: where the request goes. The configured sts_endpoint (default the global endpoint), or
 * with use_sts_region_from_client the regional endpoint of the region the client signed for —
 * never the host in the client's URL.
 */
export function stsEndpointFor(config: ClientConfig | undefined, request: CallerIdentityRequest): string {
  if (!config) return DEFAULT_STS_ENDPOINT;
  if (config.use_sts_region_from_client) {
    const region = signedRegion(request);
    if (!region) throw new BadRequestError('region missing from Authorization header');
    const endpoint = regionalStsEndpoint(region);
    if (!endpoint) throw new BadRequestError(`unable to get regional STS endpoint for region: ${region}`);
    return endpoint;
  }
  return config.sts_endpoint || DEFAULT_STS_ENDPOINT;
}

/** The region of the credential scope: `Credential=<key>/<date>/<region>/sts/aws4_request`. */
function signedRegion(request: CallerIdentityRequest): string | undefined {
  let credential: string | undefined;
  const authorization = request.headers.get('Authorization')?.[0];
  if (authorization) {
    credential = authorization
      .split(' ')
      .find((field) => field.startsWith('Credential='))
      ?.slice('Credential='.length);
  } else if (request.method === 'GET') {
    // A presigned GET carries the scope in the query.
    credential = queryParam(request.url, 'X-Amz-Credential');
  }
  const parts = credential?.split('/') ?? [];
  return parts.length >= 3 && parts[2] ? parts[2] : undefined;
}

function queryParam(url: URL, name: string): string | undefined {
  return parseForm(url.search.slice(1))?.get(name)?.[0];
}

/** Go's url.ParseQuery: `&`-separated `key=value` pairs, `+` as space, percent-decoding; undefined when malformed. */
export function parseForm(text: string): Map<string, string[]> | undefined {
  const out = new Map<string, string[]>();
  for (const pair of text.split('&')) {
    if (pair === '') continue;
    if (pair.includes(';')) return undefined;
    const eq = pair.indexOf('=');
    const rawKey = eq < 0 ? pair : pair.slice(0, eq);
    const rawValue = eq < 0 ? '' : pair.slice(eq + 1);
    let key: string;
    let value: string;
    try {
      key = decodeURIComponent(rawKey.replace(/\+/g, ' '));
      value = decodeURIComponent(rawValue.replace(/\+/g, ' '));
    } catch {
      return undefined;
    }
    const values = out.get(key);
    if (values) values.push(value);
    else out.set(key, [value]);
  }
  return out;
}

/** Standard base64 with padding, as Go's StdEncoding reads it (line breaks ignored); undefined when invalid. */
export function decodeBase64(value: string): Buffer | undefined {
  const text = value.replace(/[\r\n]/g, '');
  if (text.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(text)) return undefined;
  return Buffer.from(text, 'base64');
}
