/**
 * The HMAC pass of an audit entry: a request's or response's data written as JSON text with every
 * string replaced by its hash, straight from the data (no hashed copy is built and then
 * serialised). A body can hold millions of strings (a 32 MiB batch), and every client shares one
 * event loop, so the text is made in slices: the walk and the hashing each check the clock every
 * few hundred values and give the loop a turn once a slice has run for SLICE_MS. Data that fits
 * one slice — nearly every request — is done at once, without a turn and without a promise. The
 * walk keeps its own stack, so no depth of nesting overflows the call stack.
 *
 * The walk stops every FLUSH_EVERY strings to hash them and join them with the text around them
 * into a run: the short strings it makes (the text before each string, each hash) die within that
 * chunk. Held until the end, a 100,000-item batch's were some 600,000 strings that survived
 * collection after collection of V8's young generation, each one copied every time: collections
 * of 30–45 ms that held the event loop in the middle of the pass.
 */
import type { Hmac } from 'node:crypto';
import { setImmediate as turn } from 'node:timers/promises';
import { HMAC_PREFIX, utf8Of, type AuditHmac } from './salt.js';
import { JsonText } from '../framework/json-text.js';
import { AsciiText } from '../large-text.js';
import { TextScan, type ScanOutput } from './text-scan.js';
import { SLICE_MS } from '../event-loop.js';

/** Values walked or hashed between two looks at the clock. */
const CHECK_EVERY = 256;
/** Strings hashed in one call of `AuditHmac.hexDigests`. */
const HASH_CHUNK = 1024;
/**
 * Strings to hash the walk gathers before they are hashed and joined into a run. A batch's entry
 * with its hash is about a hundred characters, so its runs stay under V8's large-object size
 * (128 KiB): ordinary heap objects, which a collection copies or frees in passing. A run in a
 * large-object page of its own costs the page's unmapping in the pause of the next full collection
 * (bench/README.md, "No string of megabytes").
 */
const FLUSH_EVERY = 1024;
/** What a hashed string's text starts with: its quote and the prefix naming the HMAC. */
const OPEN_HASH = `"${HMAC_PREFIX}`;
/** Hex digits of an HMAC-SHA-256 digest. */
const HEX_DIGITS = 64;
/** A string longer than this (UTF-16 code units) is hashed on its own, fed to the HMAC in pieces this long. */
const LARGE_STRING = 256 * 1024;

/**
 * `value` as JSON text with every string replaced by its HMAC; numbers, booleans and object keys
 * stay as they are. As in Vault, a string is left raw when the nearest object key above it is in
 * `nonHmacKeys` — for `{"a": ["x"]}` that is `a`; for `{"a": {"b": "x"}}` it is `b`. Values JSON
 * would render differently are first turned into what JSON would write (a Date into its ISO text,
 * bytes into base64, a bigint into its digits, unhashed). Without `hmac` (a device that logs raw)
 * strings are written as they are. The text is what `JSON.stringify` would write for a copy of
 * `value` holding the hashes; undefined for a value JSON cannot write (undefined, a function).
 *
 * The text comes in runs, as the pass made it: for a large value (a 100,000-item batch's 18 MB)
 * a run per FLUSH_EVERY hashed strings, whose concatenation is the text, so that it need not be
 * joined in one go.
 * Returns the runs themselves when the text was made within one slice, else a promise of them as
 * UTF-8 bytes, each run encoded as soon as it was joined (see `HashPass.encodeRuns`).
 */
export function hashToJsonRuns(value: unknown, hmac: AuditHmac | undefined, nonHmacKeys: readonly string[] = []): string[] | undefined | Promise<Buffer[] | undefined> {
  const pass = new HashPass(value, hmac, nonHmacKeys);
  return pass.finished() ? pass.runs() : pass.resume().then(() => pass.bytes());
}

/** The same text made in one go, for small values whose size is known (auth blocks, tests). */
export function hashToJson(value: unknown, hmac: AuditHmac | undefined, nonHmacKeys: readonly string[] = []): string | undefined {
  const pass = new HashPass(value, hmac, nonHmacKeys, Infinity);
  pass.finished();
  return pass.result();
}

/** The hashed copy as plain JSON data (the text, parsed), for entries built as objects. */
export function hashStructure(value: unknown, hmac: AuditHmac | undefined, nonHmacKeys: readonly string[] = []): unknown {
  const text = hashToJson(value, hmac, nonHmacKeys);
  return text === undefined ? undefined : JSON.parse(text);
}

/**
 * A container being written: an array's items or an object's keys, and the next one to write; or
 * a JsonText being read from its text (text-scan.ts).
 */
