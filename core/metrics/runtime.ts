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

  constructor(registers: Registry[]) {
    const delay = (this.delay = monitorEventLoopDelay({ resolution: RESOLUTION_MS }));
    delay.enable();
    new Gauge({
      name: 'keywarden_runtime_event_loop_delay_seconds',
      help: 'Event-loop delay since the previous read of the metrics: median (quantile 0.5), 99th percentile and maximum (quantile 1).',
      labelNames: ['quantile'],
      registers,
      collect() {
        // The monitor reports nanoseconds; no sample yet reads as 0, not as its empty-histogram sentinel.
        const seconds = (ns: number) => (delay.count > 0 ? ns / 1e9 : 0);
        this.set({ quantile: '0.5' }, seconds(delay.percentile(50)));
        this.set({ quantile: '0.99' }, seconds(delay.percentile(99)));
        this.set({ quantile: '1' }, seconds(delay.max));
        delay.reset();
      },
    });
    const memory = (read: (usage: NodeJS.MemoryUsage) => number) =>
      function (this: Gauge) {
        this.set(read(process.memoryUsage()));
      };
    new Gauge({ name: 'keywarden_runtime_heap_used_bytes', help: 'V8 heap in use.', registers, collect: memory((m) => m.heapUsed) });
    new Gauge({ name: 'keywarden_runtime_heap_total_bytes', help: 'V8 heap reserved.', registers, collect: memory((m) => m.heapTotal) });
    new Gauge({ name: 'keywarden_runtime_resident_memory_bytes', help: 'Resident set size of the process.', registers, collect: memory((m) => m.rss) });
  }

  close(): void {
    this.delay.disable();
  }
}
