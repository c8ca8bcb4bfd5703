/**
 * Request forwarding from a standby to the active node over the active node's public API
 * (`api_addr`), with the client's address carried in headers the nodes authenticate between
 * themselves: a MAC under a key every unsealed node derives from the barrier keyring, so a client
 * cannot claim another address (token `bound_cidrs` rely on it) by sending the headers itself.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { HostRequest, HostResponse } from '../host.js';

export const FORWARDED_FOR = 'x-keywarden-forwarded-for';
const FORWARDED_AT = 'x-keywarden-forwarded-at';
const FORWARDED_MAC = 'x-keywarden-forwarded-mac';
/** A forwarded request older than this (clock skew included) is not trusted. */
const MAX_AGE_MS = 60_000;
const FORWARD_TIMEOUT_MS = 60_000;

/** Headers that belong to one connection, and ours, which the standby sets itself. */
const NOT_FORWARDED = new Set([
  'host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive', 'upgrade', 'te', 'trailer',
  'proxy-authorization', 'proxy-connection', 'expect', FORWARDED_FOR, FORWARDED_AT, FORWARDED_MAC,
]);

export interface ForwardSigner {
  /** The MAC key; undefined while sealed (nothing is forwarded or trusted then). */
  key(): Buffer | undefined;
}

const agents = { http: new http.Agent({ keepAlive: true, maxSockets: 64 }), https: new https.Agent({ keepAlive: true, maxSockets: 64 }) };

export function forwardRequest(apiAddr: string, request: HostRequest, signer: ForwardSigner): Promise<HostResponse> {
  const key = signer.key();
  if (!key) return Promise.reject(new Error('sealed'));
  const base = new URL(apiAddr);
  const query = new URLSearchParams(request.query);
  let method = request.method;
  // Node's HTTP client sends LIST, but some proxies between nodes do not: use Vault's equivalent.
  if (method === 'LIST') {
    method = 'GET';
    query.set('list', 'true');
  }
  const path = apiPath(request.path, query);
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined && !NOT_FORWARDED.has(name.toLowerCase())) headers[name] = value;
  }
  let body: Buffer | undefined;
  if (request.body !== undefined) {
    body = Buffer.from(JSON.stringify(request.body), 'utf8');
    // Form bodies arrive parsed; they travel on as JSON. PATCH keeps its merge-patch type.
    const type = String(request.headers['content-type'] ?? '').toLowerCase();
    headers['content-type'] = type.startsWith('application/merge-patch+json') ? 'application/merge-patch+json' : 'application/json';
    headers['content-length'] = String(body.length);
  }
  const at = String(Date.now());
  headers[FORWARDED_FOR] = request.remoteAddress;
  headers[FORWARDED_AT] = at;
  headers[FORWARDED_MAC] = mac(key, request.remoteAddress, at, method, path);

  const client = base.protocol === 'https:' ? https : http;
  return new Promise<HostResponse>((resolve, reject) => {
    const req = client.request(
      {
        protocol: base.protocol,
        hostname: base.hostname,
        port: base.port,
        method,
        path,
        headers,
        agent: base.protocol === 'https:' ? agents.https : agents.http,
        timeout: FORWARD_TIMEOUT_MS,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown;
          if (text.length > 0) {
            try {
              parsed = JSON.parse(text);
            } catch {
              parsed = { errors: ['the active node answered with a body that is not JSON'] };
            }
          }
          resolve({ status: res.statusCode ?? 502, ...(parsed !== undefined ? { body: parsed } : {}) });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error('the active node did not answer in time')));
    req.on('error', (err: NodeJS.ErrnoException) => reject(new Error(err.code === 'ECONNREFUSED' ? `connection to ${base.host} refused` : err.message)));
    req.end(body);
  });
}

/**
 * The client address a standby vouched for, when the request came from a standby of this
 * cluster (a valid, fresh MAC); undefined otherwise, and then the headers are ignored.
 */
export function vouchedAddress(request: HostRequest, signer: ForwardSigner, now = Date.now()): string | undefined {
  const forwardedFor = single(request.headers[FORWARDED_FOR]);
  const at = single(request.headers[FORWARDED_AT]);
  const given = single(request.headers[FORWARDED_MAC]);
  if (!forwardedFor || !at || !given) return undefined;
  const key = signer.key();
  if (!key || !/^\d{1,15}$/.test(at) || Math.abs(now - Number(at)) > MAX_AGE_MS) return undefined;
  // The path as it was signed: the raw request path is not available here, so it is rebuilt as the
  // standby built it, from the same parts.
  const path = apiPath(request.path, new URLSearchParams(request.query));
  const expected = Buffer.from(mac(key, forwardedFor, at, request.method, path), 'hex');
  const actual = Buffer.from(given, 'hex');
  if (actual.length !== expected.length || !timingSafeEqual(actual, expected)) return undefined;
  return forwardedFor;
}

/** `/v1/<path>?<query>`, each segment percent-encoded: what the standby sends and signs. */
function apiPath(path: string, query: URLSearchParams): string {
  const search = query.toString();
  return `/v1/${path.split('/').map(encodeURIComponent).join('/')}${search ? `?${search}` : ''}`;
}

function mac(key: Buffer, forwardedFor: string, at: string, method: string, path: string): string {
  return createHmac('sha256', key).update(`${forwardedFor}\n${at}\n${method}\n${path}`).digest('hex');
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
