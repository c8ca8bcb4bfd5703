/**
 * Reads and parses a request body the way Vault does: JSON whatever the Content-Type, except a
 * form-encoded body that does not start with `{` or `[`. The size limit is enforced while reading
 * (and up front from Content-Length), so an oversized body is never buffered whole.
 */
import type { IncomingMessage } from 'node:http';
import { BadRequestError, PayloadTooLargeError, errorMessage } from '../errors.js';
import { keepExactText, scanJson } from '../framework/exact-json.js';
import { checkJsonLimits, DEFAULT_JSON_LIMITS, type JsonLimits } from './json-limits.js';
import { parseJsonInTurns } from './json-sliced.js';
import { nextTurn } from '../event-loop.js';

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
      else resolve(chunks.length === 1 ? chunks[0]! : size > CONCAT_TURN_BYTES ? concatInTurns(chunks, size) : Buffer.concat(chunks, size));
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

/**
 * Bytes of a body's chunks copied into one Buffer before the event loop gets a turn: gathering a
 * 30 MB body's chunks in one go held every other client up (bench/README.md, "Large requests").
 */
const CONCAT_TURN_BYTES = 4 * 1024 * 1024;

/** Buffer.concat(chunks, size), with a turn of the event loop after each CONCAT_TURN_BYTES copied. */
async function concatInTurns(chunks: readonly Buffer[], size: number): Promise<Buffer> {
  const out = Buffer.allocUnsafe(size);
  let at = 0;
  let sinceTurn = 0;
  for (const chunk of chunks) {
    chunk.copy(out, at);
    at += chunk.length;
    sinceTurn += chunk.length;
    if (sinceTurn >= CONCAT_TURN_BYTES) {
      sinceTurn = 0;
      await nextTurn();
    }
  }
  return out;
}

function tooLarge(bound: BodyLimit): PayloadTooLargeError {
  const who = bound.setting === 'max_unauthenticated_request_size' ? 'for a path that needs no token ' : '';
  return new PayloadTooLargeError(`http: request body too large: over ${bound.bytes} bytes, the listener's ${bound.setting} ${who}`.trimEnd());
}

/**
 * A JSON body larger than this is checked and parsed in slices (json-sliced.ts); a smaller one
 * takes a few milliseconds at most in one go, and costs what it did before.
 */
export const SLICED_BODY_BYTES = 512 * 1024;

/**
 * JSON unless the body is a form that does not start with `{` or `[`. A JSON body is held to the
 * listener's limits before it is parsed (json-limits.ts); a large one is both checked and parsed in
 * slices with turns of the event loop between them, and comes as a promise.
 */
export function parseBody(raw: Buffer, contentType: string | undefined, limits: JsonLimits = DEFAULT_JSON_LIMITS): unknown {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (raw.length > SLICED_BODY_BYTES) {
    const [start, end] = trimmed(raw);
    if (start === end) return undefined;
    if (type !== 'application/x-www-form-urlencoded' || raw[start] === 0x7b || raw[start] === 0x5b) return parseLarge(raw, start, end, limits);
  }
  const text = raw.toString('utf8').trim();
  if (text === '') return undefined;
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

/**
 * Where the text of `raw` starts and ends once trimmed as String.prototype.trim trims it (white
 * space, line ends and a byte order mark), without decoding the rest.
 */
function trimmed(raw: Buffer): [number, number] {
  let start = 0;
  for (let step = charAt(raw, start); step > 0; step = charAt(raw, start)) start += step;
  let end = raw.length;
  while (end > start) {
    let from = end - 1;
    while (from > end - 4 && from > start && (raw[from]! & 0xc0) === 0x80) from--;
    if (charAt(raw, from) !== end - from) break;
    end = from;
  }
  return [start, end];
}

/** The length in bytes of the character at `at` when it is white space trim removes, else 0. */
function charAt(raw: Buffer, at: number): number {
  const c = raw[at];
  if (c === undefined) return 0;
  if (c < 0x80) return (c >= 0x09 && c <= 0x0d) || c === 0x20 ? 1 : 0;
  const length = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
  return /^\s$/.test(raw.toString('utf8', at, at + length)) ? length : 0;
}

async function parseLarge(raw: Buffer, start: number, end: number, limits: JsonLimits): Promise<unknown> {
  const { value, inexact } = await parseJsonInTurns(raw, start, end, limits);
  if (!inexact || value === null || typeof value !== 'object') return value;
  // A number JSON.parse changed is kept for a backend that keeps every digit: with the text, decoded in pieces.
  const pieces: string[] = [];
  for (let at = start; at < end; ) {
    const cut = at + SLICED_BODY_BYTES >= end ? end : utf8Boundary(raw, at + SLICED_BODY_BYTES);
    pieces.push(raw.toString('utf8', at, cut));
    at = cut;
    await nextTurn();
  }
  return keepExactText(value, pieces.join(''));
}

/** `at`, moved back to the start of the UTF-8 character it falls in. */
function utf8Boundary(raw: Buffer, at: number): number {
  let cut = at;
  while (cut > at - 3 && (raw[cut]! & 0xc0) === 0x80) cut--;
  return cut;
}
