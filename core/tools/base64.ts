/**
 * Strict standard base64 (with padding), as Go's decoder reads it: Node's Buffer.from(…, 'base64')
 * silently accepts URL-safe characters, missing padding and garbage, which would turn a client's
 * mistake into wrong data instead of a 400. Shared by transit and the sys tools.
 */
import { BadRequestError } from '../errors.js';
import { nextTurn, SLICE_MS } from '../event-loop.js';
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

/** Characters decodeBase64InTurns checks and decodes at a time (whole quanta), between looks at the clock. */
const DECODE_WINDOW = WINDOW_CHARS;
/** Characters above which a text is decoded in slices (decodeBase64InTurns). */
const LONG_TEXT_CHARS = 2 * 1024 * 1024;

/** Whether `value` is a text decodeBase64InTurns would cut into pieces: every AsciiText, and a string over LONG_TEXT_CHARS. */
export function isLongText(value: unknown): value is string | AsciiText {
  return value instanceof AsciiText || (typeof value === 'string' && value.length > LONG_TEXT_CHARS);
}

/**
 * decodeBase64 of a long text (a plaintext of megabytes), in windows of DECODE_WINDOW characters,
 * with a turn of the event loop each time a slice of SLICE_MS has been used: checking and decoding
 * tens of megabytes of base64 in one go would hold every other client up (bench/README.md, "Large
 * requests"). A window is checked by what Node's decoder makes of it rather than by a pattern:
 * the decoder skips characters outside the alphabet and stops at "=", so a window is well formed
 * exactly when it decodes to its full length and holds neither "-" nor "_" (the URL-safe letters
 * it also takes); the pattern cost more than the decoding. Only well-formed text is decoded in
 * windows; text with newlines, and text with an error to report, go to decodeBase64 whole.
 */
export async function decodeBase64InTurns(value: string | AsciiText, field: string): Promise<Buffer> {
  if (value.length % 4 !== 0) return decodeBase64(String(value), field);
  const out = Buffer.allocUnsafe((value.length / 4) * 3 - paddingOf(value));
  let written = 0;
  const whole = await eachWindow(value, field, (piece, full) => {
    const decoded = out.write(piece, written, full, 'base64');
    written += decoded;
    return decoded;
  });
  return whole ?? out;
}

/**
 * The bytes of an AsciiText of base64, decoded a window at a time into one small buffer and given
 * to `take` (a hash or HMAC update), without the whole decoded value in memory; between windows
 * the event loop gets a turn once a slice is used, as decodeBase64InTurns. The buffer is reused:
 * `take` must be done with it when it returns. Malformed text throws decodeBase64's BadRequestError
 * (an AsciiText has no newline for decodeBase64 to ignore, so none is well formed after a window
 * was refused).
 */
export async function decodeBase64Chunks(value: AsciiText, field: string, take: (bytes: Buffer) => void): Promise<void> {
  if (value.length % 4 !== 0) decodeBase64(String(value), field);
  const scratch = Buffer.allocUnsafe((DECODE_WINDOW / 4) * 3);
  const whole = await eachWindow(value, field, (piece, full) => {
    const decoded = scratch.write(piece, 0, full, 'base64');
    if (decoded === full) take(scratch.subarray(0, decoded));
    return decoded;
  });
  if (whole) throw new BadRequestError(`unable to decode ${field} as base64`);
}

/** How many "=" end a text of base64. */
function paddingOf(value: string | AsciiText): number {
  const tail = typeof value === 'string' ? value.slice(-2) : value.chars(value.length - 2);
  return tail === '==' ? 2 : tail.endsWith('=') ? 1 : 0;
}

/**
 * Gives `decode` each window of `value` (a length a multiple of 4) with the bytes it must decode
 * to, a turn of the event loop between windows once a slice is used. Returns undefined when every
 * window decoded whole; else decodeBase64 of the whole text, which throws the error a client gets,
 * or gives the bytes of a text it reads otherwise (one with newlines).
 */
async function eachWindow(value: string | AsciiText, field: string, decode: (piece: string, full: number) => number): Promise<Buffer | undefined> {
  const padding = paddingOf(value);
  let sliceStart = performance.now();
  for (let at = 0; at < value.length; at += DECODE_WINDOW) {
    if (performance.now() - sliceStart > SLICE_MS) {
      await nextTurn();
      sliceStart = performance.now();
    }
    const end = Math.min(value.length, at + DECODE_WINDOW);
    // An AsciiText's window is a string of its own: no string of the whole is made.
    const piece = typeof value === 'string' ? value.slice(at, end) : value.chars(at, end);
    const full = ((end - at) / 4) * 3 - (end === value.length ? padding : 0);
    if (decode(piece, full) !== full || piece.includes('-') || piece.includes('_')) return decodeBase64(String(value), field);
  }
  return undefined;
}

/** Bytes encodeBase64InTurns encodes between turns of the event loop (a multiple of 3): a few milliseconds' work. */
const ENCODE_TURN_BYTES = (LONG_TEXT_CHARS / 4) * 3;

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
