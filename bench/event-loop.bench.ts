/**
 * How long other clients wait while a large transit request runs, against the real server (dev
 * mode, LevelDB, its own process): the p99 of `/v1/sys/health`, asked back to back by a second
 * client, while a batch encrypt of 100,000 × 64 B items runs (requests back to back on one
 * connection), and while a single encrypt of a 30 MB body runs; beside it the throughput of those
 * large batches, and of the usual 1,000 × 64 B batch (4 connections).
 *
 * Then two bodies sent without a token by a load generator in a process of its own
 * (lib/body-load.ts), while this process asks for health back to back, p99 and max: 20 MB of
 * `{"a":["x",…]}` to a path that needs a token, with a file audit device on; and 28 MB of
 * `pgp_keys` to `sys/init`. And issue #36's target: health p99 and max while another process
 * (lib/mixed-load.ts) runs 100,000-item batches, 30 MB single operations and 20 MB bodies
 * without a token back to back against a server with a file audit device.
 *
 * Every server raises the listener's JSON limits (RAISED_LIMITS) so that it takes the
 * 100,000-item batches and 30 MB items, and each cell runs with the run's other servers paused
 * (`alone`).
 *
 * With BENCH_BASELINE=<directory of another built checkout> (a git worktree of a commit that has
 * the listener's JSON limits, built with tsc), every cell also runs against a server of that build, interleaved with this
 * one's (BENCH_ROUNDS rounds after an uncounted warm-up), so that before and after are measured in
 * one run under the same load. Latencies are given as the worst p99 of the rounds and the range;
 * throughputs as the best round and the range.
 */
import http from 'node:http';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { interleaved, rangeText, ROUNDS, WARM_UP_S, type Measured } from './lib/load.js';
import { report, type Row } from './lib/report.js';
import type { BenchServer } from './lib/server.js';
import { startConfiguredServer } from './lib/configured-server.js';

const DURATION_S = Number(process.env.BENCH_DURATION ?? 5);
const BASELINE = process.env.BENCH_BASELINE;

const LARGE_BATCH = 100_000;
const SMALL_BATCH = 1000;
const ITEM_BYTES = 64;
/** A 30 MB request body: one plaintext, base64, under the 32 MiB request limit. */
const BIG_BODY_CHARS = 30 * 1000 * 1000;
/** Seconds per round of the mixed load: each of its requests runs at least once. */
const MIXED_DURATION_S = Number(process.env.BENCH_MIXED_DURATION ?? 20);
/** Passes of the whole mix the load generator sends in the uncounted round, before health is asked. */
const MIXED_WARM_UP_PASSES = 2;
const MIXED_CASE = 'mixed: 100,000-item batches, 30 MB encrypt/decrypt/rewrap/hmac/hash, 20 MB bodies without a token; file audit device on (other process)';

interface Target {
  readonly server: BenchServer;
  /** One connection for the large requests, another for health. */
  readonly work: http.Agent;
  readonly probe: http.Agent;
}

/** Every server this run started, so that a cell can pause those it does not measure. */
const started: Target[] = [];

/**
 * Runs a cell with every other server of the run paused (SIGSTOP) and resumes them after it. An
 * idle server is not idle to the machine: V8 collects a heap that stopped growing some seconds
 * after its load ended, in full collections of 28–45 ms on its main thread and its helper threads,
 * and on two cores those took the CPU from the server being measured (bench/README.md, "Only the
 * measured server runs").
 */
async function alone<T>(target: Target, cell: () => Promise<T>): Promise<T> {
  const others = started.filter((other) => other !== target && other.server.child.exitCode === null);
  for (const other of others) other.server.child.kill('SIGSTOP');
  try {
    return await cell();
  } finally {
    for (const other of others) other.server.child.kill('SIGCONT');
  }
}

/** POSTs or GETs on a kept-alive connection; the answer is read and counted, not parsed (the client must stay idle to time health). */
function send(target: Target, agent: http.Agent, method: string, path: string, body?: string): Promise<number> {
  const url = new URL(target.server.address);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        path: `/v1/${path}`,
        method,
        agent,
        headers: { 'X-Vault-Token': target.server.token, ...(body === undefined ? {} : { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) }) },
      },
      (res) => {
        res.on('data', () => undefined);
        res.on('end', () => (res.statusCode === 200 ? resolve(res.statusCode) : reject(new Error(`${method} ${path}: ${res.statusCode}`))));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * p99 in ms of health requests asked back to back while `body` is POSTed to encrypt, request
 * after request, for `seconds`.
 */
async function healthP99(target: Target, body: string, seconds: number): Promise<number> {
  const latencies: number[] = [];
  const until = performance.now() + seconds * 1000;
  while (performance.now() < until) {
    let done = false;
    const work = send(target, target.work, 'POST', 'transit/encrypt/bench', body).finally(() => (done = true));
    while (!done) {
      const started = performance.now();
      await send(target, target.probe, 'GET', 'sys/health');
      latencies.push(performance.now() - started);
    }
    await work;
  }
  latencies.sort((a, b) => a - b);
  return latencies[Math.ceil(latencies.length * 0.99) - 1]!;
}

const LOADER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'lib/body-load.js');
const MIXED_LOADER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'lib/mixed-load.js');

