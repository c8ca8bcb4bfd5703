/**
 * Gives memory back to the system once a burst of load has ended (docs/deployment.md, "Memory").
 *
 * Node 24's V8 grows its young generation and keeps the pages a burst used in a pool, and its
 * memory reducer judges the allocation rate from the last garbage collection: with no collection
 * while the server idles, the rate it sees is the burst's, so it never shrinks the heap, and a
 * serving process stays at the size its busiest moment took. A plain major collection does not
 * release those pages either; one that collects all it can (V8's last-resort collection, what a
 * low-memory notification runs) does, and shrinks the young generation back to its start.
 *
 * What the collection frees outside V8's heap (the backing stores of a burst's buffers) goes back to
 * glibc, which keeps it; the C allocator is then asked to give its free pages back too
 * (native-heap.ts).
 *
 * That collection pauses the process while it runs, and the next burst starts with a young
 * generation that has to grow again, so it runs only when the process has been quiet for
 * `quietIntervals` check intervals in a row and has grown by at least `growthBytes` since the last
 * one: once per burst, never under load nor in a short lull between bursts. Quiet means both an
 * idle event loop and next to no requests: a client asking for something cheap back to back keeps
 * the loop idle, but would wait out the whole pause.
 */
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import v8 from 'node:v8';
import vm from 'node:vm';
import type { Logger } from 'pino';
import { nativeHeapTrim } from './native-heap.js';

export interface MemoryReclaimOptions {
  /** How often the process is looked at, in ms. */
  readonly intervalMs: number;
  /** Growth of the resident set since the last reclaim that makes one worth its pause. */
  readonly growthBytes: number;
  /** The event loop's busy share over an interval below which the process counts as quiet. */
  readonly quietUtilization: number;
  /** Quiet intervals in a row before a reclaim. */
  readonly quietIntervals: number;
  /** The most requests an interval may take and still count as quiet (a monitor's probes). */
  readonly quietRequests: number;
  /** Requests taken since the process started; without it, only the event loop is looked at. */
  readonly requests?: () => number;
  readonly logger: Logger;
  /** The process's resident set in bytes. */
  readonly resident?: () => number;
  /** The event loop's busy share since the previous call. */
  readonly utilization?: () => number;
  /** Collects all the garbage it can and returns the pages it frees. */
  readonly collect?: () => void;
  /** Returns the C allocator's free pages to the system, after the collection (native-heap.ts's by default, where the platform has one). */
  readonly trim?: () => boolean;
}

export const MEMORY_RECLAIM_DEFAULTS = { intervalMs: 5_000, growthBytes: 32 * 1024 * 1024, quietUtilization: 0.05, quietIntervals: 6, quietRequests: 10 } as const;

export class MemoryReclaim {
  private timer: NodeJS.Timeout | undefined;
  /** The resident set right after the last reclaim (or at start): growth is measured from it. */
  private baseline: number;
  /** Quiet intervals since the event loop was last busy. */
  private quiet = 0;
  /** Requests taken as of the previous look. */
  private requestsSeen: number;
  private readonly resident: () => number;
  private readonly utilization: () => number;
  private readonly collect: () => void;
  private readonly trim: (() => boolean) | undefined;

  constructor(private readonly options: MemoryReclaimOptions) {
    this.resident = options.resident ?? (() => process.memoryUsage.rss());
    this.utilization = options.utilization ?? loopUtilization();
    this.collect = options.collect ?? lastResortCollection();
    this.trim = options.trim ?? nativeHeapTrim();
    this.baseline = this.resident();
    this.requestsSeen = options.requests?.() ?? 0;
  }

  /** Looks at the process every interval until `stop`; the timer does not keep the process alive. */
  start(): this {
    this.timer ??= setInterval(() => this.check(), this.options.intervalMs);
    this.timer.unref();
    return this;
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One look: reclaims when the last intervals were quiet and the process grew; true when it did. */
  check(): boolean {
    const requests = this.options.requests?.() ?? 0;
    const taken = requests - this.requestsSeen;
    this.requestsSeen = requests;
    this.quiet = this.utilization() < this.options.quietUtilization && taken <= this.options.quietRequests ? this.quiet + 1 : 0;
    const before = this.resident();
    if (this.quiet < this.options.quietIntervals || before - this.baseline < this.options.growthBytes) return false;
    const started = process.hrtime.bigint();
    this.collect();
    const collected = process.hrtime.bigint();
    const trimmed = this.trim?.();
    const pauseMs = Number(collected - started) / 1e6;
    const trimMs = Number(process.hrtime.bigint() - collected) / 1e6;
    this.baseline = this.resident();
    const { heapTotal, external } = process.memoryUsage();
    this.options.logger.debug(
      { rss_before_mb: mb(before), rss_after_mb: mb(this.baseline), heap_total_mb: mb(heapTotal), external_mb: mb(external), pause_ms: Math.round(pauseMs), native_heap_trimmed: trimmed ?? 'unsupported', trim_ms: Math.round(trimMs) },
      'memory given back after a burst of load',
    );
    return true;
  }
}

/** The share of the time the event loop was busy since the previous call (or since the process started). */
function loopUtilization(): () => number {
  let last: EventLoopUtilization | undefined;
  return () => {
    const now = performance.eventLoopUtilization();
    const share = performance.eventLoopUtilization(now, last).utilization;
    last = now;
    return share;
  };
}

/**
 * V8's collection of all available garbage. Its `gc` function is taken from a context of its own
 * made while `--expose-gc` is set, and the flag is cleared again at once, so no other context (the
 * server's own, or one a plugin makes) gets a `gc` global.
 */
export function lastResortCollection(): () => void {
  // A process started with --expose-gc keeps it.
  const exposed = process.execArgv.includes('--expose-gc');
  if (!exposed) v8.setFlagsFromString('--expose-gc');
  let gc: (options: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;
  try {
    gc = vm.runInNewContext('gc') as typeof gc;
  } finally {
    if (!exposed) v8.setFlagsFromString('--no-expose-gc');
  }
  return () => gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
}

function mb(bytes: number): number {
  return Math.round(bytes / (1024 * 1024));
}
