/**
 * A long mixed soak against the production server (its own process, LevelDB): transit encrypt and
 * decrypt, kv v2 writes and reads, userpass logins, response wrapping (wrap and unwrap), token
 * churn (create, look up, revoke) and a snapshot every few minutes, from 8 concurrent clients.
 * Every 10 s it samples the server's RSS and the window's p99 latency; the result is a table, a
 * text chart on stdout and an SVG chart in bench/results/soak.svg. After a warm-up (the first
 * fifth of the run, at least 1 min when the run is long enough) RSS may grow less than 10 %.
 *
 * `npm run bench -- soak -duration 30m` (default 30m; `SOAK_DURATION` works too): `s`, `m`, `h`.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { startConfiguredServer, type ConfiguredServer } from './lib/configured-server.js';
import { RESULTS_DIR, report, type Row } from './lib/report.js';

const WORKERS = 8;
const SAMPLE_MS = 10_000;

function durationMs(): number {
  const flag = process.argv.indexOf('-duration');
  const text = (flag >= 0 ? process.argv[flag + 1] : undefined) ?? process.env.SOAK_DURATION ?? '30m';
  const m = /^(\d+(?:\.\d+)?)(s|m|h)$/.exec(text);
  if (!m) throw new Error(`-duration: expected a number and s, m or h (30m), got "${text}"`);
  return Number(m[1]) * { s: 1000, m: 60_000, h: 3_600_000 }[m[2] as 's' | 'm' | 'h'];
}

function rssMiB(pid: number): number {
  return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
}

/** One HTTP call; throws on a non-2xx answer (counted as an error by the caller). */
async function call(server: ConfiguredServer, method: string, p: string, options: { token?: string; body?: unknown; headers?: Record<string, string> } = {}): Promise<any> {
  const res = await fetch(`${server.address}/v1/${p}`, {
    method,
    headers: { 'X-Vault-Token': options.token ?? server.token, 'Content-Type': 'application/json', ...(options.headers ?? {}) },
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
  });
  const body = await res.arrayBuffer();
  if (res.status >= 300) throw new Error(`${method} ${p}: ${res.status} ${Buffer.from(body).toString().slice(0, 200)}`);
  const text = Buffer.from(body).toString();
  return text && res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : undefined;
}

const b64 = (text: string) => Buffer.from(text).toString('base64');

/** The mixed operations; each is one client action of one or more requests. */
function operations(server: ConfiguredServer): Array<(n: number) => Promise<void>> {
  return [
    async (n) => {
      const enc = await call(server, 'POST', 'transit/encrypt/soak', { body: { plaintext: b64(`order ${n}`) } });
      await call(server, 'POST', 'transit/decrypt/soak', { body: { ciphertext: enc.data.ciphertext } });
    },
    async (n) => {
      await call(server, 'POST', `secret/data/app/${n % 500}`, { body: { data: { value: `v${n}` } } });
      await call(server, 'GET', `secret/data/app/${n % 500}`);
    },
    async () => {
      const login = await call(server, 'POST', 'auth/userpass/login/soak', { token: '', body: { password: 'soak-password' } });
      await call(server, 'GET', 'auth/token/lookup-self', { token: login.auth.client_token });
      await call(server, 'POST', 'auth/token/revoke-self', { token: login.auth.client_token, body: {} });
    },
    async (n) => {
      const wrapped = await call(server, 'POST', 'sys/wrapping/wrap', { body: { n }, headers: { 'X-Vault-Wrap-TTL': '60' } });
      await call(server, 'POST', 'sys/wrapping/unwrap', { token: wrapped.wrap_info.token, body: {} });
    },
    async () => {
      const created = await call(server, 'POST', 'auth/token/create', { body: { ttl: '10m', policies: ['default'] } });
      await call(server, 'GET', 'auth/token/lookup-self', { token: created.auth.client_token });
      await call(server, 'POST', 'auth/token/revoke-self', { token: created.auth.client_token, body: {} });
    },
  ];
}

