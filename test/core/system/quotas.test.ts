/**
 * Rate-limit quotas over HTTP (https://developer.hashicorp.com/vault/api-docs/system/quotas-rate-limit):
 * sys/quotas/config and sys/quotas/rate-limit/:name with Vault's fields, a 429 once a client's
 * bucket is empty, the most specific rule applying, exempt paths, the X-Ratelimit-* headers and
 * block_interval. Each scenario sends its limited requests from its own 127.x address, as another
 * client, so the operator's client (127.0.0.1) is never limited by them.
 */
import { expect } from 'chai';
import { ManualClock, startUnsealedServer } from '../../helpers/server.js';
import type { TestClient, TestResponse } from '../../helpers/http.js';
import type { RunningServer } from '../../../core/server.js';

describe('sys/quotas', function () {
  this.timeout(60_000);
  const clock = new ManualClock();
  let server: RunningServer & { client: TestClient; rootToken: string };
  let root: TestClient;

  before(async () => {
    server = await startUnsealedServer({ plugins: [], clock });
    root = server.client;
    for (const mount of ['limited', 'free']) expect((await root.post(`sys/mounts/${mount}`, { type: 'kv' })).status).to.equal(204);
    await root.post('limited/open/note', { text: 'x' });
    await root.post('limited/note', { text: 'x' });
    await root.post('free/note', { text: 'x' });
  });
  after(() => server.close());
  afterEach(async () => {
    for (const name of ((await root.list('sys/quotas/rate-limit')).body?.data?.keys ?? []) as string[]) await root.delete(`sys/quotas/rate-limit/${name}`);
    await root.post('sys/quotas/config', { enable_rate_limit_response_headers: false, rate_limit_exempt_paths: defaults });
  });

  const defaults = ['sys/generate-recovery-token/attempt', 'sys/generate-recovery-token/update', 'sys/generate-root/attempt', 'sys/generate-root/update', 'sys/health', 'sys/seal-status', 'sys/unseal'];
  /** `times` reads of `path` from the client at `from`, with the root token; their statuses. */
  async function statuses(path: string, from: string, times: number): Promise<number[]> {
    const out: number[] = [];
    for (let i = 0; i < times; i++) out.push((await root.get(path, { localAddress: from })).status);
    return out;
  }
  const from = (address: string) => ({ localAddress: address });

  it('reads Vault\'s defaults from sys/quotas/config: the unseal and recovery paths exempt, no headers, no audit', async () => {
    const res = await root.get('sys/quotas/config');
    expect(res.status, res.text).to.equal(200);
    expect(res.body.data).to.deep.equal({ enable_rate_limit_audit_logging: false, enable_rate_limit_response_headers: false, rate_limit_exempt_paths: defaults });
  });

  it('writes, reads and lists a rate-limit quota with Vault\'s fields', async () => {
    const written = await root.post('sys/quotas/rate-limit/limited-mount', { path: 'limited/', rate: 2.5, interval: '1m', block_interval: '5m' });
    expect(written.status, written.text).to.equal(204);
    const read = await root.get('sys/quotas/rate-limit/limited-mount');
    expect(read.body.data).to.deep.equal({ type: 'rate-limit', name: 'limited-mount', path: 'limited/', role: '', rate: 2.5, interval: 60, block_interval: 300, inheritable: false });
    expect((await root.post('sys/quotas/rate-limit/everything', { rate: 1000 })).status).to.equal(204);
    expect((await root.get('sys/quotas/rate-limit/everything')).body.data).to.include({ path: '', interval: 1, inheritable: true });
    expect((await root.list('sys/quotas/rate-limit')).body.data.keys).to.deep.equal(['everything', 'limited-mount']);
    expect((await root.delete('sys/quotas/rate-limit/everything')).status).to.equal(204);
    expect((await root.get('sys/quotas/rate-limit/everything')).status).to.equal(404);
  });

  it('answers 400 naming the problem: a rate that is not positive, an unknown mount, a role, a second quota on one path', async () => {
    const zero = await root.post('sys/quotas/rate-limit/bad', { path: 'limited/', rate: 0 });
    expect([zero.status, zero.body.errors]).to.deep.equal([400, ["'rate' is invalid"]]);
    const missing = await root.post('sys/quotas/rate-limit/bad', { path: 'nowhere/', rate: 1 });
    expect([missing.status, missing.body.errors]).to.deep.equal([400, ['invalid mount path "nowhere/"']]);
    const role = await root.post('sys/quotas/rate-limit/bad', { path: 'limited/', rate: 1, role: 'admin' });
    expect(role.status).to.equal(400);
    expect(role.body.errors[0]).to.match(/^role: /);
    await root.post('sys/quotas/rate-limit/first', { path: 'limited/', rate: 1 });
    const second = await root.post('sys/quotas/rate-limit/second', { path: 'limited', rate: 5 });
    expect([second.status, second.body.errors]).to.deep.equal([400, ['quota rule with similar properties exists under the name "first"']]);
  });

  it('answers 429 with Vault\'s error once a client has used the rate, for that client and that mount only', async () => {
    await root.post('sys/quotas/rate-limit/three', { path: 'limited/', rate: 3, interval: '1h' });
    expect(await statuses('limited/note', '127.0.0.2', 4)).to.deep.equal([200, 200, 200, 429]);
    const refused = await root.get('limited/note', from('127.0.0.2'));
    expect(refused.body.errors).to.deep.equal(['request path "limited/note": rate limit quota exceeded']);
    expect(refused.headers['retry-after'], 'headers are off').to.equal(undefined);
    expect(await statuses('free/note', '127.0.0.2', 5), 'another mount').to.deep.equal([200, 200, 200, 200, 200]);
    expect(await statuses('limited/note', '127.0.0.3', 3), 'another client').to.deep.equal([200, 200, 200]);
    clock.advance(3600);
    expect(await statuses('limited/note', '127.0.0.2', 1), 'a new interval').to.deep.equal([200]);
  });

  it('sends X-Ratelimit-Limit, -Remaining, -Reset, and Retry-After on a refusal, once response headers are on', async () => {
    await root.post('sys/quotas/config', { enable_rate_limit_response_headers: true });
    expect((await root.get('sys/quotas/config')).body.data.rate_limit_exempt_paths, 'left as they were').to.deep.equal(defaults);
    await root.post('sys/quotas/rate-limit/two', { path: 'limited/', rate: 2, interval: '1m' });
    const first = await root.get('limited/note', from('127.0.0.4'));
    expect(first.headers).to.include({ 'x-ratelimit-limit': '2', 'x-ratelimit-remaining': '1', 'x-ratelimit-reset': '60' });
    await root.get('limited/note', from('127.0.0.4'));
    const refused = await root.get('limited/note', from('127.0.0.4'));
    expect(refused.status).to.equal(429);
    expect(refused.headers).to.include({ 'x-ratelimit-remaining': '0', 'retry-after': '60' });
    expect((await root.get('free/note', from('127.0.0.4'))).headers['x-ratelimit-limit'], 'no rule there').to.equal(undefined);
  });

  it('applies the most specific quota: a path prefix under the mount before the mount, the mount before the global one', async () => {
    await root.post('sys/quotas/rate-limit/global', { rate: 100, interval: '1h' });
    await root.post('sys/quotas/rate-limit/mount', { path: 'limited/', rate: 1, interval: '1h' });
    await root.post('sys/quotas/rate-limit/open', { path: 'limited/open*', rate: 3, interval: '1h' });
    expect(await statuses('limited/open/note', '127.0.0.5', 4)).to.deep.equal([200, 200, 200, 429]);
    expect(await statuses('limited/note', '127.0.0.5', 2)).to.deep.equal([200, 429]);
    expect(await statuses('free/note', '127.0.0.5', 3)).to.deep.equal([200, 200, 200]);
  });

  it('never limits an exempt path, and limits it once it is no longer exempt', async () => {
    await root.post('sys/quotas/rate-limit/status', { path: 'sys/seal-status', rate: 1, interval: '1h' });
    expect(await statuses('sys/seal-status', '127.0.0.6', 3)).to.deep.equal([200, 200, 200]);
    await root.post('sys/quotas/config', { rate_limit_exempt_paths: ['sys/health'] });
    expect(await statuses('sys/seal-status', '127.0.0.6', 2)).to.deep.equal([200, 429]);
  });

  it('keeps refusing a client for block_interval, past the end of the interval', async () => {
    await root.post('sys/quotas/rate-limit/blocking', { path: 'limited/', rate: 1, interval: '1m', block_interval: '1h' });
    await root.post('sys/quotas/config', { enable_rate_limit_response_headers: true });
    expect(await statuses('limited/note', '127.0.0.7', 2)).to.deep.equal([200, 429]);
    clock.advance(120);
    const blocked: TestResponse = await root.get('limited/note', from('127.0.0.7'));
    expect(blocked.status).to.equal(429);
    expect(Number(blocked.headers['retry-after'])).to.be.within(3470, 3480);
    clock.advance(3600);
    expect(await statuses('limited/note', '127.0.0.7', 1)).to.deep.equal([200]);
  });

  it('limits before authentication: requests with a bad token are refused by the quota too', async () => {
    await root.post('sys/quotas/rate-limit/logins', { path: 'limited/', rate: 1, interval: '1h' });
    const bad = (await root.get('limited/note', { localAddress: '127.0.0.8', token: 'hvs.not-a-token' })).status;
    const again = (await root.get('limited/note', { localAddress: '127.0.0.8', token: 'hvs.not-a-token' })).status;
    expect([bad, again]).to.deep.equal([403, 429]);
  });
});
