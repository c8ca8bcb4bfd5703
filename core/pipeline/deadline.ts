/**
 * Around the handler: the request's deadline, the listener's `max_request_duration` (90 s by
 * default, as in Vault: https://developer.hashicorp.com/vault/docs/configuration/listener/tcp).
 * Once it passes, the request answers 504 whatever its handler is doing, and the handler's work is
 * abandoned: its storage refuses every call from then on, so a handler part way through its writes
 * makes no more of them, and its signal is aborted, which an isolated plugin's backend answers by
 * restarting the process that ignored it (core/plugins/isolation/isolated-backend.ts). Writes the
 * handler made before the deadline stay, as they would had it returned then.
 */
import { DeadlineExceededError } from '../errors.js';
import type { BatchOp, Storage } from '../../storage/storage.js';

export const DEFAULT_MAX_REQUEST_DURATION_MS = 90_000;

export class RequestDeadline {
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly durationMs: number) {
    this.timer = setTimeout(() => this.controller.abort(this.error()), durationMs);
    // A pending deadline never keeps the process alive on its own.
    this.timer.unref();
  }

  /** Aborted when the deadline passes; its reason is the 504. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The request is over: its deadline no longer matters. */
  clear(): void {
    clearTimeout(this.timer);
  }

  /** `work`, or the 504 if the deadline passes first (work settling later is ignored). */
  race<T>(work: Promise<T>): Promise<T> {
    const signal = this.controller.signal;
    if (signal.aborted) {
      work.catch(() => undefined);
      return Promise.reject(this.error());
    }
    return new Promise<T>((resolve, reject) => {
      const expire = (): void => reject(this.error());
      signal.addEventListener('abort', expire, { once: true });
      work.then(
        (value) => {
          signal.removeEventListener('abort', expire);
          resolve(value);
        },
        (err: unknown) => {
          signal.removeEventListener('abort', expire);
          reject(err);
        },
      );
    });
  }

  /** `storage` as the handler sees it: every call after the deadline is refused with the 504. */
  guard(storage: Storage): Storage {
    return new DeadlineStorage(storage, this);
  }

  /** @throws DeadlineExceededError once the deadline has passed. */
  check(): void {
    if (this.controller.signal.aborted) throw this.error();
  }

  private error(): DeadlineExceededError {
    return new DeadlineExceededError(`context deadline exceeded: the request ran longer than ${this.durationMs / 1000} s, the listener's max_request_duration`);
  }
}

class DeadlineStorage implements Storage {
  constructor(
    private readonly inner: Storage,
    private readonly deadline: RequestDeadline,
  ) {}

  async get(key: string): Promise<Uint8Array | undefined> {
    this.deadline.check();
    return this.inner.get(key);
  }

  async put(key: string, value: Uint8Array): Promise<void> {
    this.deadline.check();
    return this.inner.put(key, value);
  }

  async delete(key: string): Promise<void> {
    this.deadline.check();
    return this.inner.delete(key);
  }

  async list(prefix: string): Promise<string[]> {
    this.deadline.check();
    return this.inner.list(prefix);
  }

  async batch(ops: readonly BatchOp[]): Promise<void> {
    this.deadline.check();
    return this.inner.batch(ops);
  }
}
