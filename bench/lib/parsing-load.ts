/**
 * A load client that behaves like a real one: each response body is read in full and parsed as
 * JSON (autocannon counts bytes and discards them), over keep-alive connections, each connection
 * sending its next request when the previous answer has been parsed.
 */
import http from 'node:http';
import { cpuMicros } from './load.js';

export interface ParsingLoadOptions {
  readonly body: string;
  readonly headers?: Record<string, string>;
  readonly connections: number;
  readonly seconds: number;
  /** The server's process: its CPU time per request is measured too. */
  readonly serverPid?: number;
}

export interface ParsingLoadResult {
  readonly requestsPerSecond: number;
  /** With `serverPid`: the CPU time (user + system) that process spent per answered request, µs. */
  readonly serverCpuUs?: number;
}

/** Requests per second over `seconds`; throws on any non-2xx answer or unparseable body. */
export async function parsingLoad(url: string, options: ParsingLoadOptions): Promise<ParsingLoadResult> {
  const target = new URL(url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.connections });
  const payload = Buffer.from(options.body);
  const headers = { 'Content-Type': 'application/json', 'Content-Length': String(payload.length), ...(options.headers ?? {}) };
  const deadline = performance.now() + options.seconds * 1000;
  let completed = 0;

  const once = () =>
    new Promise<void>((resolve, reject) => {
      const req = http.request({ host: target.hostname, port: target.port, path: target.pathname, method: 'POST', headers, agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          try {
            if ((res.statusCode ?? 0) >= 300) throw new Error(`${url}: status ${res.statusCode}`);
            JSON.parse(Buffer.concat(chunks).toString('utf8'));
            completed++;
            resolve();
          } catch (err) {
            reject(err);
          }
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(payload);
    });

  const cpuBefore = options.serverPid === undefined ? 0 : cpuMicros(options.serverPid);
  const started = performance.now();
  await Promise.all(
    Array.from({ length: options.connections }, async () => {
      while (performance.now() < deadline) await once();
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  agent.destroy();
  return {
    requestsPerSecond: completed / elapsed,
    ...(options.serverPid === undefined ? {} : { serverCpuUs: (cpuMicros(options.serverPid) - cpuBefore) / Math.max(1, completed) }),
  };
}
