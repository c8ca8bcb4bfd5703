/**
 * Group commit for an audit sink: lines handed in while a write is in flight wait, and the next
 * write carries all of them at once, so a busy server makes one write (one system call, one trip
 * through libuv's thread pool) for many entries instead of one each.
 *
 * Order is kept: writes run one at a time (SerialQueue), a batch's lines are in the order they
 * were appended, and a batch is written before any batch or control step (reopen, close) queued
 * after it. A line's promise settles with the write that carried it, so an entry counts as recorded
 * only once the sink took it, and a failed write fails every line in it (the broker then refuses
 * those requests, never answers them unaudited).
 */
import { SerialQueue } from '../seal/serial.js';

/**
 * UTF-16 code units one write may carry; a line that would take a batch past it starts the next
 * batch, so a burst of large entries (a 32 MiB batch request's) never makes one giant string.
 */
const MAX_BATCH_CHARS = 8 * 1024 * 1024;

interface Batch {
  readonly lines: string[];
  chars: number;
  readonly written: Promise<void>;
}

export class GroupCommit {
  private readonly queue = new SerialQueue();
  /** The batch still taking lines: queued, not yet being written. */
  private open: Batch | undefined;

  /** @param flush writes a batch's lines, joined, to the sink; resolves once the sink took every byte. */
  constructor(private readonly flush: (text: string, lines: number) => Promise<void>) {}

  /** Queues `line` for the next write; resolves once that write succeeded, rejects with its error. */
  append(line: string): Promise<void> {
    let batch = this.open;
    if (!batch || (batch.chars > 0 && batch.chars + line.length > MAX_BATCH_CHARS)) batch = this.startBatch();
    batch.lines.push(line);
    batch.chars += line.length;
    return batch.written;
  }

  /** Runs `work` (an open, reopen or close) after every line appended before it, and before any appended after. */
  run<T>(work: () => Promise<T>): Promise<T> {
    this.open = undefined;
    return this.queue.run(work);
  }

  private startBatch(): Batch {
    const lines: string[] = [];
    const batch: Batch = {
      lines,
      chars: 0,
      written: this.queue.run(() => {
        // From here on, lines go to the next batch.
        if (this.open === batch) this.open = undefined;
        return this.flush(lines.length === 1 ? lines[0]! : lines.join(''), lines.length);
      }),
    };
    this.open = batch;
    return batch;
  }
}
