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
  private readonly parts: readonly string[];
  private joined: string | undefined;
  /** Characters of text, counted without joining its pieces. */
  readonly length: number;

  /**
   * @param json valid JSON text, whole or in pieces as its writer made them (a batch's 18 MB of
   *   results in pieces of some 64 KiB: no string of the whole is made unless `text` is read)
   * @param plain makes the value as plain data, when something other than the HTTP layer needs it
   */
  constructor(
    json: string | readonly string[],
    private readonly plain: (text: string) => unknown,
  ) {
    this.parts = typeof json === 'string' ? [json] : json;
    let length = 0;
    for (const part of this.parts) length += part.length;
    this.length = length;
  }

  /** The value's JSON text: its pieces joined, once. */
  get text(): string {
    return this.parts.length === 1 ? this.parts[0]! : (this.joined ??= this.parts.join(''));
  }

  /** The text in the pieces it was given in, which the HTTP layer and the audit pass read one after the other. */
  get pieces(): readonly string[] {
    return this.parts;
  }

  toJSON(): unknown {
    if (!this.made) {
      this.value = this.plain(this.text);
      this.made = true;
    }
    return this.value;
  }
}
