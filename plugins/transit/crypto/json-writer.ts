/**
 * The JSON text of `batch_results`, written directly instead of built as objects for
 * JSON.stringify to walk: for a thousand small items, building and walking the objects cost more
 * than encrypting them. bench/README.md ("Writing batch_results") has the measurements behind the
 * way the text is appended.
 */
import { ItemError } from './item-error.js';

/**
 * How a successful result reads in `batch_results`, beside its reference: its members as plain
 * data, and the same members as JSON text, written directly (so only for values that need no
 * escaping: base64, `vault:v<N>:` ciphertexts, numbers) as three parts — the text before the
 * value, the value, and the text after it — so that an answer is mostly one value after another
 * with the same text between them.
 */
export interface ResultFields<T> {
  readonly plain: (result: T) => Record<string, unknown>;
  /** The members' text up to the value: the same for every result (`"ciphertext":"`). */
  readonly head: string;
  readonly value: (result: T) => string;
  /** The members' text after the value (`","key_version":1`); the same string again for a result like the last one. */
  readonly tail: (result: T) => string;
}

/**
 * Characters of results text made one piece of the JsonText: each piece ends with an entry, so no
 * string or number is cut; the whole is never joined into one string of megabytes on its way out.
 * A piece stays under V8's large-object size (128 KiB), so it is an ordinary heap object, and is
 * flattened when cut (`cut`), so it does not stay a chain of concatenations holding every
 * ciphertext it was made of. bench/README.md ("A batch lets go of its items as it goes") has what
 * each choice cost the collector.
 */
const PIECE_CHARS = 64 * 1024;

/**
 * `batch_results` as JSON text, in pieces. A successful entry adds two strings: the text since the
 * last value (the end of the entry before, a comma, the start of this one: the same string while
 * the results look alike) and its value. A failed entry is `failed`'s members, its error and its
 * reference, stringified.
 */
export class ResultsText<T> {
  private readonly pieces: string[] = [];
  /** The text of the piece being written. */
  private text = '';
  /** What closes the last entry written, if it was a successful one; "" otherwise. */
  private close = '';
  private empty = true;
  /** The cache of `close` and `between` (`close`, a comma, the next entry's opening) for a tail and reference. */
  private tail = '';
  private reference = '';
  private cachedClose = '';
  private between = '';

  constructor(
    private readonly fields: ResultFields<T>,
    private readonly failed: Record<string, unknown>,
  ) {}

  add(result: T | ItemError, reference: string): void {
    if (this.text.length >= PIECE_CHARS) {
      // The last entry's close goes with it: what follows opens with its comma.
      this.cut(this.close);
      this.close = '';
    }
    if (result instanceof ItemError) {
      this.text += `${this.empty ? '[' : `${this.close},`}${JSON.stringify({ ...this.failed, error: result.message, reference })}`;
      this.close = '';
      this.empty = false;
      return;
    }
    const fields = this.fields;
    const tail = fields.tail(result);
    if (tail !== this.tail || reference !== this.reference || this.cachedClose === '') {
      this.tail = tail;
      this.reference = reference;
      this.cachedClose = `${tail},"reference":${reference === '' ? '""' : JSON.stringify(reference)}}`;
      this.between = `${this.cachedClose},{${fields.head}`;
    }
    let opening: string;
    if (this.empty) opening = `[{${fields.head}`;
    else if (this.close === this.cachedClose) opening = this.between;
    else opening = `${this.close},{${fields.head}`;
    this.text += opening;
    this.text += fields.value(result);
    this.close = this.cachedClose;
    this.empty = false;
  }

  /** The text, in pieces that each end with an entry (the last with the closing bracket). */
  done(): string[] {
    if (this.empty) return ['[]'];
    this.cut(`${this.close}]`);
    return this.pieces;
  }

  /**
   * The text so far, and `end`, become a piece. Appending made it a chain of concatenations that
   * holds every string it was made of; reading a character makes V8 flatten it into one string
   * there and then, so the ciphertexts it was made of are let go now rather than when the
   * answer is sent.
   */
  private cut(end: string): void {
    const piece = this.text + end;
    piece.charCodeAt(0);
    this.pieces.push(piece);
    this.text = '';
  }
}
