/** Binds the koa app to a TCP (or TLS) listener, through the LIST-verb stream of list-method.ts. */
import http from 'node:http';
import net from 'node:net';
import tls from 'node:tls';
import { readFileSync } from 'node:fs';
import type Koa from 'koa';
import { ListVerbStream } from './list-method.js';

export interface ListenerOptions {
  readonly host: string;
  readonly port: number;
  /** PEM files; both or neither. */
  readonly tlsCertFile?: string;
  readonly tlsKeyFile?: string;
}

export interface Listener {
  /** `http://127.0.0.1:8200` or `https://…`. */
  readonly address: string;
  readonly port: number;
  close(): Promise<void>;
}

export async function listen(app: Koa, options: ListenerOptions): Promise<Listener> {
  const httpServer = http.createServer({ keepAliveTimeout: 5_000 }, app.callback());
  const sockets = new Set<net.Socket>();
  const onSocket = (socket: net.Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    httpServer.emit('connection', new ListVerbStream(socket));
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
        httpServer.closeIdleConnections();
        // Give in-flight requests a moment, then cut what is left.
        setTimeout(() => sockets.forEach((s) => s.destroy()), 2_000).unref();
      }),
  };
}