interface Frame {
  readonly scan?: { readonly reading: TextScan; readonly source: JsonText; readonly mark: Mark };
  readonly items: readonly unknown[] | undefined;
  readonly object: Readonly<Record<string, unknown>> | undefined;
  readonly keys: readonly string[] | undefined;
  /** The nearest object key above an array's items. */
  readonly key: string | undefined;
  next: number;
  /** Whether a member was written yet (an object's members JSON leaves out need no comma). */
  wrote: boolean;
}

/** Where the pass's output stood, to go back to when a JsonText's scan gives up. */
interface Mark {
  readonly text: string;
  readonly pieces: number;
  readonly strings: number;
  /** Runs joined before the mark: a later one may hold text from after it. */
  readonly flushes: number;
}

class HashPass implements ScanOutput {
  private readonly skip: ReadonlySet<string>;
  /** JsonTexts whose scan gave up after runs past its start were joined: the pass began again, walking these as plain values. */
  private readonly walkPlain = new Set<JsonText>();
  /** The containers whose children are still being written, innermost last. */
  private readonly stack: Frame[] = [];
  /** The text since the last string to hash. */
  private text = '';
  /**
   * The text before each string to hash not yet joined, up to its hash's hex digits (the quote and
   * the prefix included): the whole is the runs joined, then pieces[0], hex 0, pieces[1], hex 1,
   * …, text.
   */
  private readonly pieces: string[] = [];
  private readonly strings: (string | AsciiText)[] = [];
  /** Each string's hex digest: one slice of a run's hex text, never a string made for itself. */
  private readonly hashes: string[] = [];
  /** A large string being fed to its HMAC: how far. */
  private large: { readonly hmac: Hmac; at: number } | undefined;
  /**
   * The text and hashes joined so far, a run per flush; the last ends with the text after the last
   * hash. Once the pass has taken more than a slice, each run is its UTF-8 bytes (`encodeRuns`).
   */
  private readonly joined: (string | Buffer)[] = [];
  /**
   * Whether runs are encoded as they are joined: set when the pass first gives the event loop a
   * turn. A large entry's runs live until its line is written, which for a batch is the whole of
   * the request: held as strings, they were tens of megabytes that every young collection of the
   * request copied and then moved to the old generation, where only a full collection frees them.
   * Their bytes live outside V8's heap, and the line needs those bytes anyway (entry.ts,
   * `EncodedJson`). Data done within one slice (nearly every request) keeps its runs as text.
   */
  private encodeRuns = false;
  private done = false;
  private writable = true;
  private sliceStart = 0;
  /** `"key":` for the keys met so far: a batch's thousand items repeat the same few. */
  private readonly memberNames = new Map<string, string>();

  constructor(
    private readonly value: unknown,
    private readonly hmac: AuditHmac | undefined,
    nonHmacKeys: readonly string[],
    private readonly sliceMs = SLICE_MS,
  ) {
    this.skip = new Set(nonHmacKeys);
    this.begin();
  }

  private begin(): void {
    this.stack.length = 0;
    this.text = '';
    this.pieces.length = 0;
    this.strings.length = 0;
    this.hashes.length = 0;
    this.joined.length = 0;
    const top = jsonValue(this.value);
    if (omitted(top)) this.writable = false;
    else this.write(top, undefined);
  }

  result(): string | undefined {
    const runs = this.runs();
    return runs && (runs.length === 1 ? runs[0] : runs.join(''));
  }

  /** The text in the runs `flush` made, the last ending with the text after the last string. */
  runs(): string[] | undefined {
    if (!this.writable) return undefined;
    // Each run is one flat string: a pass done within one slice never encodes its runs (resume does).
    return this.joined.length === 0 ? [this.text] : [...(this.joined as string[])];
  }

  /** The runs as `runs` gives them, each as its UTF-8 bytes. */
  bytes(): Buffer[] | undefined {
    if (!this.writable) return undefined;
    if (this.joined.length === 0) return [utf8Of(this.text)];
    return this.joined.map((run) => (typeof run === 'string' ? utf8Of(run) : run));
  }

  /**
   * Works until done (true) or until the slice is used up (false): walks until FLUSH_EVERY
   * strings wait to be hashed (or the walk is over), hashes them, joins them into a run.
   */
  finished(): boolean {
    this.sliceStart = performance.now();
    while (!this.done) {
      const walked = this.walk();
      if (walked === false) return false;
      if (!this.hash()) return false;
      this.flush(walked === true);
      if (walked === true) this.done = true;
      else if (this.sliceUsed()) return false;
    }
    return true;
  }

