/**
 * bcrypt for userpass passwords, with bcryptjs (a maintained pure-JavaScript bcrypt: nothing to
 * compile, so it runs wherever the server does). bcrypt is slow on purpose — a cost-10 hash takes
 * a good part of a second of one core on a small machine — and bcryptjs gives the event loop back
 * only after each 100 ms of work. So in the server's own process it runs on worker threads, and a
 * login never holds up other clients. Where worker threads are not allowed (an isolated plugin's
 * process runs under Node's permission model without them) it runs in the calling thread: that
 * process serves this one mount, and its host is not held up.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';

/** Vault's cost (golang.org/x/crypto/bcrypt DefaultCost). */
export const DEFAULT_BCRYPT_COST = 10;

export type HashJob =
  | { readonly id: number; readonly op: 'hash'; readonly password: string; readonly cost: number }
  | { readonly id: number; readonly op: 'compare'; readonly password: string; readonly hash: string };

export type HashResult = { readonly id: number; readonly ok: true; readonly value: string | boolean } | { readonly id: number; readonly ok: false; readonly error: string };

export interface PasswordHasher {
  /** A bcrypt hash of `password` with a fresh salt. */
  hash(password: string, cost: number): Promise<string>;
  /** Whether `password` matches the bcrypt `hash`. */
  verify(password: string, hash: string): Promise<boolean>;
  /** Stops the worker threads (when the mount goes away). */
  close(): Promise<void>;
}

/** Worker threads where the process may start them, the calling thread otherwise. */
export function createHasher(threads = Math.min(4, availableParallelism())): PasswordHasher {
  const permission = (process as { permission?: { has(scope: string): boolean } }).permission;
  return permission && !permission.has('worker') ? new InlineHasher() : new WorkerHasher(threads);
}

/** bcryptjs for this thread, loaded by the first InlineHasher that hashes: the worker threads load their own (hash-worker.ts). */
const loadBcrypt = () => import('bcryptjs').then((module) => module.default);

class InlineHasher implements PasswordHasher {
  async hash(password: string, cost: number): Promise<string> {
    return (await loadBcrypt()).hash(password, cost);
  }

  async verify(password: string, hash: string): Promise<boolean> {
    return (await loadBcrypt()).compare(password, hash);
  }

  async close(): Promise<void> {}
}

interface Pending {
  resolve(value: string | boolean): void;
  reject(err: Error): void;
}

interface Thread {
  readonly worker: Worker;
  readonly pending: Map<number, Pending>;
}

/** Up to `size` workers, started on first use; each job goes to the least busy one. */
class WorkerHasher implements PasswordHasher {
  private readonly threads: Thread[] = [];
  private nextId = 0;

  constructor(private readonly size: number) {}

  async hash(password: string, cost: number): Promise<string> {
    return (await this.run({ id: this.nextId++, op: 'hash', password, cost })) as string;
  }

  async verify(password: string, hash: string): Promise<boolean> {
    return (await this.run({ id: this.nextId++, op: 'compare', password, hash })) as boolean;
  }

  async close(): Promise<void> {
    const threads = this.threads.splice(0);
    await Promise.all(threads.map((t) => t.worker.terminate()));
  }

  private run(job: HashJob): Promise<string | boolean> {
    const thread = this.threadFor();
    return new Promise((resolve, reject) => {
      thread.pending.set(job.id, { resolve, reject });
      thread.worker.ref();
      thread.worker.postMessage(job);
    });
  }

  private threadFor(): Thread {
    const idle = this.threads.find((t) => t.pending.size === 0);
    if (idle) return idle;
    if (this.threads.length < this.size) return this.start();
    return this.threads.reduce((least, t) => (t.pending.size < least.pending.size ? t : least));
  }

  private start(): Thread {
    const worker = new Worker(new URL('./hash-worker.js', import.meta.url));
    const thread: Thread = { worker, pending: new Map() };
    worker.on('message', (result: HashResult) => {
      const waiter = thread.pending.get(result.id);
      if (!waiter) return;
      thread.pending.delete(result.id);
      // An idle worker does not keep the process alive.
      if (thread.pending.size === 0) worker.unref();
      if (result.ok) waiter.resolve(result.value);
      else waiter.reject(new Error(`bcrypt failed: ${result.error}`));
    });
    const fail = (err: Error) => {
      const index = this.threads.indexOf(thread);
      if (index >= 0) this.threads.splice(index, 1);
      for (const waiter of thread.pending.values()) waiter.reject(err);
      thread.pending.clear();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`the bcrypt worker stopped (exit code ${code})`)));
    worker.unref();
    this.threads.push(thread);
    return thread;
  }
}