/**
 * Health latencies while another process runs issue #36's large requests back to back
 * (lib/mixed-load.ts): 100,000-item batches, 30 MB encrypt, decrypt, rewrap, HMAC and hash, and
 * 20 MB bodies without a token. `warmUpPasses`: times the load generator sends the whole mix
 * before health is asked (the uncounted round's, so that every request of the mix has run on the
 * server before a counted round: in its 1 s, only the batch and the 30 MB encrypt had run).
 */
async function healthUnderMixedLoad(target: Target, seconds: number, warmUpPasses = 0): Promise<number[]> {
  const loader = spawn(process.execPath, [MIXED_LOADER, target.server.address, target.server.token, String(warmUpPasses)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  loader.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  // Ready once it has made its 30 MB ciphertext and sent its warm-up passes; an error before then ends it.
  await new Promise<void>((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`the mixed load generator exited (${code}) before it was ready`));
    const onData = () => {
      if (!out.includes('ready\n')) return;
      loader.stdout!.off('data', onData);
      loader.off('exit', onExit);
      resolve();
    };
    loader.stdout!.on('data', onData);
    loader.once('exit', onExit);
  });
  const latencies: number[] = [];
  const until = performance.now() + seconds * 1000;
  while (performance.now() < until) {
    const started = performance.now();
    await send(target, target.probe, 'GET', 'sys/health');
    latencies.push(performance.now() - started);
  }
  const exited = new Promise<void>((resolve) => loader.once('exit', () => resolve()));
  loader.kill('SIGTERM');
  await exited;
  const report = JSON.parse(out.slice(out.indexOf('ready\n') + 'ready\n'.length).trim() || '{}') as { sent?: Record<string, number>; unexpected?: string[] };
  if (report.unexpected?.length) throw new Error(`mixed load: unexpected answers: ${report.unexpected.join('; ')}`);
  mixedSent.push(report.sent ?? {});
  return latencies.sort((a, b) => a - b);
}

/** What each round of the mixed load sent, for the report. */
const mixedSent: Record<string, number>[] = [];

/**
 * Every server's listener: Vault's and OpenBao's JSON limits raised so that 100,000-item batches and
 * 30 MB items are taken (a baseline build must have these settings: issue #36 added them).
 */
const RAISED_LIMITS = {
  address: '127.0.0.1:0',
  tls_disable: true,
  max_json_array_element_count: 200_000,
  max_request_json_strings: -1,
  max_json_string_value_length: 32 * 1024 * 1024,
};

/** Health latencies while another process sends a large body without a token, over and over. */
async function healthUnderUpload(target: Target, urlPath: string, bytes: number, shape: 'strings' | 'pgp', seconds: number): Promise<number[]> {
  const loader = spawn(process.execPath, [LOADER, target.server.address, urlPath, String(bytes), shape], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve) => loader.stdout!.once('data', () => resolve()));
  const latencies: number[] = [];
  const until = performance.now() + seconds * 1000;
  while (performance.now() < until) {
    const started = performance.now();
    await send(target, target.probe, 'GET', 'sys/health');
    latencies.push(performance.now() - started);
  }
  const answers = new Promise<string>((resolve) => {
    let out = '';
    loader.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    loader.once('exit', () => resolve(out.trim()));
  });
  loader.kill('SIGTERM');
  if (Number(await answers) === 0) throw new Error(`${urlPath}: the server answered none of the ${bytes}-byte uploads`);
  return latencies.sort((a, b) => a - b);
}

const p99 = (sorted: readonly number[]) => sorted[Math.ceil(sorted.length * 0.99) - 1]!;

/** Items per second of `body` (of `items` items) POSTed to encrypt back to back on one connection for `seconds`. */
async function sequentialItemsPerSecond(target: Target, body: string, items: number, seconds: number): Promise<number> {
  const started = performance.now();
  let requests = 0;
  while (performance.now() - started < seconds * 1000) {
    await send(target, target.work, 'POST', 'transit/encrypt/bench', body);
    requests++;
  }
  return (requests * items) / ((performance.now() - started) / 1000);
}

