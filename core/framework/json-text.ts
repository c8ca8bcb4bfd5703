/**
 * A part of a response whose JSON text its backend wrote itself, because it knows the shape (a
 * batch's results: a thousand objects of the same few fields, whose values need no escaping).
 * JSON.stringify spends ~0.6 µs on each such object, and building the objects first costs more;
 * writing the text directly is a fraction of both.
 *
 * The HTTP layer sends `text` where the value stands (core/http/json-pieces.ts). Everything else
 * that reads a response — the audit entry, response wrapping, JSON.stringify anywhere — gets the
 * same value as plain data through `toJSON`, made on first use. The two must always agree:
 * `JSON.parse(text)` equals the JSON of `toJSON()`.
 */
export class JsonText {
  private value: unknown;
  private made = false;
  private parts: readonly string[] | undefined;
  private readonly makePieces: (() => readonly string[]) | undefined;
  private joined: string | undefined;
  /** Characters of text, counted without joining its pieces (for text given lazily, the length given with it). */
  readonly length: number;

  /**
   * @param json valid JSON text, whole or in pieces as its writer made them (a batch's 18 MB of
   *   results in pieces of some 64 KiB: no string of the whole is made unless `text` is read); or
   *   its length and a function that makes its pieces on first use, for a subclass that holds the
   *   text in another form (entry.ts's `EncodedJson`, as bytes)
   * @param plain makes the value as plain data, when something other than the HTTP layer needs it
   */
  constructor(
    json: string | readonly string[] | { readonly length: number; readonly pieces: () => readonly string[] },
    private readonly plain: (text: string) => unknown,
  ) {
    if (typeof json === 'string' || Array.isArray(json)) {
      const parts: readonly string[] = typeof json === 'string' ? [json] : (json as readonly string[]);
      this.parts = parts;
      let length = 0;
      for (const part of parts) length += part.length;
      this.length = length;
    } else {
      const lazy = json as { readonly length: number; readonly pieces: () => readonly string[] };
      this.length = lazy.length;
      this.makePieces = lazy.pieces;
    }
  }

  /** The value's JSON text: its pieces joined, once. */
  get text(): string {
    const parts = this.pieces;
    return parts.length === 1 ? parts[0]! : (this.joined ??= parts.join(''));
  }

  /** The text in the pieces it was given in, which the HTTP layer and the audit pass read one after the other. */
  get pieces(): readonly string[] {
    return (this.parts ??= this.makePieces!());
  }

  toJSON(): unknown {
    if (!this.made) {
      this.value = this.plain(this.text);
      this.made = true;
    }
    return this.value;
  }
}
