/**
 * A large JSON request body parsed in slices, with a turn of the event loop between them, so that
 * a 100,000-item batch or a 30 MB string does not hold every other client up while it is decoded
 * and parsed (bench/README.md, "Large requests"). The result is what `JSON.parse` makes of the
 * whole text: the same values, members in the same order, the last of two members with one name
 * kept, `__proto__` an ordinary member.
 *
 * JSON.parse does the parsing still: the body is walked down its containers only as far as a
 * container or a string is too large for one slice, and each run of smaller values side by side
 * (a few hundred batch items, say) is decoded and given to JSON.parse in one call. A string larger
 * than a slice is decoded and unescaped in pieces. Written here rather than taken from a streaming
 * JSON library (such as @streamparser/json): those tokenise every character and build every value
 * in JavaScript, where this walk only finds where runs start and end and leaves the values to
 * JSON.parse, which keeps its own handling of `__proto__` and of a name written twice.
 *
 * The listener's limits (json-limits.ts) are checked over the whole body, in slices too, before
 * any of it is parsed.
 */
import { isAscii } from 'node:buffer';
import { BadRequestError } from '../errors.js';
import { scanJson } from '../framework/exact-json.js';
import { nextTurn, SLICE_MS } from '../event-loop.js';
import { bodyAsciiText } from '../large-text.js';
import { closingQuote, JsonLimitsPass, type JsonLimits } from './json-limits.js';

/** Bytes of values given to one JSON.parse call, and of a large string decoded at a time. */
const RUN_BYTES = 64 * 1024;
/**
 * A member of the body longer than this whose text needs no unescaping is given as an AsciiText
 * (its bytes, not copied) rather than a string: a plaintext or ciphertext of megabytes.
 */
export const ASCII_TEXT_CHARS = 1024 * 1024;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** What parsing a large body gives: the value, and whether a number in it is one JSON.parse changes (exact-json.ts). */
export interface SlicedResult {
  readonly value: unknown;
  readonly inexact: boolean;
}

/**
 * Checks the listener's limits over `raw`, then parses raw[start, end) (the body without the white
 * space around it), each in slices. Malformed JSON is a 400.
 */
export async function parseJsonInTurns(raw: Buffer, start: number, end: number, limits: JsonLimits): Promise<SlicedResult> {
  let sliceStart = performance.now();
  const sliceUsed = () => performance.now() - sliceStart > SLICE_MS;
  const turn = async () => {
    await nextTurn();
    sliceStart = performance.now();
  };
  const pass = new JsonLimitsPass(raw, limits);
  while (!pass.run(sliceUsed)) await turn();
  const parse = new SlicedParse(raw.subarray(start, end));
  while (!parse.run(sliceUsed)) await turn();
  return { value: parse.value, inexact: parse.inexact };
}

/** An array or object being filled, and for an object the name of the member whose value comes next. */
interface Frame {
  readonly target: unknown[] | Record<string, unknown>;
  readonly array: boolean;
  key: string | undefined;
}

/**
 * A large string being decoded: where it starts and its next piece starts, where it ends (its
 * closing quote), and the pieces so far — none while every piece was plain (plainBytes).
 */
interface LargeString {
  readonly start: number;
  at: number;
  readonly end: number;
  readonly pieces: string[];
}

/**
 * Whether the bytes raw[from, to), inside a string, are plain: ASCII without a backslash or a
 * control character. Plain bytes are a well-formed part of a JSON string as they are (the string's
 * closing quote was found past them, so they hold no quote either), and their value is their
 * Latin-1 decoding: they need no JSON.parse to check or decode them, which for a string of
 * megabytes made three strings of every piece for the young generation to collect
 * (bench/README.md, "A large string checked without decoding it"). Native scans: isAscii, then
 * one memchr per byte refused, since Node has no call that finds the first of a set of bytes.
 */
function plainBytes(raw: Buffer, from: number, to: number): boolean {
  const bytes = raw.subarray(from, to);
  if (!isAscii(bytes) || bytes.includes(BACKSLASH)) return false;
  for (let control = 0; control < 0x20; control++) if (bytes.includes(control)) return false;
  return true;
}

