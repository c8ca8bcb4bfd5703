/**
 * A text of megabytes kept as its bytes: a base64 plaintext or a ciphertext of tens of megabytes
 * on its way from a request body to a handler, or from a handler to the answer and the audit log.
 *
 * A JavaScript string of that size is made in one step, however it is built: tens of megabytes
 * copied into fresh memory while every other client waits, and freed in the garbage collector's
 * pause (bench/README.md, "No string of megabytes"). Bytes are read where they already are (the
 * request body), or written a piece at a time, and no string longer than WINDOW_CHARS is made from
 * them unless a consumer asks for the whole text (toString, toJSON).
 *
 * Every character is printable ASCII other than `"` and `\`: the JSON text of the value is its
 * bytes between two quotes, and its UTF-8 is its bytes. The two ways in keep to that: the body
 * parser's (bodyAsciiText, for a string it found to need no unescaping; not in the SDK) and the
 * builder, which takes base64 and checked text.
 */

/** Characters of the windows `chars` and the builder make strings of: below the size V8 keeps in a heap page of its own. */
export const WINDOW_CHARS = 64 * 1024;

/** Bytes of raw data the builder encodes as one window of base64 (a multiple of 3, so the windows join up). */
const WINDOW_RAW_BYTES = (WINDOW_CHARS / 4) * 3;

/** What an AsciiText may hold: printable ASCII and DEL, without `"` and `\`. */
const UNESCAPED = /^[\x20\x21\x23-\x5b\x5d-\x7f]*$/;

/** The constructor, for the builder and the body parser's factory below. */
let fromPieces: (pieces: readonly Buffer[], oneAnswer: boolean) => AsciiText;

export class AsciiText {
  readonly length: number;

  static {
    fromPieces = (pieces, oneAnswer) => new AsciiText(pieces, oneAnswer);
  }

  /**
   * @param oneAnswer the pieces are this text's own and it goes out in one answer (the builder's):
   * the answer gives their memory back once it has been sent (core/buffer-release.ts).
   */
  private constructor(
    private readonly pieces: readonly Buffer[],
    readonly oneAnswer = false,
  ) {
    let length = 0;
    for (const piece of pieces) length += piece.length;
    this.length = length;
  }

  /** The bytes, in the pieces they are kept in: the JSON writer and the audit HMAC read them as they are. */
  byteRuns(): readonly Buffer[] {
    return this.pieces;
  }

  /** The characters [start, end) as a string: meant for windows of WINDOW_CHARS or less. */
  chars(start: number, end = this.length): string {
    start = Math.max(0, start);
    end = Math.min(this.length, end);
    if (end <= start) return '';
    const parts: string[] = [];
    let offset = 0;
    for (const piece of this.pieces) {
      const from = Math.max(start, offset);
      const to = Math.min(end, offset + piece.length);
      if (from < to) parts.push(piece.toString('latin1', from - offset, to - offset));
      offset += piece.length;
      if (offset >= end) break;
    }
    return parts.length === 1 ? parts[0]! : parts.join('');
  }

  /** The text from `start` on, sharing these bytes. */
  from(start: number): AsciiText {
    const pieces: Buffer[] = [];
    let offset = 0;
    for (const piece of this.pieces) {
      if (offset + piece.length > start) pieces.push(start > offset ? piece.subarray(start - offset) : piece);
      offset += piece.length;
    }
    // Shares the bytes: what is given back is given back with the text they came from.
    return new AsciiText(pieces);
  }

  /** The whole text as one string: for a consumer that needs one (a response wrapped into a token, a log that writes raw). */
  toString(): string {
    return this.pieces.length === 1 ? this.pieces[0]!.toString('latin1') : Buffer.concat(this.pieces).toString('latin1');
  }

  /** JSON.stringify writes the text. */
  toJSON(): string {
    return this.toString();
  }
}

/**
 * The characters of a JSON string in a request body that the body parser found to need no
 * unescaping: ASCII without `\`, and so (JSON allowing no control character or `"` in it) the
 * text itself. The bytes are not copied, nor checked again: only the parser may call this.
 */
export function bodyAsciiText(bytes: Buffer): AsciiText {
  return fromPieces([bytes], false);
}

/**
 * Builds an AsciiText a piece at a time: an encoder writes each piece between turns of the event
 * loop. The text is for one answer: once an answer carrying it has gone out, the memory of its
 * pieces is given back (core/buffer-release.ts, through core/http/json-pieces.ts), and the text
 * reads as empty from then on. A plugin that keeps it for later keeps `toString()` instead.
 */
export class AsciiTextBuilder {
  private readonly pieces: Buffer[] = [];

  /** Appends short text (a ciphertext's prefix). */
  text(text: string): this {
    if (!UNESCAPED.test(text)) throw new TypeError('AsciiText holds printable ASCII without quotes or backslashes');
    if (text.length > 0) this.pieces.push(Buffer.from(text, 'latin1'));
    return this;
  }

  /** Appends the base64 of `bytes`: whole quanta, unless it is the last piece. */
  base64(bytes: Uint8Array): this {
    const source = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const out = Buffer.allocUnsafe(Math.ceil(source.length / 3) * 4);
    let written = 0;
    for (let at = 0; at < source.length; at += WINDOW_RAW_BYTES) {
      written += out.write(source.toString('base64', at, Math.min(source.length, at + WINDOW_RAW_BYTES)), written, 'latin1');
    }
    this.pieces.push(out.subarray(0, written));
    return this;
  }

  build(): AsciiText {
    return fromPieces(this.pieces, true);
  }
}