  /**
   * Joins the strings hashed so far with the text before each into a run, and the text after the
   * last one too when the walk is over; what was joined is let go.
   */
  private flush(last: boolean): void {
    const { pieces, hashes } = this;
    if (pieces.length === 0 && !(last && this.joined.length > 0)) return;
    const parts = new Array<string>(pieces.length * 2 + (last ? 1 : 0));
    for (let i = 0; i < pieces.length; i++) {
      parts[2 * i] = pieces[i]!;
      parts[2 * i + 1] = hashes[i]!;
    }
    if (last) {
      parts[parts.length - 1] = this.text;
      this.text = '';
    }
    const run = parts.join('');
    this.joined.push(this.encodeRuns ? utf8Of(run) : run);
    pieces.length = 0;
    this.strings.length = 0;
    hashes.length = 0;
  }

  /** Works on in slices, with a turn of the event loop before each, until done. */
  async resume(): Promise<void> {
    this.encodeRuns = true;
    const joined = this.joined;
    for (let i = 0; i < joined.length; i++) {
      const run = joined[i]!;
      if (typeof run === 'string') joined[i] = utf8Of(run);
    }
    do await turn();
    while (!this.finished());
  }

  private sliceUsed(): boolean {
    return performance.now() - this.sliceStart > this.sliceMs;
  }

  /** Walks on: true when the walk is over, 'flush' when FLUSH_EVERY strings wait, false when the slice is used up. */
  private walk(): boolean | 'flush' {
    const stack = this.stack;
    let count = 0;
    while (stack.length > 0) {
      if (this.strings.length >= FLUSH_EVERY) return 'flush';
      if (++count % CHECK_EVERY === 0 && this.sliceUsed()) return false;
      const frame = stack[stack.length - 1]!;
      if (frame.scan) {
        const done = frame.scan.reading.run(() => this.strings.length >= FLUSH_EVERY || this.sliceUsed());
        if (done === false) {
          if (this.strings.length >= FLUSH_EVERY) return 'flush';
          return false;
        }
        stack.pop();
        if (done === undefined) {
          // The text cannot give the walk's rendering: the plain value is walked instead.
          const { mark, source } = frame.scan;
          if (mark.flushes !== this.joined.length) {
            // Runs already joined hold text from the scan: the pass begins again, walking this
            // one's plain value from the start (a backend's text that is not JSON, or a key JSON
            // would reorder: rare).
            this.walkPlain.add(source);
            this.begin();
            continue;
          }
          this.rollback(mark);
          const plain = jsonValue(source.toJSON());
          this.write(omitted(plain) ? null : plain, frame.key);
        }
        continue;
      }
      if (frame.items) {
        if (frame.next === frame.items.length) {
          this.text += ']';
          stack.pop();
          continue;
        }
        if (frame.next > 0) this.text += ',';
        const item = jsonValue(frame.items[frame.next++]);
        // JSON writes null for what it cannot write in an array.
        if (omitted(item)) this.text += 'null';
        else this.write(item, frame.key);
      } else {
        const keys = frame.keys!;
        if (frame.next === keys.length) {
          this.text += '}';
          stack.pop();
          continue;
        }
        const key = keys[frame.next++]!;
        const value = jsonValue(frame.object![key]);
        // JSON leaves out a member it cannot write.
        if (omitted(value)) continue;
        this.text += (frame.wrote ? ',' : '') + this.memberName(key);
        frame.wrote = true;
        this.write(value, key);
      }
    }
    return true;
  }

  private memberName(key: string): string {
    let name = this.memberNames.get(key);
    if (name === undefined) {
      name = `${JSON.stringify(key)}:`;
      this.memberNames.set(key, name);
    }
    return name;
  }

  raw(text: string): void {
    this.text += text;
  }

  /**
   * A string value: its hash, or itself under a key the mount exempts (and on a device that logs
   * raw). An AsciiText is hashed from its bytes, which are its UTF-8; written raw, it is made a string.
   */
  string(value: string | AsciiText, key: string | undefined): void {
    const hmac = this.hmac;
    if (hmac && !(key !== undefined && this.skip.has(key))) {
      // The hash goes between the quotes; it is hex after its prefix, so it needs no escaping.
      if (value.length === 0) {
        this.text += `"${hmac.emptyHash}"`;
        return;
      }
      this.pieces.push(this.text + OPEN_HASH);
      this.strings.push(value);
      this.text = '"';
    } else {
      this.text += typeof value === 'string' ? JSON.stringify(value) : `"${value.toString()}"`;
    }
  }

  private rollback(mark: Mark): void {
    this.text = mark.text;
    this.pieces.length = mark.pieces;
    this.strings.length = mark.strings;
    this.hashes.length = Math.min(this.hashes.length, mark.strings);
  }

