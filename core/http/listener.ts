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
  /** Time a keep-alive connection may wait for its next request, ms (Vault's http_idle_timeout); 0 = Node's default. */
  readonly idleTimeoutMs?: number;
  /** Time from a request's arrival until its response is written, ms (Vault's http_write_timeout); 0 = none. */
  readonly writeTimeoutMs?: number;
  /** The oldest TLS version accepted; Node's default (TLS 1.2) otherwise. */
  readonly tlsMinVersion?: 'TLSv1.2' | 'TLSv1.3';
  /**
   * Client certificates: never asked for (the default here), requested but optional and unverified
   * (Vault's default), or required and verified against `tlsClientCaFile` (Node's root CAs without it).
   */
  readonly tlsClientCertificates?: 'none' | 'request' | 'require';
  /** PEM CA certificates a required client certificate must chain to. */
  readonly tlsClientCaFile?: string;
  /**
   * A unix socket to listen on instead of `host:port`, this process's own even in a cluster
   * worker (the worker's forwarding address, core/cluster/worker-link.ts).
   */
  readonly socketPath?: string;
}

/** The files a TLS listener reads its certificate, key and client CAs from. */
export type TlsFiles = Required<Pick<ListenerOptions, 'tlsCertFile' | 'tlsKeyFile'>> & Pick<ListenerOptions, 'tlsClientCaFile'>;

/** How long close() lets in-flight requests finish before cutting their connections. */
export const CLOSE_GRACE_MS = 2_000;

export const DEFAULT_READ_HEADER_TIMEOUT_MS = 10_000;
export const DEFAULT_READ_TIMEOUT_MS = 30_000;
/** Vault's defaults (https://developer.hashicorp.com/vault/docs/configuration/listener/tcp). */
export const DEFAULT_IDLE_TIMEOUT_MS = 300_000;
export const DEFAULT_WRITE_TIMEOUT_MS = 0;

export interface Listener {
  /** `http://127.0.0.1:8200` or `https://…`. */
  readonly address: string;
  readonly port: number;
  close(): Promise<void>;
  /**
   * Stops accepting connections, closes idle ones, lets requests in flight finish (their responses
   * close the connection), and after `timeoutMs` cuts what is left. Resolves with how many were cut.
   */
  drain(timeoutMs: number): Promise<number>;
  /**
   * TLS only: reads the certificate, key and client CA files again (the same ones, or `files`) for
   * new connections; open ones keep theirs. Throws if a file cannot be read or the key does not
   * match the certificate, and then the previous ones stay in use.
   */
  reloadTls(files?: TlsFiles): void;
}

