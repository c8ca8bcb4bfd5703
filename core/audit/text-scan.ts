/**
 * The HMAC pass over a JsonText (core/framework/json-text.ts): data a backend wrote as JSON text
 * itself, such as transit's `batch_results`. Its plain value would be built (a thousand objects for
 * a batch of a thousand) only to be walked and hashed; the text is read instead, strings found by
 * their quotes, and the pass writes the same text the walk of the plain value writes: every string
 * value given to the pass (hashed, or left raw under an exempt key), keys, numbers and literals as
 * JSON.stringify would write them, no white space.
 *
 * Where the text could not give the walk's rendering, the scan gives up and the pass walks the
 * plain value instead: a key that is an array index (JSON.parse moves those to the front of their
 * object), a key written twice in one object (JSON.parse keeps the last), or text that is not JSON.
 */
import { closingQuote } from '../framework/exact-json.js';

/** Where a scan writes. */
export interface ScanOutput {
  /** Appends JSON text as it is. */
  raw(text: string): void;
  /** A string value, under `key`, the nearest object key above it. */
  string(value: string, key: string | undefined): void;
}

/** An object or array being read: the nearest key for the strings in it; for an object, its keys so far. */
interface Level {
  readonly keys: string[] | undefined;
  key: string | undefined;
  expectKey: boolean;
}

const QUOTE = 0x22;
const BACKSLASH = '\\';
/** Characters read between two looks at the clock. */
const CHECK_EVERY = 256;

export class TextScan {
  /** The piece being read, and where. */
  private text: string;
  private piece = 0;
  private at = 0;
  private readonly levels: Level[] = [];
  /** The keys read last at each place in an object, with their text: a batch's objects repeat the same few. */
  private readonly lastKeys: string[] = [];
  private readonly lastKeyTexts: string[] = [];
  private lastToken = '';
  private lastTokenText = '';

  /**
   * @param pieces the text, in the pieces of its JsonText, read one after the other; a string or
   *   token cut between two of them makes the scan give up (the plain value is walked instead)
   * @param outer the nearest object key above the JsonText itself
   */
  constructor(
    private readonly pieces: readonly string[],
    private readonly outer: string | undefined,
    private readonly out: ScanOutput,
  ) {
    this.text = pieces[0] ?? '';
  }

  /**
   * Reads on until the text is done (true), `sliceUsed` says this slice of work is over (false:
   * call again), or the text cannot give the walk's rendering (undefined: what was written must be
   * discarded). Text that already reads as the walk writes it is handed on in runs, as it is.
   */
  run(sliceUsed: () => boolean): boolean | undefined {
    for (;;) {
      const read = this.runPiece(sliceUsed);
      if (read !== true) return read;
      if (this.piece + 1 >= this.pieces.length) return this.levels.length === 0 ? true : undefined;
      this.text = this.pieces[++this.piece]!;
      this.at = 0;
    }
  }

  /** `run` within the piece being read: true once it is read to its end. */
  private runPiece(sliceUsed: () => boolean): boolean | undefined {
    const { text, levels } = this;
    const last = this.piece + 1 >= this.pieces.length;
    let count = 0;
    // The start of the run of text not yet handed on, which stays as it is.
    let from = this.at;
    while (this.at < text.length) {
      if (++count % CHECK_EVERY === 0 && sliceUsed()) {
        this.copy(from, this.at);
        return false;
      }
      const level = levels[levels.length - 1];
      const c = text.charCodeAt(this.at);
      if (c === QUOTE) {
        const close = closingQuote(text, this.at);
        if (close >= text.length) return undefined;
        const quoted = text.slice(this.at + 1, close);
        const value = quoted.includes(BACKSLASH) ? (JSON.parse(text.slice(this.at, close + 1)) as string) : quoted;
        if (level?.keys && level.expectKey) {
          const json = this.key(level, level.keys, value);
          if (json === undefined) return undefined;
          if (json.length !== quoted.length + 2 || value !== quoted) {
            this.copy(from, this.at);
            this.out.raw(json);
            from = close + 1;
          }
        } else {
          this.copy(from, this.at);
          this.out.string(value, level ? level.key : this.outer);
          from = close + 1;
        }
        this.at = close + 1;
        continue;
      }
      switch (c) {
        case 0x7b: // {
          levels.push({ keys: [], key: undefined, expectKey: true });
          break;
        case 0x5b: // [
          // The items' nearest key is the one the array stands under.
          levels.push({ keys: undefined, key: level ? level.key : this.outer, expectKey: false });
          break;
        case 0x7d: // }
        case 0x5d: // ]
          if (!level || (c === 0x7d) !== (level.keys !== undefined)) return undefined;
          levels.pop();
          break;
        case 0x3a: // :
          break;
        case 0x2c: // ,
          if (level?.keys) level.expectKey = true;
          break;
        case 0x20:
        case 0x09:
        case 0x0a:
        case 0x0d:
          // White space JSON.stringify does not write.
          this.copy(from, this.at);
          from = this.at + 1;
          break;
        default: {
          const end = this.tokenEnd();
          // A number or literal may go on in the next piece.
          if (end === text.length && !last) return undefined;
          const token = text.slice(this.at, end);
          const written = this.token(token);
          if (written === undefined) return undefined;
          if (written !== token) {
            this.copy(from, this.at);
            this.out.raw(written);
            from = end;
          }
          this.at = end;
          continue;
        }
      }
      this.at++;
    }
    this.copy(from, this.at);
    return true;
  }

  /**
   * A member's name, as JSON.stringify writes it; undefined when the walk would order the object
   * otherwise than the text.
   */
  private key(level: Level, keys: string[], value: string): string | undefined {
    // An array index ("0", "12") is listed first by JSON.parse's object, whatever the text's order.
    const first = value.charCodeAt(0);
    if (first >= 0x30 && first <= 0x39) return undefined;
    if (keys.includes(value)) return undefined;
    const place = keys.push(value) - 1;
    level.key = value;
    level.expectKey = false;
    if (this.lastKeys[place] !== value) {
      this.lastKeys[place] = value;
      this.lastKeyTexts[place] = JSON.stringify(value);
    }
    return this.lastKeyTexts[place];
  }

  /** Where the number or literal at `at` ends. */
  private tokenEnd(): number {
    const text = this.text;
    let end = this.at + 1;
    for (; end < text.length; end++) {
      const c = text.charCodeAt(end);
      if (c === 0x2c || c === 0x5d || c === 0x7d || c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) break;
    }
    return end;
  }

  /** A number or literal as JSON.stringify writes the value JSON.parse makes of it; undefined for one that is not JSON. */
  private token(token: string): string | undefined {
    if (token === this.lastToken) return this.lastTokenText;
    let written: string;
    if (token === 'true' || token === 'false' || token === 'null') written = token;
    else if (/^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/.test(token)) {
      const n = Number(token);
      written = Number.isFinite(n) ? String(n) : 'null';
    } else return undefined;
    this.lastToken = token;
    this.lastTokenText = written;
    return written;
  }

  /** Hands on text[from, to) as it is. */
  private copy(from: number, to: number): void {
    if (to > from) this.out.raw(this.text.slice(from, to));
  }
}
