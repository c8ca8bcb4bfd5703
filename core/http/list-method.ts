/**
 * Accepts the `LIST` verb, which Vault clients (node-vault's list(), `curl -X LIST`) send but
 * Node's HTTP parser rejects before any handler runs (it knows a fixed set of methods). Each
 * connection goes through a Duplex that rewrites a request line `LIST <path> HTTP/1.x` into
 * `GET <path>` plus the header `X-Keywarden-Method: LIST <marker>`, which the HTTP layer maps back
 * to a list (`listedMethod`). The marker is random per process, so only this stream can set the
 * header: a client sending it itself is refused, never taken for a LIST. Node documents injecting any Duplex through the server's 'connection' event.
 *
 * Hand-written because no maintained library adds methods to Node's parser. Bytes are rewritten
 * only where Node's parser (llhttp) reads the start of a request. Anywhere else they are a body,
 * and rewriting a body that begins with `LIST ` would make the two disagree on where requests
 * start (request smuggling). So the stream follows the framing llhttp applies, whatever the app
 * reads or answers and whenever it answers: empty lines before a request are skipped, a head ends
 * at its first empty line, its body is Content-Length bytes or chunked. Bodies are skipped by
 * counting; a head is searched for its end and read once, whole. Pipelined and split requests are
 * found wherever they fall in the byte stream.
 *
 * What it cannot frame as surely as llhttp (CONNECT, Upgrade, Content-Length with
 * Transfer-Encoding, a repeated or non-decimal Content-Length, a coding other than `chunked`, a
 * line not ended by CRLF, a folded header, a head over Node's size limit) stops the rewriting for
 * the rest of the connection: bytes then pass untouched and Node's parser alone decides. It
 * refuses most of these with a 400 and closes the connection; a later LIST on a connection it
 * keeps gets the parser's 400.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { Duplex } from 'node:stream';
import { maxHeaderSize } from 'node:http';
import type { Socket } from 'node:net';
import { BadRequestError } from '../errors.js';

export const METHOD_HEADER = 'x-keywarden-method';
/** The header's value this stream writes; a client cannot know it. */
const LIST_MARKER = Buffer.from(`LIST ${randomBytes(16).toString('hex')}`);

const CR = 0x0d;
const LF = 0x0a;
const CRLF = Buffer.from('\r\n');
const HEAD_END = Buffer.from('\r\n\r\n');
const LIST_PREFIX = Buffer.from('LIST ');
const GET = Buffer.from('GET ');
const LIST_HEADER_LINE = Buffer.concat([Buffer.from(`\r\n${METHOD_HEADER}: `), LIST_MARKER]);
/** The longest head, chunk-size line or trailer line followed; Node refuses a longer head itself (431). */
const MAX_ELEMENT = maxHeaderSize;

const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
/** An HTTP/1.x request line, then `name:value` lines: a bare CR or LF, or a folded line, fails it. */
const HEAD_SHAPE = new RegExp(`^${TOKEN} [^\\x00-\\x20\\x7f]+ HTTP/1\\.[01](?:\\r\\n${TOKEN}:[^\\r\\n]*)*$`);
/** A header that bears on framing; most heads have none. */
const FRAMING_HEADER = /\r\n(?:content-length|transfer-encoding|upgrade):/i;
const LIST_LINE = /^LIST [^\x00-\x20\x7f]+ HTTP\/1\.[01]$/;
const TRAILER_LINE = new RegExp(`^${TOKEN}:[^\\r\\n]*$`);
const CHUNK_SIZE_LINE = /^([0-9A-Fa-f]{1,12})(?:;[^\r\n]*)?$/;
const CONTENT_LENGTH = /^[ \t]*(\d{1,15})[ \t]*$/;
const CHUNKED = /^[ \t]*chunked[ \t]*$/;
/** What headerValue answers for a header given more than once. */
const REPEATED = Symbol('repeated');

/**
 * What the next bytes are. `request`: the start of a request (or empty lines before it);
 * `chunk-end`: the CRLF after a chunk's data; `unframed`: rewriting has stopped for good.
 */
type Framing = 'request' | 'head' | 'body' | 'chunk-size' | 'chunk-data' | 'chunk-end' | 'trailer' | 'unframed';

/** The element being read continues in the next chunk. */
const NEED_MORE = -1;