  /** Writes `node` (as jsonValue left it): scalars at once; a container is opened and its children written by `walk`. */
  private write(node: unknown, key: string | undefined): void {
    if (typeof node === 'string' || node instanceof AsciiText) {
      this.string(node, key);
    } else if (node instanceof JsonText && this.walkPlain.has(node)) {
      const plain = jsonValue(node.toJSON());
      this.write(omitted(plain) ? null : plain, key);
    } else if (node instanceof JsonText) {
      const mark = { text: this.text, pieces: this.pieces.length, strings: this.strings.length, flushes: this.joined.length };
      this.stack.push({ scan: { reading: new TextScan(node.pieces, key, this), source: node, mark }, items: undefined, object: undefined, keys: undefined, key, next: 0, wrote: false });
    } else if (typeof node === 'number') {
      this.text += Number.isFinite(node) ? String(node) : 'null';
    } else if (node === null || typeof node === 'boolean') {
      this.text += String(node);
    } else if (typeof node === 'bigint') {
      this.text += `"${node.toString()}"`;
    } else if (Array.isArray(node)) {
      this.text += '[';
      this.stack.push({ items: node, object: undefined, keys: undefined, key, next: 0, wrote: false });
    } else {
      const object = node as Record<string, unknown>;
      this.text += '{';
      this.stack.push({ items: undefined, object, keys: Object.keys(object), key, next: 0, wrote: false });
    }
  }

  private hash(): boolean {
    if (!this.hmac) return true;
    const hmac = this.hmac;
    const { strings, hashes } = this;
    while (hashes.length < strings.length) {
      const at = hashes.length;
      if (isLarge(strings[at]!)) {
        if (!this.feedLarge(hmac, strings[at]!)) return false;
        hashes.push(this.large!.hmac.digest('hex'));
        this.large = undefined;
      } else {
        let end = at;
        while (end < strings.length && end - at < HASH_CHUNK && !isLarge(strings[end]!)) end++;
        const hex = hmac.hexDigests((at === 0 && end === strings.length ? strings : strings.slice(at, end)) as string[]);
        for (let i = 0; i < end - at; i++) hashes.push(hex.slice(i * HEX_DIGITS, (i + 1) * HEX_DIGITS));
      }
      if (hashes.length < strings.length && this.sliceUsed()) return false;
    }
    return true;
  }

  /** Feeds a large string to its HMAC in pieces; false when the slice ran out first (it goes on from there). */
  private feedLarge(hmac: AuditHmac, text: string | AsciiText): boolean {
    const large = (this.large ??= { hmac: hmac.incremental(), at: 0 });
    if (text instanceof AsciiText) return this.feedBytes(large, text);
    while (large.at < text.length) {
      let end = Math.min(text.length, large.at + LARGE_STRING);
      // Never cut between the two halves of a surrogate pair: each piece is encoded as UTF-8 alone.
      const last = text.charCodeAt(end - 1);
      if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--;
      large.hmac.update(text.slice(large.at, end), 'utf8');
      large.at = end;
      if (large.at < text.length && this.sliceUsed()) return false;
    }
    return true;
  }

  /** feedLarge of an AsciiText: its bytes, LARGE_STRING at a time, `large.at` counting across its runs. */
  private feedBytes(large: { readonly hmac: Hmac; at: number }, text: AsciiText): boolean {
    let offset = 0;
    for (const run of text.byteRuns()) {
      while (large.at < offset + run.length) {
        const from = large.at - offset;
        const to = Math.min(run.length, from + LARGE_STRING);
        large.hmac.update(run.subarray(from, to));
        large.at = offset + to;
        if (large.at < text.length && this.sliceUsed()) return false;
      }
      offset += run.length;
    }
    return true;
  }
}

/** Whether a string is hashed on its own, in pieces: a long one, and every AsciiText. */
function isLarge(value: string | AsciiText): boolean {
  return typeof value !== 'string' || value.length > LARGE_STRING;
}

/**
 * What JSON writes for `node`: bytes as base64, an object's toJSON() (a Date's ISO text); anything
 * else as it is. A JsonText stays itself: its text is read rather than its plain value made.
 */
function jsonValue(node: unknown): unknown {
  if (node === null || typeof node !== 'object' || node instanceof JsonText || node instanceof AsciiText) return node;
  if (node instanceof Uint8Array) return Buffer.from(node.buffer, node.byteOffset, node.byteLength).toString('base64');
  const json = (node as { toJSON?: () => unknown }).toJSON;
  return typeof json === 'function' ? json.call(node) : node;
}

/** JSON cannot write it: left out of an object, null in an array. */
function omitted(node: unknown): boolean {
  return node === undefined || typeof node === 'function' || typeof node === 'symbol';
}
