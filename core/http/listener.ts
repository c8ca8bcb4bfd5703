/** Binds the koa app to a TCP (or TLS) listener, through the LIST-verb stream of list-method.ts. */
import http from 'node:http';
import net from 'node:net';
import tls from 'node:tls';
import { readFileSync } from 'node:fs';
import type { Duplex } from 'node:stream';
import type Koa from 'koa';
import { ListVerbStream } from './list-method.js';

export interface ListenerOptions {
  readonly host: string;
  readonly port: number;
  /** PEM files; both or neither. */
  readonly tlsCertFile?: string;
  readonly tlsKeyFile?: string;
  /** Time for a client to send a request's headers, ms (Vault's http_read_header_timeout); 0 = none. */
  readonly readHeaderTimeoutMs?: number;
  /** Time for a client to send a whole request, headers and body, ms (Vault's http_read_timeout); 0 = none. */
  readonly readTimeoutMs?: number;
}

export const DEFAULT_READ_HEADER_TIMEOUT_MS = 10_000;
export const DEFAULT_READ_TIMEOUT_MS = 30_000;

export interface Listener {
  /** `http://127.0.0.1:8200` or `https://…`. */
  readonly address: string;
  readonly port: number;
  close(): Promise<void>;
}

export async function listen(app: Koa, options: ListenerOptions): Promise<Listener> {
  const requestTimeout = options.readTimeoutMs ?? DEFAULT_READ_TIMEOUT_MS;
  let headersTimeout = options.readHeaderTimeoutMs ?? DEFAULT_READ_HEADER_TIMEOUT_MS;
  // Node refuses a header timeout above the request timeout; the whole request bounds its headers anyway.
  if (requestTimeout > 0 && (headersTimeout === 0 || headersTimeout > requestTimeout)) headersTimeout = requestTimeout;
  const shortest = Math.min(...[headersTimeout, requestTimeout].filter((t) => t > 0));
  const httpServer = http.createServer(
    {
      keepAliveTimeout: 5_000,
      headersTimeout,
      requestTimeout,
      // Node checks the timeouts on this interval (30 s by default), so it bounds how late a slow client is cut.
      connectionsCheckingInterval: Number.isFinite(shortest) ? Math.min(1_000, Math.max(25, Math.floor(shortest / 4))) : 30_000,
    },
    app.callback(),
  );
  httpServer.on('clientError', answerClientError);
  // Node starts tracking connections for those timeouts (and for closeIdleConnections) when the
  // server emits 'listening'. This one never listens itself (sockets arrive through 'connection'),
  // so it is told here; without it a client sending headers or a body byte by byte is never cut off.
  httpServer.emit('listening');
  const sockets = new Set<net.Socket>();
  const onSocket = (socket: net.Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    httpServer.emit('connection', new ListVerbStream(socket, headersTimeout));
  };
  const useTls = Boolean(options.tlsCertFile);
  const server: net.Server = useTls
    ? tls.createServer({ cert: readFileSync(options.tlsCertFile!), key: readFileSync(options.tlsKeyFile!) }, onSocket)
    : net.createServer(onSocket);

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = server.address() as net.AddressInfo;
  const hostText = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;
  return {
    address: `${useTls ? 'https' : 'http'}://${hostText}:${bound.port}`,
    port: bound.port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Stops the timeout checks; the server was never bound, so there is nothing else to close.
        httpServer.close();
        httpServer.closeIdleConnections();
        // Give in-flight requests a moment, then cut what is left.
        setTimeout(() => sockets.forEach((s) => s.destroy()), 2_000).unref();
      }),
  };
}

/** Node's parser errors that have their own status; any other malformed request is a 400. */
const CLIENT_ERROR_STATUS: Readonly<Record<string, readonly [number, string, string]>> = {
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large', 'request headers too large'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout', 'request not received in time'],
};

/**
 * A request Node's HTTP parser refuses (malformed, headers too large, sent too slowly) never
 * reaches the app; it is answered here in the same JSON error envelope, then the connection is
 * closed, as Node does by default. Nothing is written once a response has started.
 */
function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  const pending = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (socket.writable && !pending?.headersSent) {
    const [status, reason, message] = CLIENT_ERROR_STATUS[err.code ?? ''] ?? [400, 'Bad Request', 'malformed HTTP request'];
    const body = JSON.stringify({ errors: [message] });
    socket.write(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nCache-Control: no-store\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(err);
}
