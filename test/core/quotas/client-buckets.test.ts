/** A rate-limit quota's counters: a bucket per client, filled again each interval, bounded in number. */
import { expect } from 'chai';
import { ClientBuckets } from '../../../core/quotas/client-buckets.js';

describe('rate-limit quota counters', () => {
  it('allows `limit` requests per client per interval and says when the bucket is full again', () => {
    const buckets = new ClientBuckets(2, 60_000, 0);
    expect(buckets.take('a', 0)).to.deep.equal({ allowed: true, limit: 2, remaining: 1, reset: 60 });
    expect(buckets.take('a', 30_000)).to.deep.equal({ allowed: true, limit: 2, remaining: 0, reset: 30 });
    expect(buckets.take('a', 30_000)).to.deep.equal({ allowed: false, limit: 2, remaining: 0, reset: 30, retryAfter: 30 });
    expect(buckets.take('b', 30_000).allowed, 'another client').to.equal(true);
    expect(buckets.take('a', 60_000).allowed, 'the next interval').to.equal(true);
  });

  it('refuses a client that went over the rate for block_interval, past the end of its interval', () => {
    const buckets = new ClientBuckets(1, 1_000, 10_000);
    buckets.take('a', 0);
    expect(buckets.take('a', 0)).to.include({ allowed: false, retryAfter: 10 });
    expect(buckets.take('a', 5_000)).to.include({ allowed: false, retryAfter: 5 });
    expect(buckets.take('a', 10_000).allowed).to.equal(true);
  });

  it('keeps at most maxClients buckets, dropping the client seen least recently, which starts again full', () => {
    const buckets = new ClientBuckets(1, 60_000, 0, 3);
    for (const client of ['a', 'b', 'c']) buckets.take(client, 0);
    expect(buckets.take('a', 0).allowed, 'a is empty, and now the most recent').to.equal(false);
    buckets.take('d', 0);
    expect(buckets.size).to.equal(3);
    expect(buckets.take('b', 0).allowed, 'b was dropped: a full bucket').to.equal(true);
    expect(buckets.take('c', 0).allowed, 'c was dropped when b came back').to.equal(true);
  });
});
