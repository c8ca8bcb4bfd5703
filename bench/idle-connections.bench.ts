/**
 * Idle keep-alive connections: the production server (its own process, LevelDB) with 5,000
 * connections open that each made one request and then send nothing, while a load of transit
 * encrypts runs. Reports the server's RSS per idle connection and `sys/health` latency with and
 * without them. `IDLE_CONNECTIONS` sets how many (default 5,000).
 */
import autocannon from 'autocannon';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { startConfiguredServer } from './lib/configured-server.js';
import { report, type Row } from './lib/report.js';

const IDLE = Number(process.env.IDLE_CONNECTIONS ?? 5000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);

function rssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024;
}

/** A connection that made one request, read its answer, and stays open doing nothing. */
function idleConnection(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('error', reject);
    socket.once('data', () => resolve(socket));
    socket.write('GET /v1/sys/health HTTP/1.1\r\nHost: bench\r\n\r\n');
  });
}

/** `sys/health` one request at a time over a keep-alive connection for `seconds`: p50, p99, max in ms. */
async function healthLatency(address: string, seconds: number): Promise<{ p50: number; p99: number; max: number }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const samples: number[] = [];
  const deadline = performance.now() + seconds * 1000;
  while (performance.now() < deadline) {
    const started = performance.now();
    await new Promise<void>((resolve, reject) => {
      http
        .get(`${address}/v1/sys/health`, { agent }, (res) => {
          res.resume();
          res.on('end', () => resolve());
        })
        .on('error', reject);
    });
    samples.push(performance.now() - started);
  }
  agent.destroy();
  samples.sort((a, b) => a - b);
  const at = (q: number) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))]!;
  return { p50: at(0.5), p99: at(0.99), max: samples[samples.length - 1]! };
}

async function underLoad<T>(address: string, token: string, work: () => Promise<T>): Promise<T> {
  const load = autocannon({
    url: `${address}/v1/transit/encrypt/bench`,
    method: 'POST',
    connections: 4,
    duration: SECONDS,
    headers: { 'Content-Type': 'application/json', 'X-Vault-Token': token },
    body: JSON.stringify({ plaintext: Buffer.alloc(64, 1).toString('base64') }),
  });
  try {
    return await work();
  } finally {
    await load;
  }
}

async function main(): Promise<void> {
  const server = await startConfiguredServer();
  const sockets: net.Socket[] = [];
  try {
    await server.request('POST', 'transit/keys/bench', {});
    const port = Number(new URL(server.address).port);
    const pid = server.child.pid!;
    const without = await underLoad(server.address, server.token, () => healthLatency(server.address, SECONDS - 1));
    const before = rssBytes(pid);
    for (let i = 0; i < IDLE; i += 100) {
      sockets.push(...(await Promise.all(Array.from({ length: Math.min(100, IDLE - i) }, () => idleConnection(port)))));
    }
    await new Promise((r) => setTimeout(r, 1000));
    const after = rssBytes(pid);
    const withIdle = await underLoad(server.address, server.token, () => healthLatency(server.address, SECONDS - 1));
    const open = sockets.filter((s) => !s.destroyed).length;
    const rows: Row[] = [
      { 'idle connections': 0, 'server RSS MiB': before / 2 ** 20, 'health p50 ms': without.p50, 'health p99 ms': without.p99, 'health max ms': without.max },
      { 'idle connections': open, 'server RSS MiB': after / 2 ** 20, 'health p50 ms': withIdle.p50, 'health p99 ms': withIdle.p99, 'health max ms': withIdle.max },
    ];
    report('idle-connections', rows, [
      `RSS per idle keep-alive connection: ${((after - before) / IDLE / 1024).toFixed(1)} KiB (${IDLE} connections, each after one request; http_idle_timeout at its 5 min default).`,
      `sys/health measured one request at a time while 4 connections send single-item transit encrypts for ${SECONDS} s.`,
    ]);
  } finally {
    for (const socket of sockets) socket.destroy();
    await server.stop();
  }
}

await main();
