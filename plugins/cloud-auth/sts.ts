/**
 * Sends a client's signed GetCallerIdentity request to the chosen STS endpoint and reads who the
 * caller is. The request keeps the client's path, query, headers and body and the Host header of
 * the client's URL (the signature covers it), but the connection goes to the endpoint only:
 * the client's host is never dialled, and redirects are never followed.
 */
import http from 'node:http';
import https from 'node:https';
import type { XMLParser } from 'fast-xml-parser';
import { BadRequestError, UpstreamError } from '../../sdk/index.js';
import type { CallerIdentityRequest } from './iam-request.js';

export interface CallerIdentity {
  readonly arn: string;
  /** `AIDA…` for a user, `AROA…:<session>` for an assumed role. */
  readonly userId: string;
  readonly account: string;
}

export interface SubmitOptions {
  /** Retries after the first attempt; Vault's default (3) when max_retries is -1. */
  readonly maxRetries: number;
  /** Per attempt, ms. */
  readonly timeoutMs: number;
  /** First retry wait, ms, doubled per retry up to 30 s. */
  readonly retryWaitMs?: number;
}

/** An STS answer larger than this is not a GetCallerIdentity response. */
const MAX_ANSWER_BYTES = 1024 * 1024;
const MAX_RETRY_WAIT_MS = 30_000;
/** Headers the HTTP client sets itself; a client's copies would be wrong or duplicated. */
const HOP_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'trailer', 'keep-alive', 'upgrade']);

interface Answer {
  readonly status: number;
  readonly contentType: string | undefined;
  readonly body: string;
}

const PREFIX = 'error making upstream request';

export async function submitCallerIdentityRequest(endpoint: string, request: CallerIdentityRequest, options: SubmitOptions): Promise<CallerIdentity> {
  const target = new URL(endpoint.replace(/\/+$/, '') + request.url.pathname + request.url.search);
  const headers: Record<string, string | string[]> = {};
  for (const { name, values } of request.headers.entries()) {
    if (!HOP_HEADERS.has(name.toLowerCase())) headers[name] = values.length === 1 ? values[0]! : values;
  }
  headers.Host = request.url.host;
  const body = Buffer.from(request.body, 'utf8');
  if (request.method === 'POST') headers['Content-Length'] = String(body.length);

  let answer: Answer | undefined;
  let wait = options.retryWaitMs ?? 500;
  for (let attempt = 0; ; attempt++) {
    try {
      answer = await send(target, request.method, headers, body, options.timeoutMs);
      if (!retryable(answer.status) || attempt >= options.maxRetries) break;
    } catch (err) {
      if (attempt >= options.maxRetries) throw new UpstreamError(`${PREFIX}: error making request: ${(err as Error).message}`);
    }
    await new Promise((resolve) => setTimeout(resolve, wait));
    wait = Math.min(wait * 2, MAX_RETRY_WAIT_MS);
  }

  // The content type is checked first: only STS's own XML is read, whatever the status.
  if (answer.contentType !== 'text/xml') throw new UpstreamError(`${PREFIX}: body of GetCallerIdentity is invalid`);
  if (answer.status !== 200) {
    const message = `${PREFIX}: received error code ${answer.status} from STS: ${answer.body}`;
    throw answer.status >= 500 ? new UpstreamError(message) : new BadRequestError(message);
  }
  const identity = await parseCallerIdentity(answer.body);
  if (!identity) throw new UpstreamError(`${PREFIX}: error parsing STS response`);
  return identity;
}

function retryable(status: number): boolean {
  return status === 429 || (status >= 500 && status !== 501);
}

/**
 * Connections to the STS endpoint are kept and reused: a login then costs one request, not a TCP
 * (and, against real STS, a TLS) handshake as well. The endpoint is the configured one, never a
 * host the client names, so a pooled connection only ever serves that endpoint.
 */
const AGENTS = {
  'http:': new http.Agent({ keepAlive: true, maxSockets: 64, maxFreeSockets: 16 }),
  'https:': new https.Agent({ keepAlive: true, maxSockets: 64, maxFreeSockets: 16 }),
};

function send(target: URL, method: string, headers: Record<string, string | string[]>, body: Buffer, timeoutMs: number): Promise<Answer> {
  const transport = target.protocol === 'https:' ? https : http;
  const agent = target.protocol === 'https:' ? AGENTS['https:'] : AGENTS['http:'];
  return new Promise((resolve, reject) => {
    const req = transport.request(
      target,
      { method, headers, timeout: timeoutMs, signal: AbortSignal.timeout(timeoutMs), agent },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_ANSWER_BYTES) req.destroy(new Error(`the answer is larger than ${MAX_ANSWER_BYTES} bytes`));
          else chunks.push(chunk);
        });
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, contentType: res.headers['content-type'], body: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', (err: Error & { code?: string }) => {
      reject(err.name === 'AbortError' ? new Error(`no answer within ${timeoutMs} ms`) : new Error(err.code ? `${err.code}: ${err.message}` : err.message));
    });
    if (method === 'POST') req.write(body);
    req.end();
  });
}

let parser: Promise<XMLParser> | undefined;
/** The XML parser, loaded on the first login that needs it: a server without an AWS login method never loads it (see loadEc2 in provider/sdk-provider.ts). */
const xmlParser = (): Promise<XMLParser> =>
  (parser ??= import('fast-xml-parser').then(({ XMLParser }) => new XMLParser({ ignoreAttributes: true, parseTagValue: false, trimValues: true, processEntities: false })));

/** The caller from a GetCallerIdentityResponse document, or undefined when it is not one. */
export async function parseCallerIdentity(xml: string): Promise<CallerIdentity | undefined> {
  const text = xml.trim();
  if (!text.startsWith('<GetCallerIdentityResponse') && !text.startsWith('<?xml')) return undefined;
  // No document type declarations: nothing in a real answer needs entity definitions.
  if (text.includes('<!DOCTYPE') || text.includes('<!ENTITY')) return undefined;
  let doc: Record<string, unknown>;
  try {
    doc = (await xmlParser()).parse(text, true) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const result = (doc.GetCallerIdentityResponse as Record<string, unknown> | undefined)?.GetCallerIdentityResult as Record<string, unknown> | undefined;
  const arn = result?.Arn;
  const userId = result?.UserId;
  const account = result?.Account;
  if (typeof arn !== 'string' || typeof userId !== 'string' || typeof account !== 'string' || !arn || !userId || !account) return undefined;
  return { arn, userId, account };
}
