/**
 * An HTTP proxy in front of one node, given to the other nodes as its `api_addr`: it passes every
 * request on, except one the test asks it to hold, which it keeps (as someone watching the wire
 * between the nodes would see it) and never delivers.
 */
import http from 'node:http';
import { freePort } from '../helpers/net.js';

/** A request exactly as it crossed the proxy. */
export interface CapturedRequest {
  readonly method: string;
  /** Path and query, as sent. */
  readonly url: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: Buffer;
}

export class RecordingProxy {
  private holding: ((captured: CapturedRequest) => void) | undefined;

  private constructor(
    readonly url: string,
    private readonly server: http.Server,
  ) {}

  /** A proxy to `target` (`http://host:port`) on a free loopback port. */
  static async start(target: string): Promise<RecordingProxy> {
    const port = await freePort();
    const upstream = new URL(target);
    let proxy: RecordingProxy | undefined;
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const captured: CapturedRequest = { method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks) };
        const hold = proxy!.holding;
        if (hold) {
          proxy!.holding = undefined;
          hold(captured);
          res.writeHead(502, { 'Content-Type': 'application/json' }).end(JSON.stringify({ errors: ['held by the test proxy'] }));
          return;
        }
        const onward = http.request(
          { host: upstream.hostname, port: upstream.port, method: captured.method, path: captured.url, headers: captured.headers },
          (answer) => {
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(res);
          },
        );
        onward.on('error', () => res.destroy());
        onward.end(captured.body);
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    proxy = new RecordingProxy(`http://127.0.0.1:${port}`, server);
    return proxy;
  }

  /** Resolves with the next request to arrive, which is kept and not delivered. */
  holdNext(): Promise<CapturedRequest> {
    return new Promise((resolve) => {
      this.holding = resolve;
    });
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
