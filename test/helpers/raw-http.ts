/**
 * HTTP/1.1 over a bare TCP socket, for tests of message framing: requests go out byte for byte,
 * in whatever writes the test chooses, and the answers are read back from the raw byte stream
 * (status line, headers, a body framed by Content-Length or chunked), so a response the server
 * should never have sent is counted rather than hidden by a client library.
 */
import net from 'node:net';

export interface RawHttpResponse {
  readonly status: number;
  /** Names lower-cased; a repeated header keeps its last value. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** The server sent bytes that are not an HTTP/1.1 response, or a deadline passed. */
export class RawHttpError extends Error {}

const HEAD_END = '\r\n\r\n';

export class RawHttpConnection {
  private received = Buffer.alloc(0);
  private ended = false;
  private wake: (() => void) | undefined;

  private constructor(private readonly socket: net.Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.received = Buffer.concat([this.received, chunk]);
      this.wake?.();
    });
    // A reset after the server's answer is how some refusals end; the bytes read so far still count.
    socket.on('error', () => undefined);
    socket.on('close', () => {
      this.ended = true;
      this.wake?.();
    });
  }

  static open(baseUrl: string): Promise<RawHttpConnection> {
    const url = new URL(baseUrl);
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host: url.hostname, port: Number(url.port), noDelay: true }, () => {
        socket.off('error', reject);
        resolve(new RawHttpConnection(socket));
      });
      socket.once('error', reject);
    });
  }

  /** One TCP write; resolves once the bytes are handed to the kernel. */
  write(data: string | Buffer): Promise<void> {
    return new Promise((resolve, reject) => this.socket.write(data, (err) => (err ? reject(err) : resolve())));
  }

  /** Whether the server has closed the connection (as far as read so far). */
  get closed(): boolean {
    return this.ended;
  }

  /**
   * The next response, skipping interim 1xx answers. A HEAD request's answer has headers only,
   * whatever its Content-Length says: the caller says when it reads one.
   */
  async next(options: { head?: boolean; timeoutMs?: number } = {}): Promise<RawHttpResponse> {
    const deadline = Date.now() + (options.timeoutMs ?? 5_000);
    for (;;) {
      const parsed = parseResponse(this.received, options.head === true, this.ended);
      if (parsed) {
        this.received = this.received.subarray(parsed.length);
        if (parsed.response.status >= 200) return parsed.response;
        continue;
      }
      if (this.ended) throw new RawHttpError(`connection closed with ${this.received.length} unread bytes: ${JSON.stringify(this.received.toString('latin1').slice(0, 200))}`);
      await this.waitForBytes(deadline);
    }
  }

  /**
   * Every response until the server closes the connection; `isHead(i)` says whether the i-th of
   * them answers a HEAD request.
   */
  async untilClosed(options: { isHead?: (index: number) => boolean; timeoutMs?: number } = {}): Promise<RawHttpResponse[]> {
    const deadline = Date.now() + (options.timeoutMs ?? 5_000);
    while (!this.ended) await this.waitForBytes(deadline);
    const responses: RawHttpResponse[] = [];
    while (this.received.length > 0) responses.push(await this.next({ head: options.isHead?.(responses.length) ?? false }));
    return responses;
  }

  close(): void {
    this.socket.destroy();
  }

  private waitForBytes(deadline: number): Promise<void> {
    const left = deadline - Date.now();
    if (left <= 0) return Promise.reject(new RawHttpError(`no complete answer in time; unread: ${JSON.stringify(this.received.toString('latin1').slice(0, 200))}`));
    return new Promise((resolve) => {
      const timer = setTimeout(done, left);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.wake = () => {
        this.wake = undefined;
        done();
      };
    });
  }
}

