/**
 * The JSON text of a response body, as UTF-8: the bytes of `Buffer.from(JSON.stringify(body))`,
 * but, for a large body, in pieces of about PIECE_CHARS with a turn of the event loop after each.
 * The answer to a batch of 100,000 items is 18 MB of JSON, and a 30 MB plaintext makes a 40 MB
 * ciphertext: serialising and encoding either in one go held every other client up
 * (bench/README.md, "Large requests").
 *
 * Plain objects, arrays and strings too large for one piece are walked (an array in runs of
 * elements, a string in runs of characters); every other value is given to JSON.stringify whole, so
 * a piece is always text JSON.stringify made. What is left out or turned into null (undefined,
 * functions, symbols) is left out or turned into null in the same places.
 *
 * An AsciiText (a ciphertext or plaintext of megabytes kept as bytes: core/large-text.ts) is sent
 * as its bytes between quotes, which is its JSON, without a string made of it.
 *
 * A JsonText (a batch's results, written by its backend; a number kept with every digit, an
 * ExactNumber) is sent as its text where it stands, in a small body as in a large one, inside an
 * object or an array; JSON.stringify would make its plain value first.
 */
import { nextTurn } from '../event-loop.js';
import { JsonText } from '../framework/json-text.js';
import { AsciiText } from '../large-text.js';

/** Characters per piece: serialising and encoding one takes a few milliseconds. */
export const PIECE_CHARS = 1024 * 1024;

/** A large body's JSON: the pieces to send in order, and which of them are the answer's own. */
export interface JsonPieces {
  readonly pieces: readonly Buffer[];
  /**
   * The pieces no one else holds: those written here, and those of an AsciiText made for this one
   * answer. Once the answer has gone out their memory may be given back (core/buffer-release.ts);
   * a piece that is a view of something else (a request body's bytes) is not among them.
   */
  readonly own: readonly Buffer[];
}

/**
 * The body in one Buffer, at once, when it is small (most are: they cost what they did before),
 * else the pieces to be sent in order, once made.
 */
export function jsonBody(value: unknown): Buffer | Promise<JsonPieces> {
  const seen: Seen = { text: false };
  if (!(walkable(value) || value instanceof JsonText) || sizeOf(value, PIECE_CHARS, seen) <= PIECE_CHARS) {
    // A body that is not large was walked whole by sizeOf, so `seen` tells whether it holds JsonText.
    return Buffer.from(seen.text ? textOf(value)! : JSON.stringify(value), 'utf8');
  }
  return inPieces(value);
}

/** The JSON text of a value that is not large: JSON.stringify's, with each JsonText's own text in it. */
function jsonOf(value: unknown): string | undefined {
  const seen: Seen = { text: false };
  sizeOf(value, Number.POSITIVE_INFINITY, seen);
  return seen.text ? textOf(value) : JSON.stringify(value);
}

/**
 * JSON.stringify of a value that holds JsonText: plain objects and arrays are walked to reach it;
 * every other value is JSON.stringify's (undefined for what JSON leaves out).
 */
function textOf(value: unknown): string | undefined {
  if (value instanceof JsonText) return value.text;
  if (Array.isArray(value)) return `[${value.map((item) => textOf(item) ?? 'null').join(',')}]`;
  if (typeof value === 'string' || !walkable(value)) return JSON.stringify(value);
  const record = value as Record<string, unknown>;
  const members: string[] = [];
  for (const key of Object.keys(record)) {
    const json = textOf(record[key]);
    if (json !== undefined) members.push(`${JSON.stringify(key)}:${json}`);
  }
  return `{${members.join(',')}}`;
}

async function inPieces(value: unknown): Promise<JsonPieces> {
  // The work that made the body may have used up a piece's worth of time already.
  await nextTurn();
  const writer = new PieceWriter();
  await writer.value(value);
  return { pieces: writer.pieces, own: writer.own };
}

class PieceWriter {
  readonly pieces: Buffer[] = [];
  readonly own: Buffer[] = [];
  private sinceTurn = 0;

  async value(value: unknown): Promise<void> {
    if (typeof value === 'string') await this.string(value);
    else if (value instanceof AsciiText) await this.asciiText(value);
    else if (value instanceof JsonText) for (const piece of value.pieces) await this.jsonText(piece);
    else if (Array.isArray(value)) await this.array(value);
    else await this.object(value as Record<string, unknown>);
  }

  /** Appends JSON text; once a piece's worth has been added since the last turn, the loop gets one. */
  private async text(text: string): Promise<void> {
    this.add(Buffer.from(text, 'utf8'));
    this.sinceTurn += text.length;
    if (this.sinceTurn >= PIECE_CHARS) await this.turn();
  }

