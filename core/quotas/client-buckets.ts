/**
 * The counters of one rate-limit quota: a bucket of `limit` requests per client address, filled
 * again at the end of each `interval` from the client's first request in it, as Vault's rate-limit
 * quotas count (https://developer.hashicorp.com/vault/docs/concepts/resource-quotas). A client
 * refused while the quota has a `block_interval` is refused for that long. Counters live in this
 * process's memory only; at most MAX_CLIENTS clients are tracked per quota, the one seen least
 * recently dropped first (it starts again with a full bucket).
 */

/** Clients tracked per quota: a bucket is two numbers, so this bounds a quota's memory to a few MB. */
export const MAX_CLIENTS = 50_000;

/** The answer for one request: whether it may go ahead, and Vault's X-Ratelimit-* values. */
export interface Take {
  readonly allowed: boolean;
  readonly limit: number;
  readonly remaining: number;
  /** Seconds until the bucket is full again. */
  readonly reset: number;
  /** Seconds the client should wait; set when refused. */
  readonly retryAfter?: number;
}

interface Bucket {
  /** When the bucket is full again, ms since the epoch. */
  refillAt: number;
  remaining: number;
}

export class ClientBuckets {
  private readonly buckets = new Map<string, Bucket>();
  /** Clients refused while blocking applies, until when (ms since the epoch). */
  private readonly blocked = new Map<string, number>();

  constructor(
    readonly limit: number,
    private readonly intervalMs: number,
    private readonly blockMs: number,
    private readonly maxClients = MAX_CLIENTS,
  ) {}

  /** How many clients have a bucket now (bounded by maxClients). */
  get size(): number {
    return this.buckets.size;
  }

  /** Takes one request from `client`'s bucket at `now` (ms since the epoch). */
  take(client: string, now: number): Take {
    const until = this.blocked.get(client);
    if (until !== undefined) {
      if (now < until) {
        const wait = Math.ceil((until - now) / 1000);
        return { allowed: false, limit: this.limit, remaining: 0, reset: wait, retryAfter: wait };
      }
      this.blocked.delete(client);
    }
    let bucket = this.buckets.get(client);
    if (bucket === undefined || now >= bucket.refillAt) {
      bucket = { refillAt: now + this.intervalMs, remaining: this.limit };
    }
    // Delete and set again: the map's order is then least recently seen first, for eviction.
    this.buckets.delete(client);
    this.buckets.set(client, bucket);
    if (this.buckets.size > this.maxClients) this.buckets.delete(this.buckets.keys().next().value!);
    const reset = Math.ceil((bucket.refillAt - now) / 1000);
    if (bucket.remaining > 0) {
      bucket.remaining--;
      return { allowed: true, limit: this.limit, remaining: bucket.remaining, reset };
    }
    if (this.blockMs > 0) {
      this.blocked.set(client, now + this.blockMs);
      if (this.blocked.size > this.maxClients) this.blocked.delete(this.blocked.keys().next().value!);
      const wait = Math.ceil(this.blockMs / 1000);
      return { allowed: false, limit: this.limit, remaining: 0, reset, retryAfter: wait };
    }
    return { allowed: false, limit: this.limit, remaining: 0, reset, retryAfter: reset };
  }
}
