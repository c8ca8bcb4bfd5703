/**
 * Strict standard base64 (with padding), as Go's decoder reads it: Node's Buffer.from(…, 'base64')
 * silently accepts URL-safe characters, missing padding and garbage, which would turn a client's
 * mistake into wrong data instead of a 400. Shared by transit and the sys tools.
 */
import { BadRequestError } from '../errors.js';
import { nextTurn } from '../event-loop.js';
import { AsciiText, AsciiTextBuilder, WINDOW_CHARS } from '../large-text.js';

/** Any character outside the standard alphabet; a negated class scans far faster than an anchored pattern. */
export const BASE64_INVALID = /[^A-Za-z0-9+/=]/;

/**
 * Decodes `value` or throws BadRequestError naming `field`. Newlines are ignored, as in Go; they
 * are looked for only when the text as given is not valid (a batch decodes thousands of values).
 */
export function decodeBase64(value: string, field: string): Buffer {
  if (isStrict(value)) return Buffer.from(value, 'base64');
  const text = value.replace(/[\r\n]/g, '');
  if (text !== value && isStrict(text)) return Buffer.from(text, 'base64');
  throw new BadRequestError(`unable to decode ${field} as base64: illegal base64 data at input byte ${firstBadIndex(text)}`);
}

/** Whole quanta of the standard alphabet, with "=" only as padding at the end. */
function isStrict(text: string): boolean {
  if (text.length % 4 !== 0 || BASE64_INVALID.test(text)) return false;
  const pad = text.indexOf('=');
  return pad < 0 || pad === text.length - 1 || (pad === text.length - 2 && text.charCodeAt(text.length - 1) === 61);
}

/** Where Go's decoder would stop: the first bad character, a misplaced "=", or the short tail. */
function firstBadIndex(text: string): number {
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (!/[A-Za-z0-9+/=]/.test(c)) return i;
    if (c === '=' && i < text.length - 2) return i;
  }
  return text.length - (text.length % 4 || 4);
}

/** Characters decodeBase64InTurns decodes between turns of the event loop (a whole number of quanta): a few milliseconds' work. */
const TURN_CHARS = 2 * 1024 * 1024;

/** Whether `value` is a text decodeBase64InTurns would cut into pieces: every AsciiText, and a string over TURN_CHARS. */
export function isLongText(value: unknown): value is string | AsciiText {
  return value instanceof AsciiText || (typeof value === 'string' && value.length > TURN_CHARS);
}

/**
 * decodeBase64 of a long text (a plaintext of megabytes), in pieces of TURN_CHARS with a turn of
 * the event loop after each: checking and decoding tens of megabytes of base64 in one go would hold
 * every other client up (bench/README.md, "Large requests"). Only well-formed text is decoded in
 * pieces; text with newlines, and text with an error to report, go to decodeBase64 whole.
 */
export async function decodeBase64InTurns(value: string | AsciiText, field: string): Promise<Buffer> {
  // An AsciiText is read in windows: a string of TURN_CHARS made from its bytes would be one of
  // the large strings it is kept as bytes to avoid.
  const window = typeof value === 'string' ? TURN_CHARS : WINDOW_CHARS;
  if (value.length % 4 !== 0) return decodeBase64(String(value), field);
  const tail = typeof value === 'string' ? value.slice(-2) : value.chars(value.length - 2);
  const padding = tail === '==' ? 2 : tail.endsWith('=') ? 1 : 0;
  const out = Buffer.allocUnsafe((value.length / 4) * 3 - padding);
  let written = 0;
  for (let at = 0; at < value.length; at += window) {
    if (at % TURN_CHARS === 0 && at > 0) await nextTurn();
    const piece = typeof value === 'string' ? value.slice(at, at + window) : value.chars(at, at + window);
    const pad = piece.indexOf('=');
    if (BASE64_INVALID.test(piece) || (pad >= 0 && at + pad < value.length - padding)) return decodeBase64(String(value), field);
    written += out.write(piece, written, 'base64');
  }
  return out;
}

/** Bytes encodeBase64InTurns encodes between turns of the event loop (a multiple of 3): a few milliseconds' work. */
const ENCODE_TURN_BYTES = (TURN_CHARS / 4) * 3;

/**
 * The base64 of bytes of megabytes (a decrypted plaintext) as an AsciiText, ENCODE_TURN_BYTES at a
 * time with a turn of the event loop after each: no string of megabytes is made.
 */
export async function encodeBase64InTurns(bytes: Uint8Array): Promise<AsciiText> {
  const text = new AsciiTextBuilder();
  for (let at = 0; at < bytes.length; at += ENCODE_TURN_BYTES) {
    if (at > 0) await nextTurn();
    text.base64(bytes.subarray(at, at + ENCODE_TURN_BYTES));
  }
  return text.build();
}