/**
 * The request's method: LIST when this stream rewrote it, else as received. The internal header is
 * taken off the request, so it reaches no audit entry, backend or forwarded copy; a client that
 * sent it itself gets a 400 rather than a request run with another method than it asked for.
 */
export function listedMethod(method: string, headers: IncomingHttpHeaders): string {
  const value = headers[METHOD_HEADER];
  if (value === undefined) return method;
  delete headers[METHOD_HEADER];
  const given = Buffer.from(typeof value === 'string' ? value : value.join(', '));
  if (method === 'GET' && given.length === LIST_MARKER.length && timingSafeEqual(given, LIST_MARKER)) return 'LIST';
  throw new BadRequestError('header X-Keywarden-Method is internal to Keywarden; send the LIST method, or GET with ?list=true');
}

export class ListVerbStream extends Duplex {
  private framing: Framing = 'request';
  /** Body or chunk-data bytes still to skip; in `chunk-end`, how many bytes of its CRLF. */
  private remaining = 0;
  /** The start of an unfinished element (LIST request line, head, chunk-size or trailer line). */
  private partial: Buffer | undefined;
  /** Whether `partial` is held back (an unfinished LIST request line) rather than passed on. */
  private partialHeld = false;
  /** When the held request line began (ms), or 0. */
  private heldSince = 0;
  /** False once stopReading was called. */
  private reading = true;

  /**
   * @param headersTimeoutMs the server's time for a request's headers (0: none). Node's parser
   *   does not see a held request line, so its own timer would not start on a keep-alive
   *   connection; a line trickled in for longer is given to the parser as it is, which refuses it.
   */
  constructor(
    private readonly inner: Socket,
    private readonly headersTimeoutMs = 0,
  ) {
    super({ allowHalfOpen: true });
    // Node's HTTP server turns Nagle off on the sockets it gets; through this wrapper it would not
    // reach the real socket, and Nagle with delayed ACKs adds ~40 ms to every small response.
    inner.setNoDelay(true);
    inner.on('data', (chunk: Buffer) => this.onData(chunk));
    inner.on('end', () => {
      if (this.partialHeld) this.push(this.partial);
      this.partial = undefined;
      this.push(null);
    });
    inner.on('error', (err) => this.destroy(err));
    inner.on('close', () => this.destroy());
    inner.on('timeout', () => this.emit('timeout'));
    inner.on('drain', () => this.emit('drain'));
  }

  private onData(chunk: Buffer): void {
    const current = this.framing;
    if (current === 'unframed') return this.pass(chunk);
    if ((current === 'body' || current === 'chunk-data') && chunk.length < this.remaining) {
      this.remaining -= chunk.length;
      return this.pass(chunk);
    }
    let data = chunk;
    /** Where an element's terminator may start: it may straddle the previous chunk and this one. */
    let searchFrom = 0;
    /** Bytes of `data` before this index are passed on already (or replaced). */
    let passed = 0;
    if (this.partial) {
      data = Buffer.concat([this.partial, chunk]);
      searchFrom = Math.max(0, this.partial.length - (HEAD_END.length - 1));
      passed = this.partialHeld ? 0 : this.partial.length;
      this.partial = undefined;
      this.partialHeld = false;
    }
    let at = 0;
    while (at < data.length) {
      const framing = this.framing;
      if (framing === 'unframed') break;
      let next: number;
      if (framing === 'request') {
        at = afterEmptyLines(data, at);
        if (at === data.length) break;
        next = this.readRequestLine(data, at, searchFrom);
        if (next !== NEED_MORE) this.heldSince = 0;
        if (next > at) {
          this.pass(Buffer.concat([data.subarray(passed, at), GET, data.subarray(at + LIST_PREFIX.length, next), LIST_HEADER_LINE]));
          passed = next;
          next = at;
        }
      } else {
        next = this.readElement(framing, data, at, Math.max(at, searchFrom));
      }
      if (next === NEED_MORE) {
        if (data.length - at > MAX_ELEMENT || (this.framing === 'request' && this.heldTooLong())) {
          this.framing = 'unframed';
          break;
        }
        this.partial = data.subarray(at);
        this.partialHeld = this.framing === 'request';
        if (this.partialHeld) data = data.subarray(0, at);
        break;
      }
      at = next;
      searchFrom = 0;
    }
    if (passed < data.length) this.pass(passed === 0 ? data : data.subarray(passed));
  }

