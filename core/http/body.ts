/**
 * Reads and parses a request body the way Vault does: JSON whatever the Content-Type, except a
 * form-encoded body that does not start with `{` or `[`. The size limit is enforced while reading
 * (and up front from Content-Length), so an oversized body is never buffered whole.
 */
import type { IncomingMessage } from 'node:http';
import { BadRequestError, PayloadTooLargeError, errorMessage } from '../errors.js';
import { keepExactText, scanJson } from '../framework/exact-json.js';
import { checkJsonLimits, DEFAULT_JSON_LIMITS, type JsonLimits } from './json-limits.js';

export const DEFAULT_MAX_REQUEST_SIZE = 32 * 1024 * 1024;
/**
 * The largest body of a request to a path that needs no token. Logins, init (with its PGP keys)
 * and unseal send a few kilobytes; anything read before a token is checked must stay cheap
 * (core/pipeline/body-allowance.ts).
 */
export const DEFAULT_MAX_UNAUTHENTICATED_REQUEST_SIZE = 1024 * 1024;

/** Which listener setting bounds a body, for the 413's message. */
export interface BodyLimit {
  readonly bytes: number;
  readonly setting: 'max_request_size' | 'max_unauthenticated_request_size';
}

/**
 * Reads at most `limit` bytes (a negative limit turns the check off). Read with the stream's
 * events rather than `for await`: an async iterator costs every request a few turns and objects,
 * and most bodies arrive in one chunk. Past the limit the request stops being read: the 413 goes
 * out and the connection closes (app.ts) without the rest ever being buffered.
 */
export function readBody(req: IncomingMessage, bound: BodyLimit): Promise<Buffer> {
  const limit = bound.bytes;
  const declared = Number(req.headers['content-length']);
  if (limit >= 0 && Number.isFinite(declared) && declared > limit) return Promise.reject(tooLarge(bound));
  if (req.readableEnded) return Promise.resolve(Buffer.alloc(0));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (err: Error | undefined): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
      if (err) reject(err);
      else resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (limit >= 0 && size > limit) {
        done(tooLarge(bound));
        req.pause();
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => done(undefined);
    const onError = (err: Error): void => done(err);
    // Closed before its end: the client went away part way.
    const onClose = (): void => done(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

function tooLarge(bound: BodyLimit): PayloadTooLargeError {
  const who = bound.setting === 'max_unauthenticated_request_size' ? 'for a path that needs no token ' : '';
  return new PayloadTooLargeError(`http: request body too large: over ${bound.bytes} bytes, the listener's ${bound.setting} ${who}`.trimEnd());
}

/**
 * JSON unless the body is a form that does not start with `{` or `[`. A JSON body is held to the
 * listener's limits before it is parsed (json-limits.ts).
 */
export function parseBody(raw: Buffer, contentType: string | undefined, limits: JsonLimits = DEFAULT_JSON_LIMITS): unknown {
  const text = raw.toString('utf8').trim();
  if (text === '') return undefined;
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (type === 'application/x-www-form-urlencoded' && !text.startsWith('{') && !text.startsWith('[')) {
    const form: Record<string, string | string[]> = {};
    for (const [key, value] of new URLSearchParams(text)) {
      const existing = form[key];
      form[key] = existing === undefined ? value : Array.isArray(existing) ? [...existing, value] : [existing, value];
    }
    return form;
  }
  checkJsonLimits(raw, limits);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text) as unknown;
  } catch (err) {
    throw new BadRequestError(`failed to parse JSON input: ${errorMessage(err)}`);
  }
  // A number JSON.parse changed is kept for a backend that keeps every digit.
  return parsed !== null && typeof parsed === 'object' && scanJson(text).inexact ? keepExactText(parsed, text) : parsed;
}
