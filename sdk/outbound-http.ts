/**
 * One HTTP(S) request from a plugin to a service its configuration names (an identity provider's
 * keys, a Kubernetes API server), bounded every way a slow or hostile server could stretch it:
 * a deadline for the whole exchange, a cap on the answer's size, no redirects followed (a
 * redirect would reach a host the configuration does not name). A CA certificate of the
 * configuration replaces the system's trust store for that request; a list of server names
 * replaces the host name the certificate must be valid for.
 */
import http from 'node:http';
import https from 'node:https';
import { checkServerIdentity, type PeerCertificate } from 'node:tls';
import { parseDurationExact } from '../core/framework/fields.js';

export interface OutboundRequest {
  readonly method?: 'GET' | 'POST';
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string | Buffer;
  /** PEM certificates trusted for this request instead of the system's. */
  readonly caPem?: string;
  /** Names the server's certificate may be valid for instead of the URL's host. */
  readonly serverNames?: readonly string[];
  /** The whole exchange, connection to last byte, in milliseconds. */
  readonly timeoutMs: number;
  /** The largest answer body accepted, in bytes. */
  readonly maxBytes: number;
}

export interface OutboundResponse {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: Buffer;
}

/** Why a request got no answer to read: the message says what happened, never what was sent. */
export class OutboundError extends Error {
  constructor(
    message: string,
    readonly reason: 'unreachable' | 'timeout' | 'too-large' | 'bad-url',
  ) {
    super(message);
  }
}

/** Sends the request; resolves with any status (the caller judges it), rejects with an OutboundError. */
export function outboundRequest(target: string, options: OutboundRequest): Promise<OutboundResponse> {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return Promise.reject(new OutboundError(`"${target}" is not a URL`, 'bad-url'));
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return Promise.reject(new OutboundError(`"${target}" is not an http or https URL`, 'bad-url'));
  const secure = url.protocol === 'https:';
  const names = options.serverNames ?? [];
  const tlsOptions: https.RequestOptions = secure
    ? {
        ...(options.caPem ? { ca: options.caPem } : {}),
        ...(names.length > 0
          ? { checkServerIdentity: (_host: string, cert: PeerCertificate) => (names.some((name) => checkServerIdentity(name, cert) === undefined) ? undefined : new Error(`the certificate is valid for none of ${names.join(', ')}`)) }
          : {}),
      }
    : {};
  const body = options.body === undefined ? undefined : Buffer.from(options.body);
  return new Promise<OutboundResponse>((resolve, reject) => {
    const request = (secure ? https : http).request(
      url,
      {
        method: options.method ?? 'GET',
        headers: { ...(options.headers ?? {}), ...(body ? { 'Content-Length': String(body.length) } : {}) },
        // A fresh connection each time: a pooled one could carry another configuration's trust.
        agent: false,
        ...tlsOptions,
      },
      (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > options.maxBytes) {
            request.destroy(new OutboundError(`the answer of ${url.host} is larger than ${options.maxBytes} bytes`, 'too-large'));
            return;
          }
          chunks.push(chunk);
        });
        response.on('end', () => {
          clearTimeout(deadline);
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) });
        });
        response.on('error', () => undefined);
      },
    );
    const deadline = setTimeout(
      () => request.destroy(new OutboundError(`${url.host} did not answer within ${options.timeoutMs} ms`, 'timeout')),
      options.timeoutMs,
    );
    request.on('error', (err) => {
      clearTimeout(deadline);
      reject(err instanceof OutboundError ? err : new OutboundError(`could not reach ${url.host}: ${err.message}`, 'unreachable'));
    });
    request.end(body);
  });
}

/**
 * A plugin's outbound deadline from its environment variable (`JWT_PROVIDER_TIMEOUT=10s`: a
 * duration such as `10s` or `500ms`, or seconds); `fallbackMs` when the variable is unset, not a
 * duration, or not positive.
 */
export function timeoutFromEnv(env: NodeJS.ProcessEnv, name: string, fallbackMs: number): number {
  const raw = env[name];
  if (!raw) return fallbackMs;
  try {
    const ms = Math.round(parseDurationExact(raw) * 1000);
    return ms > 0 ? ms : fallbackMs;
  } catch {
    return fallbackMs;
  }
}
