/**
 * The other way of parsing a large body without holding the event loop, measured against the
 * server's (core/http/json-sliced.ts) by event-loop-parse.bench.ts: the body's bytes are moved to a
 * worker thread without copying (their ArrayBuffer transferred), checked against the listener's
 * limits, decoded and parsed there in one go, and the value comes back by postMessage, whose
 * structured clone the main thread reads in one go.
 */
import { isMainThread, parentPort, Worker } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import { checkJsonLimits, type JsonLimits } from '../../core/http/json-limits.js';
import { scanJson } from '../../core/framework/exact-json.js';

interface Job {
  readonly id: number;
  readonly bytes: ArrayBuffer;
  readonly limits: JsonLimits;
}
type Answer = { readonly id: number; readonly value: unknown; readonly inexact: boolean } | { readonly id: number; readonly error: string };

/** One worker thread taking bodies one after another. */
export class ParseWorker {
  private readonly worker = new Worker(fileURLToPath(import.meta.url));
  private readonly waiting = new Map<number, { resolve: (v: { value: unknown; inexact: boolean }) => void; reject: (e: Error) => void }>();
  private next = 0;

  constructor() {
    this.worker.on('message', (answer: Answer) => {
      const job = this.waiting.get(answer.id)!;
      this.waiting.delete(answer.id);
      if ('error' in answer) job.reject(new Error(answer.error));
      else job.resolve({ value: answer.value, inexact: answer.inexact });
    });
  }

  /** Parses `raw`, whose memory goes to the worker: it must own its ArrayBuffer whole, and is unusable afterwards. */
  parse(raw: Buffer, limits: JsonLimits): Promise<{ value: unknown; inexact: boolean }> {
    if (raw.byteOffset !== 0 || raw.byteLength !== raw.buffer.byteLength) throw new Error('the body must own its ArrayBuffer to be transferred');
    const id = this.next++;
    const bytes = raw.buffer as ArrayBuffer;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.worker.postMessage({ id, bytes, limits } satisfies Job, [bytes]);
    });
  }

  close(): Promise<number> {
    return this.worker.terminate();
  }
}

if (!isMainThread) {
  parentPort!.on('message', ({ id, bytes, limits }: Job) => {
    try {
      const raw = Buffer.from(bytes);
      checkJsonLimits(raw, limits);
      const text = raw.toString('utf8');
      const value = JSON.parse(text) as unknown;
      parentPort!.postMessage({ id, value, inexact: scanJson(text).inexact } satisfies Answer);
    } catch (err) {
      parentPort!.postMessage({ id, error: err instanceof Error ? err.message : String(err) } satisfies Answer);
    }
  });
}