function malformed(what: string, at: number): BadRequestError {
  return new BadRequestError(`failed to parse JSON input: ${what} at byte ${at}`);
}

function isSpace(c: number | undefined): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/** Defines a member as JSON.parse does: `__proto__` included, as an own property rather than the prototype. */
function setMember(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
  else target[key] = value;
}

class SlicedParse {
  value: unknown = undefined;
  inexact = false;
  private at = 0;
  private readonly stack: Frame[] = [];
  private large: LargeString | undefined;
  private done = false;
  /** Whether the run being gathered may hold a number (a digit outside its strings): only then is it scanned for inexact ones. */
  private runNumbers = false;

  constructor(private readonly raw: Buffer) {}

  /** Parses on until the body is done (true) or `sliceUsed` says to stop (false: call again). */
  run(sliceUsed: () => boolean): boolean {
    while (!this.done) {
      if (this.large) {
        if (!this.largeString(sliceUsed)) return false;
        continue;
      }
      this.step();
      if (!this.done && sliceUsed()) return false;
    }
    return true;
  }

  private skipSpace(): void {
    while (isSpace(this.raw[this.at])) this.at++;
  }

  /** One step: a value where one is expected (at the top, or after `[`, `,` or a name's `:`), or the end of a container. */
  private step(): void {
    const raw = this.raw;
    this.skipSpace();
    const frame = this.stack[this.stack.length - 1];
    if (!frame) {
      this.startValue();
      return;
    }
    // Inside a container: a run of members or elements small enough to parse at once, or one too large.
    const c = raw[this.at];
    if (c === (frame.array ? 0x5d : 0x7d)) {
      this.at++;
      this.close();
      return;
    }
    const start = this.at;
    let end = start;
    let last = start;
    this.runNumbers = false;
    for (;;) {
      const next = frame.array ? this.valueEnd(end, start + RUN_BYTES) : this.memberEnd(end, start + RUN_BYTES);
      if (next < 0) break;
      last = next;
      end = next;
      while (isSpace(raw[end])) end++;
      if (raw[end] !== 0x2c) break;
      end++;
      while (isSpace(raw[end])) end++;
    }
    if (last > start) {
      this.parseRun(frame, start, last);
      this.at = last;
      this.skipSpace();
      const after = raw[this.at];
      if (after === 0x2c) {
        this.at++;
        this.skipSpace();
        if (raw[this.at] === (frame.array ? 0x5d : 0x7d)) throw malformed('a trailing comma', this.at);
      } else if (after !== (frame.array ? 0x5d : 0x7d)) {
        throw malformed(this.at >= raw.length ? 'unexpected end of input' : 'expected a comma or the end of a container', this.at);
      }
      return;
    }
    // The next value is too large for a run: its name first (for a member), then the value itself.
    if (!frame.array) {
      if (c !== QUOTE) throw malformed('expected a member name', this.at);
      const close = closingQuote(raw, this.at);
      if (close >= raw.length) throw malformed('an unterminated string', this.at);
      frame.key = this.parseText(this.at, close + 1, '') as string;
      this.at = close + 1;
      this.skipSpace();
      if (raw[this.at] !== 0x3a) throw malformed('expected a colon', this.at);
      this.at++;
      this.skipSpace();
    }
    this.startValue();
  }

  /** A value too large for a run (or the top one): a container is opened, a string decoded in pieces, anything else parsed whole. */
  private startValue(): void {
    const raw = this.raw;
    const c = raw[this.at];
    if (c === 0x7b || c === 0x5b) {
      this.stack.push({ target: c === 0x5b ? [] : {}, array: c === 0x5b, key: undefined });
      this.at++;
      return;
    }
    if (c === QUOTE) {
      const close = closingQuote(raw, this.at);
      if (close >= raw.length) throw malformed('an unterminated string', this.at);
      this.large = { start: this.at + 1, at: this.at + 1, end: close, pieces: [] };
      return;
    }
    if (c === undefined) throw malformed('unexpected end of input', this.at);
    // A number or literal: parsed whole, however long.
    let end = this.at;
    while (end < raw.length && !isSpace(raw[end]) && raw[end] !== 0x2c && raw[end] !== 0x5d && raw[end] !== 0x7d) end++;
    if (end === this.at) throw malformed('unexpected character', this.at);
    const start = this.at;
    this.at = end;
    this.placed(this.parseText(start, end, ''));
  }