/** Items per second of `body` POSTed to encrypt by 4 connections (autocannon) for `seconds`. */
async function concurrentItemsPerSecond(target: Target, body: string, items: number, seconds: number): Promise<number> {
  const result = await autocannon({
    url: `${target.server.address}/v1/transit/encrypt/bench`,
    method: 'POST',
    connections: 4,
    duration: seconds,
    headers: { 'X-Vault-Token': target.server.token, 'Content-Type': 'application/json' },
    body,
  });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`encrypt: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  return (result.requests.total / (result.duration || seconds)) * items;
}

function batchBody(items: number): string {
  return JSON.stringify({ batch_input: Array.from({ length: items }, () => ({ plaintext: randomBytes(ITEM_BYTES).toString('base64') })) });
}

/** A server of this build, or of the one in `root`, from a configuration file with the JSON limits raised (RAISED_LIMITS). */
async function startTarget(root?: string): Promise<Target> {
  const server = { ...(await startConfiguredServer({ listener: { tcp: RAISED_LIMITS } }, 1, root)), startupMs: 0 };
  await server.request('POST', 'transit/keys/bench');
  const target = { server, work: new http.Agent({ keepAlive: true, maxSockets: 1 }), probe: new http.Agent({ keepAlive: true, maxSockets: 1 }) };
  started.push(target);
  return target;
}

/** A target with a file audit device writing into `dir`, declared in its configuration file. */
async function startAuditedTarget(dir: string, root?: string): Promise<Target> {
  const agents = () => ({ work: new http.Agent({ keepAlive: true, maxSockets: 1 }), probe: new http.Agent({ keepAlive: true, maxSockets: 1 }) });
  const file = path.join(dir, root ? 'audit-baseline.log' : 'audit.log');
  const configured = await startConfiguredServer({ listener: { tcp: RAISED_LIMITS }, audit: [{ file: { file: { options: { file_path: file } } } }] }, 1, root);
  await configured.request('POST', 'transit/keys/bench');
  const target = { server: { ...configured, startupMs: 0 }, ...agents() };
  started.push(target);
  return target;
}

const ms = (m: Measured) => `${m.low.toFixed(0)}–${m.best.toFixed(0)}`;

async function main(): Promise<void> {
  const targets: Record<string, Target> = {};
  // Started inside the try: a server that did start is stopped when the next one fails to.
  try {
    if (BASELINE) targets.before = await startTarget(BASELINE);
    targets.after = await startTarget();
    const names = Object.keys(targets);
    const large = batchBody(LARGE_BATCH);
    const small = batchBody(SMALL_BATCH);
    const big = JSON.stringify({ plaintext: randomBytes((BIG_BODY_CHARS / 4) * 3).toString('base64') });

    type Cell = () => Promise<number>;
    const cells = (make: (target: Target, seconds: number) => Promise<number>) => (seconds: number) =>
      Object.fromEntries(names.map((name) => [name, (() => alone(targets[name]!, () => make(targets[name]!, seconds))) as Cell]));
    const auditDir = await mkdtemp(path.join(os.tmpdir(), 'keywarden-bench-audit-'));
    const audited: Record<string, Target> = {};
    for (const name of names) audited[name] = await startAuditedTarget(auditDir, name === 'before' ? BASELINE : undefined);
    // Each upload cell reports its p99; beside it, each counted round's worst single latency (the
    // warm-up's, as for the p99, left out).
    const worst: Record<string, Record<string, number[]>> = { unauth: {}, pgp: {}, mixed: {} };
    const keepWorst = (which: string, name: string, seconds: number, latencies: number[]) => {
      if (seconds >= DURATION_S) (worst[which]![name] ??= []).push(latencies[latencies.length - 1]!);
    };
    const uploadCells = (which: 'unauth' | 'pgp') => (seconds: number) =>
      Object.fromEntries(
        names.map((name) => [
          name,
          async () => {
            const target = which === 'unauth' ? audited[name]! : targets[name]!;
            const latencies = await alone(target, () =>
              which === 'unauth'
                ? healthUnderUpload(target, 'transit/encrypt/bench', 20 * 1024 * 1024, 'strings', seconds)
                : healthUnderUpload(target, 'sys/init', 28 * 1024 * 1024, 'pgp', seconds),
            );
            keepWorst(which, name, seconds, latencies);
            return p99(latencies);
          },
        ]),
      );
    const mixedCells = (seconds: number) =>
      Object.fromEntries(
        names.map((name) => [
          name,
          async () => {
            const latencies = await alone(audited[name]!, () => healthUnderMixedLoad(audited[name]!, seconds, seconds < DURATION_S ? MIXED_WARM_UP_PASSES : 0));
            keepWorst('mixed', name, seconds, latencies);
            return p99(latencies);
          },
        ]),
      );
    const loadBefore = os.loadavg();
    const uploads = {
      unauth: await interleaved(uploadCells('unauth'), DURATION_S),
      pgp: await interleaved(uploadCells('pgp'), DURATION_S),
      // Long enough for every request of the mixed load to run at least once per round.
      mixed: await interleaved(mixedCells, Math.max(DURATION_S, MIXED_DURATION_S)),
    };
    const loadAfter = os.loadavg();
    for (const target of Object.values(audited)) {
      target.work.destroy();
      target.probe.destroy();
      await target.server.stop();
    }
    await rm(auditDir, { recursive: true, force: true });

    const figures = {
      health: await interleaved(cells((t, s) => healthP99(t, large, s)), DURATION_S),
      largeRate: await interleaved(cells((t, s) => sequentialItemsPerSecond(t, large, LARGE_BATCH, s)), DURATION_S),
      smallRate: await interleaved(cells((t, s) => concurrentItemsPerSecond(t, small, SMALL_BATCH, s)), DURATION_S),
      bigHealth: await interleaved(cells((t, s) => healthP99(t, big, s)), DURATION_S),
    };

    // interleaved keeps each cell's highest figure as `best`: for a latency, its worst round.
    const row = (what: string, unit: string, measured: Record<string, Measured>, latency: boolean): Row => {
      const out: Row = { case: what, figure: unit };
      for (const name of names) out[name] = measured[name]!.best;
      if (measured.before) out['after / before'] = measured.after!.best / measured.before.best;
      out[`ranges (${names.join(', ')})`] = names.map((name) => (latency ? ms(measured[name]!) : rangeText(measured[name]!))).join(', ');
      return out;
    };
    const maxRow = (what: string, worstOf: Record<string, number[]>): Row => {
      const out: Row = { case: what, figure: 'health max ms (worst round)' };
      const highest = (name: string) => Math.max(...worstOf[name]!);
      for (const name of names) out[name] = highest(name);
      if (worstOf.before !== undefined) out['after / before'] = highest('after') / highest('before');
      out[`ranges (${names.join(', ')})`] = names.map((name) => `${Math.min(...worstOf[name]!).toFixed(0)}–${highest(name).toFixed(0)}`).join(', ');
      return out;
    };
    report(
      'event-loop',
      [
        row('100,000 × 64 B batch encrypt running', 'health p99 ms (worst round)', figures.health, true),
        row('100,000 × 64 B batch encrypt', 'items/s, one connection', figures.largeRate, false),
        row('1,000 × 64 B batch encrypt', 'items/s, 4 connections', figures.smallRate, false),
        row('30 MB single encrypt running', 'health p99 ms (worst round)', figures.bigHealth, true),
        row('20 MB body without a token, file audit device on (other process)', 'health p99 ms (worst round)', uploads.unauth, true),
        maxRow('20 MB body without a token, file audit device on (other process)', worst.unauth!),
        row('28 MB pgp_keys to sys/init, no token (other process)', 'health p99 ms (worst round)', uploads.pgp, true),
        maxRow('28 MB pgp_keys to sys/init, no token (other process)', worst.pgp!),
        row(MIXED_CASE, 'health p99 ms (worst round)', uploads.mixed, true),
        maxRow(MIXED_CASE, worst.mixed!),
      ],
      [
        `${DURATION_S} s per cell after a ${WARM_UP_S} s warm-up, ${ROUNDS} interleaved rounds; one server process per build on this machine (LevelDB, from a configuration file with the JSON limits raised), the servers a cell does not measure paused while it runs. ` +
          'Health is asked back to back by a second connection while the large requests run back to back on the first; ' +
          (BASELINE ? `"before" is the build in ${BASELINE}.` : 'set BENCH_BASELINE to a built older checkout for before/after columns.'),
        `Load average (1, 5, 15 min) ${loadBefore.map((l) => l.toFixed(2)).join(', ')} before the body cells, ${loadAfter.map((l) => l.toFixed(2)).join(', ')} after; ${os.cpus().length} cores.`,
        `Mixed load per round (requests sent; the uncounted round's first, after the whole mix ${MIXED_WARM_UP_PASSES} times before health is asked): ${mixedSent.filter((sent) => Object.keys(sent).length > 0).map((sent) => Object.entries(sent).map(([what, n]) => `${what} ${n}`).join(', ')).join(' | ')}. Target (issue #36): health p99 < 25 ms, max < 50 ms.`,
      ],
    );
  } finally {
    for (const target of Object.values(targets)) {
      target.work.destroy();
      target.probe.destroy();
      await target.server.stop();
    }
  }
}

await main();