  /** Appends a piece's worth of JSON text (a run of array elements or characters), then gives the loop a turn. */
  private async piece(text: string): Promise<void> {
    this.add(Buffer.from(text, 'utf8'));
    await this.turn();
  }

  /** A piece made here, and so the answer's own. */
  private add(piece: Buffer): void {
    this.pieces.push(piece);
    this.own.push(piece);
  }

  private async turn(): Promise<void> {
    this.sinceTurn = 0;
    await nextTurn();
  }

  private async string(value: string): Promise<void> {
    for (let at = 0; at < value.length; ) {
      let end = Math.min(value.length, at + PIECE_CHARS);
      // Never between the two halves of a surrogate pair: alone, each would be escaped as \ud8xx.
      if (end < value.length && isHighSurrogate(value.charCodeAt(end - 1))) end--;
      const json = JSON.stringify(value.slice(at, end));
      await this.piece(json.slice(at === 0 ? 0 : 1, end === value.length ? json.length : -1));
      at = end;
    }
  }

  /** An AsciiText's bytes, as they are kept, between its quotes: nothing in it needs escaping. */
  private async asciiText(value: AsciiText): Promise<void> {
    await this.text('"');
    for (const run of value.byteRuns()) {
      this.pieces.push(run);
      if (value.oneAnswer) this.own.push(run);
    }
    await this.text('"');
  }

  /** Text that is JSON already: a short piece as it is, a long one in runs of characters. */
  private async jsonText(text: string): Promise<void> {
    if (text.length <= PIECE_CHARS) {
      await this.text(text);
      return;
    }
    for (let at = 0; at < text.length; ) {
      let end = Math.min(text.length, at + PIECE_CHARS);
      if (end < text.length && isHighSurrogate(text.charCodeAt(end - 1))) end--;
      await this.piece(text.slice(at, end));
      at = end;
    }
  }

  private async array(value: readonly unknown[]): Promise<void> {
    await this.text('[');
    for (let start = 0; start < value.length; ) {
      let end = start;
      let size = 0;
      const seen: Seen = { text: false };
      while (end < value.length) {
        const next = sizeOf(value[end], PIECE_CHARS, seen);
        if (end > start && size + next > PIECE_CHARS) break;
        size += next;
        end++;
      }
      if (start > 0) await this.text(',');
      if (end === start + 1 && large(value[start])) await this.value(value[start]);
      else await this.piece((seen.text ? textOf(value.slice(start, end))! : JSON.stringify(value.slice(start, end))).slice(1, -1));
      start = end;
    }
    await this.text(']');
  }

  private async object(value: Record<string, unknown>): Promise<void> {
    await this.text('{');
    let separator = '';
    for (const key of Object.keys(value)) {
      const member = value[key];
      const name = `${separator}${JSON.stringify(key)}:`;
      if (large(member)) {
        await this.text(name);
        await this.value(member);
      } else {
        const json = jsonOf(member);
        if (json === undefined) continue;
        await this.text(name + json);
      }
      separator = ',';
    }
    await this.text('}');
  }
}

/** Whether a value is a string, array, plain object, JsonText or AsciiText whose JSON would exceed one piece. */
function large(value: unknown): boolean {
  return (walkable(value) || value instanceof JsonText || value instanceof AsciiText) && sizeOf(value, PIECE_CHARS) > PIECE_CHARS;
}

/** What sizeOf came across: whether the value holds JsonText (told only of the part it walked). */
interface Seen {
  text: boolean;
}

function walkable(value: unknown): boolean {
  if (typeof value === 'string' || Array.isArray(value)) return true;
  if (typeof value !== 'object' || value === null) return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return (prototype === Object.prototype || prototype === null) && typeof (value as { toJSON?: unknown }).toJSON !== 'function';
}

/**
 * About how many characters the JSON of `value` has, counted only until it passes `limit`.
 * Values that are not walked count as short; a JsonText as its text.
 */
function sizeOf(value: unknown, limit: number, seen?: Seen): number {
  if (typeof value === 'string' || value instanceof AsciiText) return value.length + 2;
  if (value instanceof JsonText) {
    if (seen) seen.text = true;
    return value.length;
  }
  if (!walkable(value)) return 8;
  let size = 2;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length && size <= limit; i++) size += sizeOf(value[i], limit - size, seen) + 1;
    return size;
  }
  const record = value as Record<string, unknown>;
  for (const key in record) {
    size += key.length + 4 + sizeOf(record[key], limit - size, seen);
    if (size > limit) break;
  }
  return size;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