  /**
   * Checks and decodes the next piece of a large string; true once the whole string is placed. A
   * string whose pieces are all plain (a base64 plaintext, say) is made at the end from its bytes
   * in one native copy, outside V8's heap: joining 30 MB of decoded pieces held the event loop,
   * and left a 30 MB string on the heap for the garbage collector (bench/README.md, "Large
   * requests"). A member of the body itself over ASCII_TEXT_CHARS is not made a string at all but
   * given as its bytes (an AsciiText: bench/README.md, "No string of megabytes"); a backend field
   * that takes none gets it as a string (core/framework/fields.ts). Its pieces are decoded only to
   * be checked, and dropped.
   */
  private largeString(sliceUsed: () => boolean): boolean {
    const large = this.large!;
    const raw = this.raw;
    while (large.at < large.end) {
      let cut = Math.min(large.end, large.at + RUN_BYTES);
      if (cut < large.end) cut = safeCut(raw, large.at, cut);
      const plain = plainBytes(raw, large.at, cut);
      if (large.pieces.length > 0 || !plain) {
        if (large.pieces.length === 0 && large.at > large.start) large.pieces.push(raw.toString('latin1', large.start, large.at));
        large.pieces.push(plain ? raw.toString('latin1', large.at, cut) : (this.parseText(large.at, cut, '"') as string));
      }
      large.at = cut;
      if (large.at < large.end && sliceUsed()) return false;
    }
    this.large = undefined;
    this.at = large.end + 1;
    const { pieces } = large;
    if (pieces.length === 0 && large.end - large.start > ASCII_TEXT_CHARS && this.atTopMember()) this.placed(bodyAsciiText(raw.subarray(large.start, large.end)));
    else this.placed(pieces.length === 0 ? raw.toString('latin1', large.start, large.end) : pieces.length === 1 ? pieces[0]! : pieces.join(''));
    return true;
  }

  /** Whether the value being parsed is a member of the body's own object (not inside an array or a nested object). */
  private atTopMember(): boolean {
    return this.stack.length === 1 && !this.stack[0]!.array;
  }

  /** JSON.parse of raw[start, end), between `around` and its mirror (`[`…`]`, `"`…`"`); a malformed run is a 400. */
  private parseText(start: number, end: number, around: '' | '"' | '[' | '{'): unknown {
    const text = this.raw.toString('utf8', start, end);
    if (around === '' || ((around === '[' || around === '{') && this.runNumbers)) this.inexact ||= scanJson(text).inexact;
    const closing = around === '[' ? ']' : around === '{' ? '}' : around;
    try {
      return JSON.parse(around + text + closing) as unknown;
    } catch (err) {
      throw malformed(`${err instanceof Error ? err.message : String(err)} in the value`, start);
    }
  }

  /** A run of elements or members, raw[start, end), parsed at once and added to the container. */
  private parseRun(frame: Frame, start: number, end: number): void {
    if (frame.array) {
      const items = this.parseText(start, end, '[') as unknown[];
      const target = frame.target as unknown[];
      for (const item of items) target.push(item);
      return;
    }
    const members = this.parseText(start, end, '{') as Record<string, unknown>;
    const target = frame.target as Record<string, unknown>;
    for (const key of Object.keys(members)) setMember(target, key, members[key]);
  }