  /**
   * At a request start: NEED_MORE while it may still become a LIST request line; the end of a
   * whole LIST request line to rewrite; otherwise `at`, and the head is read as any other.
   */
  private readRequestLine(data: Buffer, at: number, searchFrom: number): number {
    const seen = Math.min(data.length - at, LIST_PREFIX.length);
    if (data[at] !== LIST_PREFIX[0] || data.compare(LIST_PREFIX, 0, seen, at, at + seen) !== 0) {
      this.framing = 'head';
      return at;
    }
    if (seen < LIST_PREFIX.length) return NEED_MORE;
    const lineEnd = indexOfCrlf(data, Math.max(at, searchFrom));
    if (lineEnd < 0) return NEED_MORE;
    // Any other request line starting with LIST is left to the parser, which refuses it.
    this.framing = LIST_LINE.test(data.toString('latin1', at, lineEnd)) ? 'head' : 'unframed';
    return this.framing === 'head' ? lineEnd : at;
  }

  /** Reads one element after a request start; returns where the next one starts, or NEED_MORE. */
  private readElement(framing: Exclude<Framing, 'request' | 'unframed'>, data: Buffer, at: number, searchFrom: number): number {
    switch (framing) {
      case 'head': {
        const end = indexOfHeadEnd(data, searchFrom);
        if (end < 0) return NEED_MORE;
        this.framing = this.bodyFraming(data.toString('latin1', at, end));
        return end + HEAD_END.length;
      }
      case 'body':
      case 'chunk-data': {
        const skipped = Math.min(this.remaining, data.length - at);
        this.remaining -= skipped;
        if (this.remaining === 0) {
          if (framing === 'body') {
            this.framing = 'request';
          } else {
            this.framing = 'chunk-end';
            this.remaining = CRLF.length;
          }
        }
        return at + skipped;
      }
      case 'chunk-end': {
        if (data[at] !== CRLF[CRLF.length - this.remaining]) this.framing = 'unframed';
        else if (--this.remaining === 0) this.framing = 'chunk-size';
        return at + 1;
      }
      case 'chunk-size': {
        const end = indexOfCrlf(data, searchFrom);
        if (end < 0) return NEED_MORE;
        const size = CHUNK_SIZE_LINE.exec(data.toString('latin1', at, end));
        if (!size) {
          this.framing = 'unframed';
        } else {
          this.remaining = parseInt(size[1]!, 16);
          this.framing = this.remaining === 0 ? 'trailer' : 'chunk-data';
        }
        return end + CRLF.length;
      }
      case 'trailer': {
        const end = indexOfCrlf(data, searchFrom);
        if (end < 0) return NEED_MORE;
        if (end === at) this.framing = 'request';
        else if (!TRAILER_LINE.test(data.toString('latin1', at, end))) this.framing = 'unframed';
        return end + CRLF.length;
      }
    }
  }

  /**
   * How the body after a head is framed, read as llhttp reads it; `unframed` where that is not
   * certain. Sets `remaining` for a Content-Length body.
   */
  private bodyFraming(head: string): Framing {
    if (!HEAD_SHAPE.test(head) || head.startsWith('CONNECT ')) return 'unframed';
    if (!FRAMING_HEADER.test(head)) return 'request';
    const lower = head.toLowerCase();
    // After an upgrade Node hands the connection over, or (with no listener) stops parsing it.
    if (lower.includes('\r\nupgrade:')) return 'unframed';
    const length = headerValue(lower, '\r\ncontent-length:');
    const coding = headerValue(lower, '\r\ntransfer-encoding:');
    if (length === REPEATED || coding === REPEATED) return 'unframed';
    if (coding !== undefined) {
      // Chunked framing is read only for HTTP/1.1; Node closes an HTTP/1.0 connection after it.
      const http11 = head.startsWith('HTTP/1.1\r\n', head.indexOf('\r\n') - 'HTTP/1.1'.length);
      return length === undefined && http11 && CHUNKED.test(coding) ? 'chunk-size' : 'unframed';
    }
    if (length === undefined) return 'request';
    const digits = CONTENT_LENGTH.exec(length);
    if (!digits) return 'unframed';
    this.remaining = Number(digits[1]);
    return this.remaining === 0 ? 'request' : 'body';
  }

