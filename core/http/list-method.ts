/**
 * Accepts the `LIST` verb, which Vault clients (node-vault's list(), `curl -X LIST`) send but
 * Node's HTTP parser rejects before any handler runs (it knows a fixed set of methods). Each
 * connection goes through a Duplex that rewrites a request line `LIST <path> HTTP/1.x` into
 * `GET <path>` plus the header `X-Keywarden-Method: LIST`, which the HTTP layer maps back to a
 * list. Node documents injecting any Duplex through the server's 'connection' event.
 *
 * Hand-written because no maintained library adds methods to Node's parser. Request starts are
 * known without parsing HTTP: the first bytes of a connection, and the first bytes after a response
 * finished (clients send the next request on a keep-alive connection only after the previous
 * response). Pipelined LIST requests are not recognized and get the parser's 400.
 */
import { Duplex } from 'node:stream';
import type { Socket } from 'node:net';

export const METHOD_HEADER = 'x-keywarden-method';
const LIST_PREFIX = Buffer.from('LIST ');
/** A request line longer than this is not buffered further (the parser will refuse it). */
const MAX_REQUEST_LINE = 64 * 1024;

export class ListVerbStream extends Duplex {
  private atRequestStart = true;
  private pending: Buffer | undefined;

  constructor(private readonly inner: Socket) {
    super({ allowHalfOpen: true });
    // Node's HTTP server turns Nagle off on the sockets it gets; through this wrapper it would not
    // reach the real socket, and Nagle with delayed ACKs adds ~40 ms to every small response.
    inner.setNoDelay(true);
    inner.on('data', (chunk: Buffer) => this.onData(chunk));
    inner.on('end', () => {
      if (this.pending) this.push(this.pending);
      this.pending = undefined;
      this.push(null);
    });
    inner.on('error', (err) => this.destroy(err));
    inner.on('close', () => this.destroy());
    inner.on('timeout', () => this.emit('timeout'));
    inner.on('drain', () => this.emit('drain'));
  }

  /** Called when a response has finished: the next bytes begin a new request. */
  expectRequest(): void {
    this.atRequestStart = true;
  }

  private onData(chunk: Buffer): void {
    let data = chunk;
    if (this.pending) {
      data = Buffer.concat([this.pending, chunk]);
      this.pending = undefined;
    }
    if (this.atRequestStart) {
      const head = data.subarray(0, LIST_PREFIX.length);
      if (LIST_PREFIX.subarray(0, head.length).equals(head)) {
        const lineEnd = data.indexOf('\r\n');
        if (lineEnd < 0 && data.length < MAX_REQUEST_LINE) {
          this.pending = data;
          return;
        }
        if (lineEnd >= 0) data = rewrite(data, lineEnd);
      }
      this.atRequestStart = false;
    }
    if (!this.push(data)) this.inner.pause();
  }

  override _read(): void {
    this.inner.resume();
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

function rewrite(data: Buffer, lineEnd: number): Buffer {
  const rest = data.subarray(LIST_PREFIX.length, lineEnd);
  return Buffer.concat([Buffer.from('GET '), rest, Buffer.from(`\r\n${METHOD_HEADER}: LIST`), data.subarray(lineEnd)]);
}