/** One response from the front of `bytes`, with how many bytes it took; undefined if it is not all there yet. */
function parseResponse(bytes: Buffer, head: boolean, ended: boolean): { response: RawHttpResponse; length: number } | undefined {
  const headEnd = bytes.indexOf(HEAD_END);
  if (headEnd < 0) return undefined;
  const [statusLine, ...headerLines] = bytes.toString('latin1', 0, headEnd).split('\r\n');
  const status = /^HTTP\/1\.[01] (\d{3}) /.exec(`${statusLine} `);
  if (!status) throw new RawHttpError(`not an HTTP/1.1 status line: ${JSON.stringify(statusLine)}`);
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const colon = line.indexOf(':');
    if (colon <= 0) throw new RawHttpError(`not a header line: ${JSON.stringify(line)}`);
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  const code = Number(status[1]);
  const bodyStart = headEnd + HEAD_END.length;
  const answer = (body: Buffer, length: number) => ({ response: { status: code, headers, body: body.toString('utf8') }, length });
  if (head || code < 200 || code === 204 || code === 304) return answer(Buffer.alloc(0), bodyStart);
  if (headers['transfer-encoding'] !== undefined) {
    if (headers['transfer-encoding'].toLowerCase() !== 'chunked') throw new RawHttpError(`unexpected Transfer-Encoding ${headers['transfer-encoding']}`);
    return readChunked(bytes, bodyStart, answer);
  }
  if (headers['content-length'] !== undefined) {
    const length = Number(headers['content-length']);
    if (!Number.isSafeInteger(length) || length < 0) throw new RawHttpError(`bad Content-Length ${headers['content-length']}`);
    return bytes.length >= bodyStart + length ? answer(bytes.subarray(bodyStart, bodyStart + length), bodyStart + length) : undefined;
  }
  // Neither: the body runs to the end of the connection.
  return ended ? answer(bytes.subarray(bodyStart), bytes.length) : undefined;
}

function readChunked<T>(bytes: Buffer, start: number, answer: (body: Buffer, length: number) => T): T | undefined {
  const pieces: Buffer[] = [];
  let at = start;
  for (;;) {
    const lineEnd = bytes.indexOf('\r\n', at);
    if (lineEnd < 0) return undefined;
    const size = parseInt(bytes.toString('latin1', at, lineEnd).split(';')[0]!, 16);
    if (!Number.isSafeInteger(size)) throw new RawHttpError(`bad chunk size line ${JSON.stringify(bytes.toString('latin1', at, lineEnd))}`);
    at = lineEnd + 2;
    if (size === 0) {
      const trailersEnd = bytes.indexOf('\r\n', at) === at ? at : bytes.indexOf(HEAD_END, at);
      if (trailersEnd < 0) return undefined;
      return answer(Buffer.concat(pieces), trailersEnd + (trailersEnd === at ? 2 : HEAD_END.length));
    }
    if (bytes.length < at + size + 2) return undefined;
    pieces.push(bytes.subarray(at, at + size));
    at += size + 2;
  }
}

export interface RawRequestSpec {
  readonly method: string;
  /** Sent as is. */
  readonly path: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** Bytes as written (a string is taken as latin1, one byte a character). */
  readonly body?: string | Buffer;
  /**
   * Chunked instead of Content-Length framing: the body is cut into chunks of these sizes (what
   * is left after them is one more chunk).
   */
  readonly chunks?: readonly number[];
  /** Written after each chunk size, `;` included. */
  readonly chunkExtension?: string;
  /** Header lines after the last chunk, each ending in CRLF. */
  readonly trailers?: string;
  /** Asks the server to close the connection after answering. */
  readonly close?: boolean;
}

/** The bytes of an HTTP/1.1 request with a Host header, framed by Content-Length or chunked. */
export function rawRequest(spec: RawRequestSpec): Buffer {
  const body = spec.body === undefined ? undefined : typeof spec.body === 'string' ? Buffer.from(spec.body, 'latin1') : spec.body;
  let head = `${spec.method} ${spec.path} HTTP/1.1\r\nHost: keywarden\r\n`;
  for (const [name, value] of Object.entries(spec.headers ?? {})) head += `${name}: ${value}\r\n`;
  if (spec.close) head += 'Connection: close\r\n';
  if (body === undefined) return Buffer.from(`${head}\r\n`, 'latin1');
  if (!spec.chunks) return Buffer.concat([Buffer.from(`${head}Content-Length: ${body.length}\r\n\r\n`, 'latin1'), body]);
  const pieces: Buffer[] = [Buffer.from(`${head}Transfer-Encoding: chunked\r\n\r\n`, 'latin1')];
  let at = 0;
  for (const size of [...spec.chunks, body.length]) {
    const chunk = body.subarray(at, at + size);
    at += chunk.length;
    if (chunk.length > 0) pieces.push(Buffer.from(`${chunk.length.toString(16)}${spec.chunkExtension ?? ''}\r\n`, 'latin1'), chunk, Buffer.from('\r\n'));
  }
  pieces.push(Buffer.from(`0${spec.chunkExtension ?? ''}\r\n${spec.trailers ?? ''}\r\n`, 'latin1'));
  return Buffer.concat(pieces);
}
