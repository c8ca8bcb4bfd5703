/**
 * Request forwarding from a standby to the active node over the active node's public API
 * (`api_addr`), with the client's address carried in headers the nodes authenticate between
 * themselves: a MAC under a key every unsealed node derives from the barrier keyring, so a client
 * cannot claim another address (token `bound_cidrs` rely on it) by sending the headers itself.
 *
 * The MAC covers everything the active node acts on — method, path and query, every header the
 * standby passes on (the token among them), the body's exact bytes, the time — and a random nonce
 * the active node accepts once. Whoever sees a forwarded request on its way between the nodes can
 * therefore neither attach the vouched address to a token or body of their own nor send the
 * request again; the active node keeps only the signed headers, so nothing added on the way
 * reaches the host.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual, type KeyObject } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { HostRequest, HostResponse } from '../pipeline/types.js';
import { UnavailableError } from '../errors.js';
import { METHOD_HEADER } from '../http/list-method.js';
import { exactTextOf } from '../framework/exact-json.js';

export const FORWARDED_FOR = 'x-keywarden-forwarded-for';
const FORWARDED_AT = 'x-keywarden-forwarded-at';
const FORWARDED_NONCE = 'x-keywarden-forwarded-nonce';
/** The names of the headers the MAC covers, comma-separated: the active node keeps only these. */
const FORWARDED_HEADERS = 'x-keywarden-forwarded-headers';
export const FORWARDED_MAC = 'x-keywarden-forwarded-mac';
const FORWARDING = [FORWARDED_FOR, FORWARDED_AT, FORWARDED_NONCE, FORWARDED_HEADERS, FORWARDED_MAC];
/** Changes whenever what the MAC covers changes, so nodes of different versions never agree by accident. */
const MAC_VERSION = 'keywarden-forward-v2';

/** A forwarded request older than this (clock skew included) is not trusted. */
const MAX_AGE_MS = 60_000;
const FORWARD_TIMEOUT_MS = 60_000;
/**
 * Nonces a node remembers at once. Each is kept until its request ages out (MAX_AGE_MS, a little
 * more when the standby's clock is ahead), so this admits about 3,300 forwarded requests a second,
 * sustained, at about 100 bytes an entry (20 MB when full).
 */
const NONCE_CAPACITY = 200_000;

/**
 * Headers the standby does not pass on: those that belong to one connection; those that describe
 * the way the request travelled, which proxies between the nodes add to and rewrite (that would
 * break the MAC, and the host reads none of them); the LIST marker, since the standby sends a LIST
 * as GET with `list=true`; and ours, which the standby sets itself.
 */
const NOT_FORWARDED = new Set([
  'host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive', 'upgrade', 'te', 'trailer',
  'proxy-authorization', 'proxy-connection', 'expect',
  'forwarded', 'via', 'x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto', 'x-forwarded-port', 'x-real-ip',
  METHOD_HEADER, ...FORWARDING,
]);

const NO_BODY = Buffer.alloc(0);

export interface ForwardSigner {
  /**
   * The MAC key; undefined while sealed (nothing is forwarded or trusted then). A KeyObject: on
   * Node 24 an HMAC keyed with one costs a fifth of one keyed with the bytes.
   */
  key(): KeyObject | Buffer | undefined;
}

/** A request as a standby sends it to the active node. */
export interface SignedForward {
  readonly method: string;
  /** `/v1/<path>?<query>`, as sent and signed. */
  readonly path: string;
  readonly headers: Readonly<Record<string, string | string[]>>;
  readonly body: Buffer | undefined;
}

/** What the active node makes of a request that carries forwarding headers. */
export type ForwardCheck = { readonly request: HostRequest } | { readonly refused: string };

const agents = { http: new http.Agent({ keepAlive: true, maxSockets: 64 }), https: new https.Agent({ keepAlive: true, maxSockets: 64 }) };

