/** A TCP proxy a test can cut, pause and restore, to take the database away from one node only. */
import net from 'node:net';
import { freePort } from '../helpers/net.js';

interface Pair {
  readonly client: net.Socket;
  readonly upstream: net.Socket;
}

export class TcpProxy {
  private server: net.Server | undefined;
  private readonly pairs = new Set<Pair>();
  private paused = false;

  private constructor(
    readonly port: number,
    private readonly target: { host: string; port: number },
  ) {}

  static async start(target: { host: string; port: number }): Promise<TcpProxy> {
    const proxy = new TcpProxy(await freePort(), target);
    await proxy.restore();
    return proxy;
  }

  /** Closes every connection through the proxy and refuses new ones. */
  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const { client, upstream } of this.pairs) {
      client.destroy();
      upstream.destroy();
    }
    this.pairs.clear();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /**
   * Stops relaying bytes both ways while every connection stays open (the kernel still answers
   * TCP keepalives): to each side the other looks frozen, as a process stopped with SIGSTOP does.
   */
  pause(): void {
    this.paused = true;
    for (const pair of this.pairs) stopRelay(pair);
  }

  /** Relays the bytes held back by `pause`, and new ones, again. */
  resume(): void {
    this.paused = false;
    for (const pair of this.pairs) relay(pair);
  }

  /** Accepts connections again, on the same port. */
  async restore(): Promise<void> {
    if (this.server) return;
    const server = net.createServer((client) => {
      const upstream = net.connect(this.target.port, this.target.host);
      const pair = { client, upstream };
      this.pairs.add(pair);
      const drop = () => {
        client.destroy();
        upstream.destroy();
        this.pairs.delete(pair);
      };
      client.on('error', drop).on('close', drop);
      upstream.on('error', drop).on('close', drop);
      if (this.paused) stopRelay(pair);
      else relay(pair);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.server = server;
  }

  async close(): Promise<void> {
    await this.cut();
  }
}

function relay({ client, upstream }: Pair): void {
  client.pipe(upstream);
  upstream.pipe(client);
  client.resume();
  upstream.resume();
}

function stopRelay({ client, upstream }: Pair): void {
  client.unpipe(upstream);
  upstream.unpipe(client);
  client.pause();
  upstream.pause();
}
