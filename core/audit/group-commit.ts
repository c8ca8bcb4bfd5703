/**
 * Group commit for an audit sink: lines handed in while a write is in flight wait, and the next
 * write carries all of them at once, so a busy server makes one write (one system call, one trip
 * through libuv's thread pool) for many entries instead of one each. The lines stay the Buffers
 * they were made as: the sink writes them with one gathered write (writev), never copied together.
 *
 * Order is kept: writes run one at a time (SerialQueue), a batch's lines are in the order they
 * were appended, and a batch is written before any batch or control step (reopen, close) queued
 * after it. A line's promise settles with the write that carried it, so an entry counts as recorded
 * only once the sink took it, and a failed write fails every line in it (the broker then refuses
 * those requests, never answers them unaudited). A sink whose lines go out one by one (a datagram
 * each) may instead report which of them failed, and only those fail.
 */
import { SerialQueue } from '../seal/serial.js';

/** Bytes one write may carry; a line that would take a batch past it starts the next batch. */
const MAX_BATCH_BYTES = 8 * 1024 * 1024;

/**
 * Writes a batch's lines (every line's parts, in order), resolving once the sink took every byte.
 * With `lineByLine`, where each line is one Buffer, it may instead resolve with each line's
 * failure (undefined for a line written).
 */
export type Flush = (lines: readonly Buffer[], bytes: number) => Promise<void | readonly (Error | undefined)[]>;

interface Batch {
  readonly lines: Buffer[];
  bytes: number;
  readonly written: Promise<void | readonly (Error | undefined)[]>;
}

export class GroupCommit {
  private readonly queue = new SerialQueue();
  /** The batch still taking lines: queued, not yet being written. */
  private open: Batch | undefined;

  /** @param lineByLine the flush may report failures line by line (a sink that sends each line alone). */
  constructor(
    private readonly flush: Flush,
    private readonly lineByLine = false,
  ) {}

  /**
   * Queues `line` (its parts, in order; a part may be shared with other lines) for the next write;
   * resolves once that write succeeded, rejects with its error. Line by line, a line is one Buffer.
   */
  append(line: Buffer | readonly Buffer[]): Promise<void> {
    const parts = Buffer.isBuffer(line) ? [line] : line;
    let size = 0;
    for (const part of parts) size += part.length;
    let batch = this.open;
    if (!batch || (batch.bytes > 0 && batch.bytes + size > MAX_BATCH_BYTES)) batch = this.startBatch();
    const index = batch.lines.length;
    for (const part of parts) batch.lines.push(part);
    batch.bytes += size;
    // A whole write's outcome is every line's: its promise as it is.
    if (!this.lineByLine) return batch.written as Promise<void>;
    return batch.written.then((failures) => {
      const failure = failures?.[index];
      if (failure) throw failure;
    });
  }

  /** Runs `work` (an open, reopen or close) after every line appended before it, and before any appended after. */
  run<T>(work: () => Promise<T>): Promise<T> {
    this.open = undefined;
    return this.queue.run(work);
  }

  private startBatch(): Batch {
    const lines: Buffer[] = [];
    const batch: Batch = {
      lines,
      bytes: 0,
      written: this.queue.run(() => {
        // From here on, lines go to the next batch.
        if (this.open === batch) this.open = undefined;
        return this.flush(lines, batch.bytes);
      }),
    };
    // Line by line, each line's own promise carries the outcome; this one must not count as unhandled.
    if (this.lineByLine) batch.written.catch(() => undefined);
    this.open = batch;
    return batch;
  }
}