export function forwardRequest(apiAddr: string, request: HostRequest, signer: ForwardSigner): Promise<HostResponse> {
  const key = signer.key();
  if (!key) return Promise.reject(new Error('sealed'));
  const base = new URL(apiAddr);
  const signed = signForward(request, key);
  const client = base.protocol === 'https:' ? https : http;
  // `unix:/path`: a worker of the same server, on its private socket (core/cluster/worker-link.ts).
  const where = base.protocol === 'unix:' ? { socketPath: base.pathname } : { protocol: base.protocol, hostname: base.hostname, port: base.port };
  return new Promise<HostResponse>((resolve, reject) => {
    const req = client.request(
      {
        ...where,
        method: signed.method,
        path: signed.path,
        headers: signed.headers,
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
          const relayed = relayedHeaders(res.headers);
          resolve({ status: res.statusCode ?? 502, ...(parsed !== undefined ? { body: parsed } : {}), ...(relayed ? { headers: relayed } : {}) });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error('the active node did not answer in time')));
    req.on('error', (err: NodeJS.ErrnoException) => reject(new Error(err.code === 'ECONNREFUSED' ? `connection to ${base.host} refused` : err.message)));
    // A snapshot restore's bytes go on as they arrive (HaManager.forward sends them to a sibling
    // worker only); a failed read ends the request with an error, which rejects above.
    if (request.bodyStream) void pipeline(Readable.from(request.bodyStream), req).catch(() => undefined);
    else req.end(signed.body);
  });
}

/** Answer headers the client reads from a forwarded answer as from any other: a rate-limit quota's (core/pipeline/quota.ts). */
const RELAYED_HEADERS: Readonly<Record<string, string>> = {
  'x-ratelimit-limit': 'X-Ratelimit-Limit',
  'x-ratelimit-remaining': 'X-Ratelimit-Remaining',
  'x-ratelimit-reset': 'X-Ratelimit-Reset',
  'retry-after': 'Retry-After',
};

function relayedHeaders(headers: http.IncomingHttpHeaders): Record<string, string> | undefined {
  let out: Record<string, string> | undefined;
  for (const [lower, name] of Object.entries(RELAYED_HEADERS)) {
    const value = headers[lower];
    if (typeof value === 'string') (out ??= {})[name] = value;
  }
  return out;
}

/** The request a standby sends to the active node for `request`, with its forwarding headers. */
export function signForward(request: HostRequest, key: KeyObject | Buffer, now = Date.now()): SignedForward {
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
    const lower = name.toLowerCase();
    if (value !== undefined && !NOT_FORWARDED.has(lower)) headers[lower] = value;
  }
  let body: Buffer | undefined;
  if (request.body !== undefined) {
    // A body with a number JSON.parse changed goes on as the client wrote it: the active node's
    // backend (kv) keeps every digit of it (core/framework/exact-json.ts).
    const exact = request.body !== null && typeof request.body === 'object' ? exactTextOf(request.body) : undefined;
    body = Buffer.from(exact ?? JSON.stringify(request.body), 'utf8');
    // Form bodies arrive parsed; they travel on as JSON. PATCH keeps its merge-patch type.
    const type = String(request.headers['content-type'] ?? '').toLowerCase();
    headers['content-type'] = type.startsWith('application/merge-patch+json') ? 'application/merge-patch+json' : 'application/json';
  }
  const names = Object.keys(headers).sort();
  const at = String(now);
  const nonce = randomBytes(16).toString('hex');
  return {
    method,
    path,
    body,
    headers: {
      ...headers,
      ...(body ? { 'content-length': String(body.length) } : {}),
      [FORWARDED_FOR]: request.remoteAddress,
      [FORWARDED_AT]: at,
      [FORWARDED_NONCE]: nonce,
      [FORWARDED_HEADERS]: names.join(','),
      [FORWARDED_MAC]: macOf(key, request.remoteAddress, at, nonce, method, path, names, headers, body ?? NO_BODY),
    },
  };
}

/**
 * For a request that carries forwarding headers: the request as the standby received it (the
 * client address it vouches for, only the headers its MAC covers), or why it is refused;
 * undefined for a request without them, or while sealed (nothing is trusted then).
 * `request.rawBody` must hold the body's bytes as received. Throws UnavailableError when this node
 * cannot remember one more nonce.
 */
