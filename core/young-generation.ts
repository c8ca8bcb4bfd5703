/**
 * Holds V8's young generation at a bounded size (docs/deployment.md, "Memory").
 *
 * Under steady load V8 doubles the young generation each time enough of it has survived since it
 * last grew, up to 128 MB of new space on Node 24, and does not shrink it while the process keeps
 * allocating: a server's resident set climbs in steps of tens of megabytes long after its start,
 * and each scavenge of a larger young generation copies more. The limit is a V8 flag the server
 * cannot pass to itself (`--max-semi-space-size`: V8 sizes its heap before any JavaScript runs),
 * but V8 reads the growth factor each time it grows the young generation, so once the young
 * generation has reached the cap growth is switched off, and on again when it is smaller (after
 * the idle reclaim's collection has shrunk it). The process hears of a collection after the event
 * loop's next turn, so within one long synchronous stretch V8 may grow the young generation once
 * or twice past the cap before growth is switched off. Node's documentation warns that a flag changed
 * after start may do nothing or worse (https://nodejs.org/api/v8.html#v8setflagsfromstringflags);
 * this one is a number V8 reads at each growth, and test/core/young-generation.test.ts checks in a
 * real process that it still holds the young generation, so a Node whose V8 stops reading it fails
 * there rather than quietly growing again in production. An operator who starts Node with
 * `--max-semi-space-size` has chosen the size: the cap then stays out of the way.
 */
import { PerformanceObserver } from 'node:perf_hooks';
import v8 from 'node:v8';

/**
 * New space (both semi-spaces, as V8's heap statistics count it) at which growth is switched off.
 * A loaded server lands one doubling past it (64 MB), the growth under way when it got there.
 */
export const YOUNG_GENERATION_CAP_BYTES = 32 * 1024 * 1024;

/** V8's own growth factor (`--semi-space-growth-factor`'s default). */
const GROWTH_FACTOR = 2;

export interface YoungGenerationCapOptions {
  /** The new space's size now; V8's heap statistics by default. */
  newSpaceBytes?: () => number;
  /** Sets V8's growth factor; `v8.setFlagsFromString` by default. */
  setGrowth?: (factor: number) => void;
  /** The flags Node was started with: its arguments and NODE_OPTIONS by default. */
  nodeFlags?: readonly string[];
}

export class YoungGenerationCap {
  private growing = true;
  private observer: PerformanceObserver | undefined;
  private readonly newSpaceBytes: () => number;
  private readonly setGrowth: (factor: number) => void;
  /** False when the operator sized the young generation with Node's own flag. */
  readonly active: boolean;

  constructor(private readonly capBytes: number, options: YoungGenerationCapOptions = {}) {
    this.newSpaceBytes = options.newSpaceBytes ?? newSpaceSize;
    this.setGrowth = options.setGrowth ?? ((factor) => v8.setFlagsFromString(`--semi-space-growth-factor=${factor}`));
    const flags = options.nodeFlags ?? [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
    this.active = !flags.some((flag) => /^--max[-_]semi[-_]space[-_]size\b/.test(flag));
  }

  /** Looks after every collection until `stop`. */
  start(): this {
    if (!this.active) return this;
    this.check();
    this.observer ??= new PerformanceObserver(() => this.check());
    this.observer.observe({ entryTypes: ['gc'] });
    return this;
  }

  stop(): void {
    this.observer?.disconnect();
    this.observer = undefined;
    if (!this.growing) this.setGrowth(GROWTH_FACTOR);
    this.growing = true;
  }

  /** After a collection: growth off at the cap, on again below it. */
  check(): void {
    if (!this.active) return;
    const atCap = this.newSpaceBytes() >= this.capBytes;
    if (atCap === !this.growing) return;
    this.growing = !atCap;
    this.setGrowth(atCap ? 1 : GROWTH_FACTOR);
  }
}

function newSpaceSize(): number {
  return v8.getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? 0;
}