  /** A value is complete: it goes into its container, or is the body. */
  private placed(value: unknown): void {
    const frame = this.stack[this.stack.length - 1];
    if (!frame) {
      this.value = value;
      this.skipSpace();
      if (this.at < this.raw.length) throw malformed('unexpected text after the JSON value', this.at);
      this.done = true;
      return;
    }
    if (frame.array) (frame.target as unknown[]).push(value);
    else setMember(frame.target as Record<string, unknown>, frame.key!, value);
    frame.key = undefined;
    this.skipSpace();
    const after = this.raw[this.at];
    if (after === 0x2c) {
      this.at++;
      this.skipSpace();
      if (this.raw[this.at] === (frame.array ? 0x5d : 0x7d)) throw malformed('a trailing comma', this.at);
    } else if (after !== (frame.array ? 0x5d : 0x7d)) {
      throw malformed(this.at >= this.raw.length ? 'unexpected end of input' : 'expected a comma or the end of a container', this.at);
    }
  }

  private close(): void {
    const frame = this.stack.pop()!;
    this.placed(frame.target);
  }

  /**
   * Where the member (`"name": value`) at `from` ends, or -1 when it does not end before `limit`
   * or is not a member: the run stops before it and it is walked into.
   */
  private memberEnd(from: number, limit: number): number {
    const raw = this.raw;
    if (raw[from] !== QUOTE) return -1;
    let at = closingQuote(raw, from) + 1;
    if (at > limit) return -1;
    while (isSpace(raw[at])) at++;
    if (raw[at] !== 0x3a) return -1;
    at++;
    while (isSpace(raw[at])) at++;
    return at > limit ? -1 : this.valueEnd(at, limit);
  }

  /** Where the value at `from` ends, or -1 when it does not end before `limit` (or at all). */
  private valueEnd(from: number, limit: number): number {
    const raw = this.raw;
    const c = raw[from];
    if (c === QUOTE) {
      const end = closingQuote(raw, from) + 1;
      return end > limit || end > raw.length ? -1 : end;
    }
    if (c === 0x7b || c === 0x5b) {
      let depth = 0;
      for (let at = from; at < limit && at < raw.length; at++) {
        const b = raw[at]!;
        if (b === QUOTE) at = closingQuote(raw, at);
        else if (b === 0x7b || b === 0x5b) depth++;
        else if ((b === 0x7d || b === 0x5d) && --depth === 0) return at < limit ? at + 1 : -1;
        else if (b === 0x2d || (b >= 0x30 && b <= 0x39)) this.runNumbers = true;
      }
      return -1;
    }
    if (c === undefined) return -1;
    this.runNumbers = true;
    let end = from;
    while (end < raw.length && end < limit && !isSpace(raw[end]) && raw[end] !== 0x2c && raw[end] !== 0x5d && raw[end] !== 0x7d) end++;
    return end > from && end < limit ? end : -1;
  }
}

/**
 * Moves a cut inside a string's bytes back to where both halves decode and unescape alone as the
 * whole would: before a byte that starts a UTF-8 character (or after three continuation bytes,
 * past which none belongs to a character started earlier), and not inside an escape (`\"`,
 * `\uXXXX`). Two halves of a surrogate pair written as escapes may fall apart: each becomes its
 * UTF-16 unit, and the joined pieces hold the pair.
 */
export function safeCut(raw: Uint8Array, from: number, cut: number): number {
  for (let back = 0; back < 4 && cut - back > from; back++) {
    if ((raw[cut - back]! & 0xc0) !== 0x80) {
      cut -= back;
      break;
    }
  }
  // A cut right after a backslash that escapes: before it instead.
  let run = 0;
  while (cut - run - 1 >= from && raw[cut - run - 1] === BACKSLASH) run++;
  if (run % 2 === 1) cut--;
  // A cut inside `\uXXXX`: before its backslash.
  for (let at = cut - 1; at >= Math.max(from, cut - 5); at--) {
    if (raw[at] !== BACKSLASH) continue;
    let before = 0;
    while (at - before - 1 >= from && raw[at - before - 1] === BACKSLASH) before++;
    if (before % 2 === 0 && raw[at + 1] === 0x75) cut = at;
    break;
  }
  return cut;
}