export function checkForwarded(request: HostRequest, signer: ForwardSigner, nonces: ForwardNonces, now = Date.now()): ForwardCheck | undefined {
  if (!FORWARDING.some((name) => request.headers[name] !== undefined)) return undefined;
  const key = signer.key();
  if (!key) return undefined;
  const forwardedFor = single(request.headers[FORWARDED_FOR]);
  const at = single(request.headers[FORWARDED_AT]);
  const nonce = single(request.headers[FORWARDED_NONCE]);
  const list = single(request.headers[FORWARDED_HEADERS]);
  const given = single(request.headers[FORWARDED_MAC]);
  if (forwardedFor === undefined || at === undefined || nonce === undefined || list === undefined || given === undefined) {
    return { refused: 'a forwarding header is missing' };
  }
  if (!/^\d{1,15}$/.test(at) || !/^[0-9a-f]{32}$/.test(nonce) || !/^[0-9a-f]{64}$/.test(given)) {
    return { refused: 'a forwarding header is malformed' };
  }
  if (Math.abs(now - Number(at)) > MAX_AGE_MS) return { refused: 'it was signed more than 60 s away from this node\'s clock' };
  const names = list === '' ? [] : list.split(',');
  // The path as it was signed: the raw request path is not available here, so it is rebuilt as the
  // standby built it, from the parts the host acts on.
  const path = apiPath(request.path, new URLSearchParams(request.query));
  const expected = Buffer.from(macOf(key, forwardedFor, at, nonce, request.method, path, names, request.headers, request.rawBody ?? NO_BODY), 'hex');
  if (!timingSafeEqual(Buffer.from(given, 'hex'), expected)) return { refused: 'the MAC does not verify' };
  // Only after the MAC: a nonce copied from a request on the wire must not be spent by someone else.
  if (!nonces.claim(nonce, Number(at) + MAX_AGE_MS, now)) return { refused: 'its nonce was used before' };
  const headers: Record<string, string | string[] | undefined> = {};
  for (const name of names) headers[name] = request.headers[name];
  return { request: { ...request, headers, remoteAddress: forwardedFor, rawBody: undefined } };
}

/**
 * The nonces of the forwarded requests a node accepted, each kept until its request is too old to
 * be accepted again.
 */
export class ForwardNonces {
  /** Nonce → when its request ages out (ms). */
  private readonly expiries = new Map<string, number>();

  constructor(private readonly capacity = NONCE_CAPACITY) {}

  /** Records `nonce`; false when it was recorded before. */
  claim(nonce: string, expiresAt: number, now: number): boolean {
    // Nonces arrive in about the order they expire (only the standbys' clocks differ), so the
    // expired ones are at the front; one a little out of order goes at the next pass.
    for (const [old, expiry] of this.expiries) {
      if (expiry > now) break;
      this.expiries.delete(old);
    }
    if (this.expiries.has(nonce)) return false;
    // Forgetting a nonce before its request ages out would let that request be replayed: when
    // full, refuse (the client retries) rather than evict.
    if (this.expiries.size >= this.capacity) {
      throw new UnavailableError('this node received more forwarded requests in the last minute than it can check for replays; retry shortly');
    }
    this.expiries.set(nonce, expiresAt);
    return true;
  }
}

/** `/v1/<path>?<query>`, each segment percent-encoded: what the standby sends and signs. */
function apiPath(path: string, query: URLSearchParams): string {
  const search = query.toString();
  return `/v1/${path.split('/').map(encodeURIComponent).join('/')}${search ? `?${search}` : ''}`;
}

function macOf(
  key: KeyObject | Buffer,
  forwardedFor: string,
  at: string,
  nonce: string,
  method: string,
  path: string,
  names: readonly string[],
  headers: Readonly<Record<string, string | string[] | undefined>>,
  body: Buffer,
): string {
  const signedHeaders = names.map((name) => [name, headers[name] ?? null]);
  const bodyDigest = createHash('sha256').update(body).digest('hex');
  // JSON keeps the fields apart whatever they contain.
  const text = JSON.stringify([MAC_VERSION, forwardedFor, at, nonce, method, path, signedHeaders, bodyDigest]);
  return createHmac('sha256', key).update(text).digest('hex');
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
