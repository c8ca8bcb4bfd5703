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

  /**
   * @param json valid JSON text
   * @param plain makes the value as plain data, when something other than the HTTP layer needs it
   */
  constructor(
    private readonly json: string,
    private readonly plain: (text: string) => unknown,
  ) {}

  /** The value's JSON text. */
  get text(): string {
    return this.json;
  }

  toJSON(): unknown {
    if (!this.made) {
      this.value = this.plain(this.text);
      this.made = true;
    }
    return this.value;
  }
}
