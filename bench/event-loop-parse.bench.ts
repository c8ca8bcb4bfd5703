/**
 * Three ways of parsing a large JSON request body, in this process, side by side: in one go on the
 * main thread (the listener's limits pass, decoding, JSON.parse: what the server did before issue
 * #36), in slices on the main thread with turns of the event loop between them (the server's,
 * core/http/json-sliced.ts), and in a worker thread (lib/parse-worker.ts: the bytes transferred,
 * the value cloned back). For each body — a 100,000 × 64 B batch and one 30 MB plaintext, as
 * `event-loop` sends them — the longest the event loop went without a turn while it ran (a 1 ms
 * timer's lateness), the time until the value was there, and the main thread's busy time in it
 * (event-loop utilisation). Rounds are interleaved; each figure is the worst (hold) or best (time)
 * round with the range.
 */
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { checkJsonLimits, DEFAULT_JSON_LIMITS } from '../core/http/json-limits.js';
import { parseJsonInTurns } from '../core/http/json-sliced.js';
import { scanJson } from '../core/framework/exact-json.js';
import { ParseWorker } from './lib/parse-worker.js';
import { report, type Row } from './lib/report.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const LIMITS = { ...DEFAULT_JSON_LIMITS, arrayElements: 200_000, strings: -1, stringLength: 32 * 1024 * 1024 };

const bodies: Record<string, () => Buffer> = {
  '100,000 × 64 B batch (10.9 MB)': () => Buffer.from(JSON.stringify({ batch_input: Array.from({ length: 100_000 }, () => ({ plaintext: randomBytes(64).toString('base64') })) })),
  'one 30 MB plaintext': () => Buffer.from(JSON.stringify({ plaintext: randomBytes(22_500_000).toString('base64') })),
};

const worker = new ParseWorker();
const ways: Record<string, (raw: Buffer) => Promise<unknown>> = {
  'in one go (before)': async (raw) => {
    checkJsonLimits(raw, LIMITS);
    const text = raw.toString('utf8');
    const value = JSON.parse(text) as unknown;
    scanJson(text);
    return value;
  },
  'in slices, main thread (kept)': async (raw) => (await parseJsonInTurns(raw, 0, raw.length, LIMITS)).value,
  'worker thread': (raw) => worker.parse(raw, LIMITS).then((r) => r.value),
};

/** Runs `work` with a 1 ms timer watching: the longest gap between two of its ticks, the time taken, the loop's busy time. */
async function watched(work: () => Promise<unknown>): Promise<{ holdMs: number; ms: number; busyMs: number }> {
  let last = performance.now();
  let holdMs = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    holdMs = Math.max(holdMs, now - last);
    last = now;
  }, 1);
  const elu = performance.eventLoopUtilization();
  const started = performance.now();
  await work();
  const ms = performance.now() - started;
  const busy = performance.eventLoopUtilization(elu);
  clearInterval(timer);
  holdMs = Math.max(holdMs, performance.now() - last);
  return { holdMs, ms, busyMs: busy.active };
}

const range = (values: number[]) => `${Math.min(...values).toFixed(0)}–${Math.max(...values).toFixed(0)}`;
const rows: Row[] = [];
const loadBefore = os.loadavg();
for (const [body, make] of Object.entries(bodies)) {
  const figures: Record<string, { hold: number[]; ms: number[]; busy: number[] }> = {};
  const source = make();
  for (let round = 0; round <= ROUNDS; round++) {
    for (const [way, parse] of Object.entries(ways)) {
      // A copy of its own for each way, made before the clock starts: the worker's is transferred away.
      const raw = Buffer.from(source);
      const result = await watched(() => parse(raw));
      // Round 0 warms each way up (V8's compilation, the worker's start) and is not counted.
      if (round === 0) continue;
      const f = (figures[way] ??= { hold: [], ms: [], busy: [] });
      f.hold.push(result.holdMs);
      f.ms.push(result.ms);
      f.busy.push(result.busyMs);
    }
  }
  for (const [way, f] of Object.entries(figures)) {
    rows.push({
      body,
      way,
      'longest hold ms (worst round)': Math.max(...f.hold),
      'hold ranges': range(f.hold),
      'ms to the value (best)': Math.min(...f.ms),
      'ms ranges': range(f.ms),
      'main thread busy ms (best)': Math.min(...f.busy),
      'busy ranges': range(f.busy),
    });
  }
}
await worker.close();
report('event-loop-parse', rows, [
  `${ROUNDS} interleaved rounds after one uncounted. Load average (1, 5, 15 min) ${loadBefore.map((l) => l.toFixed(2)).join(', ')} before, ${os.loadavg().map((l) => l.toFixed(2)).join(', ')} after; ${os.cpus().length} cores.`,
  'The hold is the longest a 1 ms timer waited past its time while the body was parsed; the busy time is the main thread\'s (event-loop utilisation), a worker\'s own time not included.',
]);
