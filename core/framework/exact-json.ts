/**
 * JSON numbers kept exactly as written. JSON.parse turns every number into a double, so
 * `12345678901234567891` becomes `12345678901234567000` and `1e400` becomes Infinity (written back
 * as null); Vault decodes request bodies with Go's json.Number and keeps the digits. A backend that
 * stores what a client sends (kv) asks for the body again with such numbers kept (`exactBody`),
 * stores and reads them with `stringifyExact` and `parseExact`, and answers them as ExactNumber,
 * which the HTTP layer writes as its own digits (a JsonText). Everything else keeps JSON.parse's
 * doubles: a body without such a number (nearly all) costs one scan outside its strings.
 */
import { isSafeNumber, parse as parseLossless, stringify as stringifyLossless } from 'lossless-json';
import { JsonText } from './json-text.js';

/**
 * A JSON number that JSON.parse would change: more significant digits than a double keeps, or out
 * of its range. Written as `text` in answers and storage; as plain data (`toJSON`: an audit entry,
 * anything else that serializes it) it is the double JSON.parse would have made.
 */
export class ExactNumber extends JsonText {
  constructor(text: string) {
    super(text, () => Number(text));
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const MINUS = 0x2d;
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;
/** No number of this many characters or fewer, without an exponent, loses a digit: a double keeps 15 significant digits. */
const ALWAYS_EXACT_LENGTH = 15;

/** Index of the quote that closes the JSON string opened at `open` (text.length if there is none). */
export function closingQuote(text: string, open: number): number {
  let at = open;
  for (;;) {
    at = text.indexOf('"', at + 1);
    if (at < 0) return text.length;
    let backslashes = 0;
    while (text.charCodeAt(at - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return at;
  }
}

/** What one pass over JSON text outside its strings found. */
export interface JsonScan {
  /** Arrays and objects open inside each other more than the limit given. */
  readonly tooDeep: boolean;
  /** A number JSON.parse would change. */
  readonly inexact: boolean;
}

/**
 * One pass over well-formed JSON text (JSON.parse accepted it, or this server wrote it), outside
 * its strings, which are skipped whole with indexOf to their closing quote: a body of long strings
 * (transit's batches) costs a step per string, not per character. It finds how deep arrays and
 * objects nest (up to `depthLimit`) and whether a number would change through JSON.parse.
 */
export function scanJson(text: string, depthLimit = Number.POSITIVE_INFINITY): JsonScan {
  let depth = 0;
  let inexact = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = closingQuote(text, i);
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > depthLimit) return { tooDeep: true, inexact };
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
    } else if (!inexact && (c === MINUS || (c >= DIGIT_0 && c <= DIGIT_9))) {
      let end = i + 1;
      let exponent = false;
      for (; end < text.length; end++) {
        const d = text.charCodeAt(end);
        if (d === 0x65 || d === 0x45) exponent = true;
        else if (!((d >= DIGIT_0 && d <= DIGIT_9) || d === 0x2e || d === 0x2b || d === MINUS)) break;
      }
      inexact = (exponent || end - i > ALWAYS_EXACT_LENGTH) && !isSafeNumber(text.slice(i, end));
      if (inexact && depthLimit === Number.POSITIVE_INFINITY) break;
      i = end - 1;
    }
  }
  return { tooDeep: false, inexact };
}

const parseNumber = (text: string): number | ExactNumber => (isSafeNumber(text) ? Number(text) : new ExactNumber(text));
/** JSON.parse keeps the last of two members with one name; so does this parse. */
const lastWins = ({ newValue }: { newValue: unknown }): unknown => newValue;

/** JSON.parse, with each number it would change kept as an ExactNumber. */
export function parseExact(text: string): unknown {
  return scanJson(text).inexact ? parseLossless(text, null, { parseNumber, onDuplicateKey: lastWins }) : JSON.parse(text);
}

const exactNumbers = [{ test: (value: unknown) => value instanceof ExactNumber, stringify: (value: unknown) => (value as ExactNumber).text }];

/** JSON.stringify, with each ExactNumber written as its text. */
export function stringifyExact(value: unknown): string {
  return holdsExactNumber(value) ? stringifyLossless(value, undefined, undefined, exactNumbers)! : JSON.stringify(value);
}

function holdsExactNumber(value: unknown): boolean {
  if (value instanceof ExactNumber) return true;
  if (Array.isArray(value)) return value.some(holdsExactNumber);
  if (value === null || typeof value !== 'object' || Object.getPrototypeOf(value) !== Object.prototype) return false;
  for (const key in value) if (holdsExactNumber((value as Record<string, unknown>)[key])) return true;
  return false;
}

/** Where a parsed body keeps its text: a symbol no JSON, spread, key listing or field parse sees. */
const SOURCE = Symbol('JSON text with inexact numbers');

/**
 * For the HTTP layer: `parsed` is what JSON.parse made of `text`, in which scanJson found a number
 * JSON.parse changed. The text is kept on the body, for `exactBody`.
 */
export function keepExactText<T extends object>(parsed: T, text: string): T {
  Object.defineProperty(parsed, SOURCE, { value: text });
  return parsed;
}

/** The JSON text `keepExactText` kept on a parsed body, if any (the isolation protocol carries it across). */
export function exactTextOf(data: object): string | undefined {
  return (data as { readonly [SOURCE]?: string })[SOURCE];
}

/**
 * The request body (`req.data` of a write) parsed again with every number JSON.parse changed kept
 * as an ExactNumber; undefined when it had none, or did not come as JSON.
 */
export function exactBody(data: Readonly<Record<string, unknown>>): Record<string, unknown> | undefined {
  const text = exactTextOf(data);
  return text === undefined ? undefined : (parseExact(text) as Record<string, unknown>);
}