export async function listen(app: Koa, options: ListenerOptions): Promise<Listener> {
  const requestTimeout = options.readTimeoutMs ?? DEFAULT_READ_TIMEOUT_MS;
  let headersTimeout = options.readHeaderTimeoutMs ?? DEFAULT_READ_HEADER_TIMEOUT_MS;
  // Node refuses a header timeout above the request timeout; the whole request bounds its headers anyway.
  if (requestTimeout > 0 && (headersTimeout === 0 || headersTimeout > requestTimeout)) headersTimeout = requestTimeout;
  const shortest = Math.min(...[headersTimeout, requestTimeout].filter((t) => t > 0));
  const handle = app.callback();
  const httpServer = http.createServer(
    {
      keepAliveTimeout: idleTimeoutOf(options, requestTimeout, headersTimeout),
      headersTimeout,
      requestTimeout,
      // Node checks the timeouts on this interval (30 s by default), so it bounds how late a slow client is cut.
      connectionsCheckingInterval: Number.isFinite(shortest) ? Math.min(1_000, Math.max(25, Math.floor(shortest / 4))) : 30_000,
    },
    // koa's handler answers its own errors (ctx.onerror), so the promise it returns never rejects.
    (req, res) => void handle(req, res),
  );
  httpServer.on('clientError', answerClientError);
  let draining = false;
  const inFlight = new Set<http.ServerResponse>();
  httpServer.on('request', (_req: http.IncomingMessage, res: http.ServerResponse) => {
    // While draining, a finished response closes its connection instead of keeping it for another request.
    if (draining) res.shouldKeepAlive = false;
    inFlight.add(res);
    res.on('close', () => inFlight.delete(res));
  });
  enforceWriteTimeout(httpServer, options.writeTimeoutMs ?? DEFAULT_WRITE_TIMEOUT_MS);
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
  let tlsFiles: TlsFiles | undefined = options.tlsCertFile
    ? { tlsCertFile: options.tlsCertFile, tlsKeyFile: options.tlsKeyFile!, ...(options.tlsClientCaFile ? { tlsClientCaFile: options.tlsClientCaFile } : {}) }
    : undefined;
  const secureContext = (files: TlsFiles): tls.SecureContextOptions => ({
    cert: readFileSync(files.tlsCertFile),
    key: readFileSync(files.tlsKeyFile),
    ...(files.tlsClientCaFile ? { ca: readFileSync(files.tlsClientCaFile) } : {}),
    ...(options.tlsMinVersion ? { minVersion: options.tlsMinVersion } : {}),
  });
  const clientCertificates = options.tlsClientCertificates ?? 'none';
  const server: net.Server = tlsFiles
    ? tls.createServer(
        { ...secureContext(tlsFiles), requestCert: clientCertificates !== 'none', rejectUnauthorized: clientCertificates === 'require' },
        onSocket,
      )
    : net.createServer(onSocket);

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    const listening = () => {
      server.off('error', reject);
      resolve();
    };
    if (options.socketPath) server.listen({ path: options.socketPath, exclusive: true }, listening);
    else server.listen(options.port, options.host, listening);
  });
  const bound = options.socketPath ? { address: '', family: '', port: 0 } : (server.address() as net.AddressInfo);
  const hostText = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;
  const drain = (timeoutMs: number) =>
    new Promise<number>((resolve) => {
      draining = true;
      for (const res of inFlight) if (!res.headersSent) res.shouldKeepAlive = false;
      let cut = 0;
      // A keep-alive connection turns idle when its response is done; it is closed as soon as it does.
      const closeIdle = setInterval(() => httpServer.closeIdleConnections(), 50).unref();
      const deadline = setTimeout(() => {
        cut = sockets.size;
        sockets.forEach((s) => s.destroy());
      }, timeoutMs).unref();
      server.close(() => {
        clearInterval(closeIdle);
        clearTimeout(deadline);
        resolve(cut);
      });
      // Stops the timeout checks and closes idle connections; the server was never bound, so there is nothing else to close.
      httpServer.close();
    });
  return {
    address: options.socketPath ? `unix:${options.socketPath}` : `${tlsFiles ? 'https' : 'http'}://${hostText}:${bound.port}`,
    port: bound.port,
    close: () => drain(CLOSE_GRACE_MS).then(() => undefined),
    drain,
    reloadTls: (files = tlsFiles) => {
      if (!files || !(server instanceof tls.Server)) throw new Error('this listener does not use TLS');
      server.setSecureContext(secureContext(files));
      tlsFiles = files;
    },
  };
}

/**
 * `http_idle_timeout`, Node's `keepAliveTimeout`. As in Vault: when it is 0 the read timeout is
 * used, and when that is 0 too the header timeout (0 there as well: idle connections stay open).
 */
function idleTimeoutOf(options: ListenerOptions, readTimeoutMs: number, readHeaderTimeoutMs: number): number {
  const idle = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  return idle > 0 ? idle : readTimeoutMs > 0 ? readTimeoutMs : readHeaderTimeoutMs;
}

/**
 * `http_write_timeout`, as Go's `WriteTimeout` that Vault's listener sets: a response not fully
 * written this long after its request arrived (a slow handler, or a client that does not read)
 * has its connection closed, so it holds no socket or memory past that.
 */
function enforceWriteTimeout(httpServer: http.Server, timeoutMs: number): void {
  if (timeoutMs <= 0) return;
  httpServer.on('request', (_req: http.IncomingMessage, res: http.ServerResponse) => {
    const timer = setTimeout(() => res.socket?.destroy(), timeoutMs);
    timer.unref();
    res.on('close', () => clearTimeout(timer));
  });
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
