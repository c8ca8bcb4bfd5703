/**
 * Latency of one client sending one request at a time over a keep-alive connection, every answer
 * read in full: percentiles in milliseconds with microsecond resolution (autocannon reports whole
 * milliseconds, too coarse for a single request).
 */
import http from 'node:http';

export interface Latency {
  readonly p50Ms: number;
  readonly p99Ms: number;
}

export async function sequentialLatency(url: string, options: { body: string; headers?: Record<string, string>; seconds: number }): Promise<Latency> {
  const target = new URL(url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const payload = Buffer.from(options.body);
  const headers = { 'Content-Type': 'application/json', 'Content-Length': String(payload.length), ...(options.headers ?? {}) };
  const samples: number[] = [];
  const deadline = performance.now() + options.seconds * 1000;
  while (performance.now() < deadline) {
    const started = performance.now();
    await new Promise<void>((resolve, reject) => {
      const req = http.request({ host: target.hostname, port: target.port, path: target.pathname, method: 'POST', headers, agent }, (res) => {
        res.on('data', () => {});
        res.on('end', () => ((res.statusCode ?? 0) < 300 ? resolve() : reject(new Error(`${url}: status ${res.statusCode}`))));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(payload);
    });
    samples.push(performance.now() - started);
  }
  agent.destroy();
  samples.sort((a, b) => a - b);
  const at = (q: number) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))]!;
  return { p50Ms: at(0.5), p99Ms: at(0.99) };
}
