/**
 * The process as operators watch it: event-loop delay (one process serves every client on one
 * event loop, so its delay is every request's extra latency), heap and resident memory.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Gauge, type Registry } from 'prom-client';

/** The delay monitor's sampling resolution, in ms. */
const RESOLUTION_MS = 10;

export class RuntimeMetrics {
  private readonly delay: ReturnType<typeof monitorEventLoopDelay>;

  /** `own`: the labels of this process's series (a worker's number), on every one of them. */
  constructor(registers: Registry[], own: Readonly<Record<string, string>>) {
    const labelNames = Object.keys(own);
    const delay = (this.delay = monitorEventLoopDelay({ resolution: RESOLUTION_MS }));
    delay.enable();
    new Gauge({
      name: 'keywarden_runtime_event_loop_delay_seconds',
      help: 'Event-loop delay since the previous read of the metrics: median (quantile 0.5), 99th percentile and maximum (quantile 1).',
      labelNames: ['quantile', ...labelNames],
      registers,
      collect() {
        // The monitor reports nanoseconds; no sample yet reads as 0, not as its empty-histogram sentinel.
        const seconds = (ns: number) => (delay.count > 0 ? ns / 1e9 : 0);
        this.set({ quantile: '0.5', ...own }, seconds(delay.percentile(50)));
        this.set({ quantile: '0.99', ...own }, seconds(delay.percentile(99)));
        this.set({ quantile: '1', ...own }, seconds(delay.max));
        delay.reset();
      },
    });
    const memory = (read: (usage: NodeJS.MemoryUsage) => number) =>
      function (this: Gauge) {
        this.set(own, read(process.memoryUsage()));
      };
    new Gauge({ name: 'keywarden_runtime_heap_used_bytes', help: 'V8 heap in use.', labelNames, registers, collect: memory((m) => m.heapUsed) });
    new Gauge({ name: 'keywarden_runtime_heap_total_bytes', help: 'V8 heap reserved.', labelNames, registers, collect: memory((m) => m.heapTotal) });
    new Gauge({ name: 'keywarden_runtime_resident_memory_bytes', help: 'Resident set size of the process.', labelNames, registers, collect: memory((m) => m.rss) });
  }

  close(): void {
    this.delay.disable();
  }
}
