/**
 * The listener's limits on a JSON request body's shape, checked in one pass over its bytes before
 * JSON.parse builds a single object: a body over a limit costs the server that pass and nothing
 * more, and a batch over a limit is refused whole, before any of its items reaches a backend.
 * Vault added these limits after CVE-2025-6203
 * (https://developer.hashicorp.com/vault/docs/configuration/listener/tcp); OpenBao bounds the
 * strings of a request instead, which is what the audit log hashes one by one
 * (https://openbao.org/docs/configuration/listener/tcp/). Keywarden has both, with their names.
 */
import { BadRequestError } from '../errors.js';

export interface JsonLimits {
  /** `max_json_depth`: arrays and objects open inside each other. */
  readonly depth: number;
  /** `max_json_string_value_length`: bytes of one string (a key or a value) as written, escapes included. */
  readonly stringLength: number;
  /** `max_json_object_entry_count`: members of one object. */
  readonly objectEntries: number;
  /** `max_json_array_element_count`: elements of one array. */
  readonly arrayElements: number;
  /** `max_request_json_strings`: strings (keys and values) in the whole body; negative turns it off, as in OpenBao. */
  readonly strings: number;
}

/**
 * Vault's defaults (its listener page). Depth: code that walks a value recursively (the audit
 * entry's HMAC pass, serializers) overflows the stack a few thousand levels down, which would turn
 * a malformed body into a 5xx. Strings: not OpenBao's default of 1,000, which refuses any transit
 * batch of more than about 500 items (an item's name and value are two strings) where Vault takes
 * up to its array limit of 10,000 items; 100,000 admits a 10,000-item batch of items with up to
 * five fields, and still bounds what the audit log hashes for one request.
 */
export const DEFAULT_JSON_LIMITS: JsonLimits = {
  depth: 500,
  stringLength: 1024 * 1024,
  objectEntries: 10_000,
  arrayElements: 10_000,
  strings: 100_000,
};

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

function refuse(what: string, setting: string): BadRequestError {
  return new BadRequestError(`failed to parse JSON input: ${what}, over the listener's ${setting}`);
}

/** Index of the quote that closes the string opened at `open` (raw.length if none). */
export function closingQuote(raw: Uint8Array, open: number): number {
  let at = open;
  for (;;) {
    at = raw.indexOf(QUOTE, at + 1);
    if (at < 0) return raw.length;
    let backslashes = 0;
    while (raw[at - 1 - backslashes] === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return at;
  }
}

/** A byte that continues a number or a literal (`true`, `false`, `null`). */
function inToken(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || c === 0x2e || c === 0x2b || c === 0x2d;
}

/**
 * Throws a 400 naming the first limit the body breaks. Works on the bytes as received: a quote or
 * backslash byte is never part of a multi-byte UTF-8 character, so strings are skipped whole with
 * indexOf, and a body of long strings (transit's batches) costs a step per string. Malformed JSON
 * passes through to JSON.parse, which says what is wrong with it.
 */
export function checkJsonLimits(raw: Uint8Array, limits: JsonLimits): void {
  new JsonLimitsPass(raw, limits).run(() => false);
}

/** Values stepped over between two looks at the clock. */
const CHECK_EVERY = 1024;

/**
 * checkJsonLimits as a pass that can stop part way and go on later, for a large body read in
 * slices with turns of the event loop between them (json-sliced.ts): the same steps, the same
 * errors.
 */
export class JsonLimitsPass {
  /** Per open container, innermost last: whether it is an object, and how many entries it has so far. */
  private readonly objects: boolean[] = [];
  private readonly counts: number[] = [];
  /** Inside an object, the next string is a member's name. */
  private expectName = false;
  private strings = 0;
  private at = 0;

  constructor(
    private readonly raw: Uint8Array,
    private readonly limits: JsonLimits,
  ) {}

  /** Reads on until the body is done (true) or `sliceUsed` says to stop (false: call again). */
  run(sliceUsed: () => boolean): boolean {
    const { raw, limits, objects, counts } = this;
    let steps = 0;
    for (; this.at < raw.length; this.at++) {
      if (++steps % CHECK_EVERY === 0 && sliceUsed()) return false;
      const c = raw[this.at]!;
      if (c === QUOTE) {
        const end = closingQuote(raw, this.at);
        if (end - this.at - 1 > limits.stringLength) throw refuse(`a string longer than ${limits.stringLength} bytes`, 'max_json_string_value_length');
        if (limits.strings >= 0 && ++this.strings > limits.strings) throw refuse(`more than ${limits.strings} strings (names and values)`, 'max_request_json_strings');
        // A member counts at its name, an element at its start; a member's value is not counted again.
        if (this.expectName || objects[objects.length - 1] === false) this.counted();
        this.expectName = false;
        this.at = end;
      } else if (c === 0x7b || c === 0x5b) {
        if (objects[objects.length - 1] === false) this.counted();
        if (counts.length >= limits.depth) throw refuse(`nested deeper than ${limits.depth} levels`, 'max_json_depth');
        objects.push(c === 0x7b);
        counts.push(0);
        this.expectName = c === 0x7b;
      } else if (c === 0x7d || c === 0x5d) {
        objects.pop();
        counts.pop();
        this.expectName = false;
      } else if (c === 0x2c) {
        this.expectName = objects[objects.length - 1] === true;
      } else if (c === 0x3a) {
        this.expectName = false;
      } else if (inToken(c)) {
        if (objects[objects.length - 1] === false) this.counted();
        while (this.at + 1 < raw.length && inToken(raw[this.at + 1]!)) this.at++;
      }
    }
    return true;
  }

  private counted(): void {
    const { counts, objects, limits } = this;
    const top = counts.length - 1;
    if (top < 0) return;
    const count = ++counts[top]!;
    if (objects[top]) {
      if (count > limits.objectEntries) throw refuse(`an object of more than ${limits.objectEntries} members`, 'max_json_object_entry_count');
    } else if (count > limits.arrayElements) {
      throw refuse(`an array of more than ${limits.arrayElements} elements`, 'max_json_array_element_count');
    }
  }
}