function svgChart(samples: ReadonlyArray<{ atS: number; rssMiB: number; p99Ms: number }>): string {
  const width = 720;
  const height = 240;
  const pad = 40;
  const maxT = Math.max(1, ...samples.map((s) => s.atS));
  const maxRss = Math.max(1, ...samples.map((s) => s.rssMiB)) * 1.1;
  const maxP99 = Math.max(1, ...samples.map((s) => s.p99Ms)) * 1.1;
  const x = (t: number) => pad + (t / maxT) * (width - 2 * pad);
  const y = (v: number, max: number) => height - pad - (v / max) * (height - 2 * pad);
  const line = (pick: (s: { rssMiB: number; p99Ms: number }) => number, max: number) => samples.map((s, i) => `${i ? 'L' : 'M'}${x(s.atS).toFixed(1)},${y(pick(s), max).toFixed(1)}`).join(' ');
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="11">`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
    `<line x1="${pad}" y1="${height - pad}" x2="${width - pad}" y2="${height - pad}" stroke="#888"/>`,
    `<text x="${pad}" y="${pad - 20}">soak: server RSS (MiB, blue, 0–${maxRss.toFixed(0)}) and p99 latency per 10 s (ms, red, 0–${maxP99.toFixed(1)}) over ${(maxT / 60).toFixed(1)} min</text>`,
    `<path d="${line((s) => s.rssMiB, maxRss)}" fill="none" stroke="#1f5fbf" stroke-width="2"/>`,
    `<path d="${line((s) => s.p99Ms, maxP99)}" fill="none" stroke="#c0392b" stroke-width="1.5"/>`,
    `<text x="${width - pad}" y="${height - pad + 15}" text-anchor="end">${(maxT / 60).toFixed(1)} min</text>`,
    '</svg>',
  ].join('\n');
}

function medianRss(samples: ReadonlyArray<{ rssMiB: number }>): number {
  const sorted = samples.map((s) => s.rssMiB).sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function textChart(samples: ReadonlyArray<{ atS: number; rssMiB: number; p99Ms: number }>): string {
  const maxRss = Math.max(...samples.map((s) => s.rssMiB));
  return samples
    .map((s) => `${String(Math.round(s.atS)).padStart(6)} s  RSS ${s.rssMiB.toFixed(1).padStart(7)} MiB ${'#'.repeat(Math.round((s.rssMiB / maxRss) * 40)).padEnd(40)}  p99 ${s.p99Ms.toFixed(1)} ms`)
    .join('\n');
}

async function main(): Promise<void> {
  const totalMs = durationMs();
  const warmUpMs = totalMs >= 5 * 60_000 ? Math.max(60_000, totalMs / 5) : totalMs / 5;
  const snapshotEveryMs = Math.min(3 * 60_000, Math.max(totalMs / 4, SAMPLE_MS));
  const server = await startConfiguredServer();
  try {
    await call(server, 'POST', 'transit/keys/soak', { body: {} });
    await call(server, 'POST', 'sys/mounts/secret', { body: { type: 'kv', options: { version: '2' } } });
    await call(server, 'POST', 'sys/auth/userpass', { body: { type: 'userpass' } });
    await call(server, 'POST', 'auth/userpass/users/soak', { body: { password: 'soak-password', token_policies: ['default'] } });
    const ops = operations(server);
    const pid = server.child.pid!;
    const started = performance.now();
    const samples: Array<{ atS: number; rssMiB: number; p99Ms: number; requests: number }> = [];
    let window: number[] = [];
    let errors = 0;
    let firstError = '';
    let snapshots = 0;
    let stop = false;
    const worker = async (w: number) => {
      for (let n = w; !stop; n += WORKERS) {
        const op = ops[n % ops.length]!;
        const t = performance.now();
        try {
          await op(n);
        } catch (err) {
          errors++;
          firstError ||= String(err);
        }
        window.push(performance.now() - t);
      }
    };
    const workers = Array.from({ length: WORKERS }, (_, w) => worker(w));
    let nextSnapshot = snapshotEveryMs;
    while (performance.now() - started < totalMs) {
      await new Promise((r) => setTimeout(r, SAMPLE_MS));
      const atMs = performance.now() - started;
      if (atMs >= nextSnapshot) {
        nextSnapshot += snapshotEveryMs;
        const res = await fetch(`${server.address}/v1/sys/storage/snapshot`, { headers: { 'X-Vault-Token': server.token } });
        await res.arrayBuffer();
        if (res.status === 200) snapshots++;
        else errors++;
      }
      const sorted = window.sort((a, b) => a - b);
      window = [];
      samples.push({ atS: atMs / 1000, rssMiB: rssMiB(pid), p99Ms: sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] ?? 0, requests: sorted.length });
      process.stdout.write(`${Math.round(atMs / 1000)} s: RSS ${samples.at(-1)!.rssMiB.toFixed(1)} MiB, p99 ${samples.at(-1)!.p99Ms.toFixed(1)} ms, ${sorted.length} operations\n`);
    }
    stop = true;
    await Promise.all(workers);
    // RSS saws up and down with the collector: compare the median of the first minute after the
    // warm-up with the median of the last minute, not two single samples.
    const warm = samples.filter((s) => s.atS * 1000 >= warmUpMs);
    const perMinute = Math.max(1, Math.round(60_000 / SAMPLE_MS));
    const base = { rssMiB: medianRss((warm.length > 0 ? warm : samples).slice(0, perMinute)) };
    const end = { rssMiB: medianRss(samples.slice(-perMinute)) };
    const growth = (end.rssMiB - base.rssMiB) / base.rssMiB;
    const p99s = samples.map((s) => s.p99Ms).sort((a, b) => a - b);
    mkdirSync(RESULTS_DIR, { recursive: true });
    writeFileSync(path.join(RESULTS_DIR, 'soak.svg'), svgChart(samples));
    process.stdout.write(`\n${textChart(samples)}\n`);
    const rows: Row[] = [
      {
        minutes: totalMs / 60_000,
        operations: samples.reduce((sum, s) => sum + s.requests, 0),
        errors,
        snapshots,
        'RSS after warm-up MiB (median of a minute)': base.rssMiB,
        'RSS at end MiB (median of the last minute)': end.rssMiB,
        'RSS growth %': growth * 100,
        'p99 ms (median window)': p99s[Math.floor(p99s.length / 2)]!,
        'p99 ms (worst window)': p99s.at(-1)!,
      },
    ];
    report('soak', rows, [
      `Target: RSS growth under 10 % after warm-up (${(warmUpMs / 1000).toFixed(0)} s): ${growth < 0.1 ? 'met' : 'NOT met'}. Chart: bench/results/soak.svg.`,
      ...(firstError ? [`First error: ${firstError}`] : []),
    ]);
    if (errors > 0) process.exitCode = 1;
  } finally {
    await server.stop();
  }
}

await main();