  private heldTooLong(): boolean {
    if (this.headersTimeoutMs <= 0) return false;
    const now = Date.now();
    if (this.heldSince === 0) this.heldSince = now;
    return now - this.heldSince > this.headersTimeoutMs;
  }

  private pass(data: Buffer): void {
    if (this.reading && data.length > 0 && !this.push(data)) this.inner.pause();
  }

  /**
   * Reads nothing more from the connection, whoever asks: Node's HTTP server resumes a socket to
   * drain a request body nobody read, and the rest of a refused upload would cost the server as
   * much as the client cares to send (app.ts closes the connection shortly after).
   */
  stopReading(): void {
    this.reading = false;
    this.inner.pause();
  }

  override _read(): void {
    if (this.reading) this.inner.resume();
  }

  override _write(chunk: Buffer, encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.inner.write(chunk, encoding, callback);
  }

  /** Several queued writes (headers, body) reach the socket as one, like on a plain socket. */
  override _writev(chunks: Array<{ chunk: Buffer; encoding: BufferEncoding }>, callback: (error?: Error | null) => void): void {
    this.inner.cork();
    for (let i = 0; i < chunks.length - 1; i++) this.inner.write(chunks[i]!.chunk);
    this.inner.write(chunks[chunks.length - 1]!.chunk, callback);
    this.inner.uncork();
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.inner.end(callback);
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.inner.destroy(error ?? undefined);
    callback(error);
  }

  get remoteAddress(): string | undefined {
    return this.inner.remoteAddress;
  }
  get remotePort(): number | undefined {
    return this.inner.remotePort;
  }
  get remoteFamily(): string | undefined {
    return this.inner.remoteFamily;
  }
  get localAddress(): string | undefined {
    return this.inner.localAddress;
  }
  get localPort(): number | undefined {
    return this.inner.localPort;
  }
  get encrypted(): boolean {
    return (this.inner as Socket & { encrypted?: boolean }).encrypted === true;
  }
  setTimeout(ms: number, callback?: () => void): this {
    this.inner.setTimeout(ms);
    if (callback) this.once('timeout', callback);
    return this;
  }
  setNoDelay(noDelay?: boolean): this {
    this.inner.setNoDelay(noDelay);
    return this;
  }
  setKeepAlive(enable?: boolean, delay?: number): this {
    this.inner.setKeepAlive(enable, delay);
    return this;
  }
  ref(): this {
    this.inner.ref();
    return this;
  }
  unref(): this {
    this.inner.unref();
    return this;
  }
}

/**
 * Where the first CRLF at or after `from` starts, or -1. Searching for the LF byte and looking
 * back is several times faster in Node than an indexOf for a two-byte Buffer.
 */
function indexOfCrlf(data: Buffer, from: number): number {
  for (let lf = data.indexOf(LF, from + 1); lf >= 0; lf = data.indexOf(LF, lf + 1)) {
    if (data[lf - 1] === CR) return lf - 1;
  }
  return -1;
}

/** Where the first CRLF CRLF at or after `from` starts, or -1 (searched as indexOfCrlf is). */
function indexOfHeadEnd(data: Buffer, from: number): number {
  for (let lf = data.indexOf(LF, from + 3); lf >= 0; lf = data.indexOf(LF, lf + 1)) {
    if (data[lf - 1] === CR && data[lf - 2] === LF && data[lf - 3] === CR) return lf - 3;
  }
  return -1;
}

/** The value of a header in a lower-cased head whose shape is checked: one `\r\nname:` per line. */
function headerValue(lowerHead: string, breakAndName: string): string | typeof REPEATED | undefined {
  const start = lowerHead.indexOf(breakAndName);
  if (start < 0) return undefined;
  let end = lowerHead.indexOf('\r\n', start + breakAndName.length);
  if (end < 0) end = lowerHead.length;
  if (lowerHead.includes(breakAndName, end)) return REPEATED;
  return lowerHead.slice(start + breakAndName.length, end);
}

/** llhttp skips empty lines (CRLF or a bare LF) before a request line; so does the stream. */
function afterEmptyLines(data: Buffer, at: number): number {
  let i = at;
  while (i < data.length && (data[i] === CR || data[i] === LF)) i++;
  return i;
}

