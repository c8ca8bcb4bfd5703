/**
 * The PostgreSQL HA lease (storage/postgresql-ha.ts) on a real server: a leader that stops
 * without closing its session is replaced once its lease runs out, and cannot write after that.
 * The leader reaches the database through a proxy that can hold every byte back while the
 * connections stay open, which is what the database sees of a frozen process.
 */
import { expect } from 'chai';
import pg from 'pg';
import { NotActiveError } from '../../core/errors.js';
import { PostgresStorage } from '../../storage/postgresql.js';
import type { LeaseTimes } from '../../storage/postgresql-ha.js';
import type { Leadership } from '../../storage/storage.js';
import { createTestDatabase } from '../helpers/postgres.js';
import { TcpProxy } from '../ha/tcp-proxy.js';
import { bytes, caught, text } from './helpers.js';

const LEASE: LeaseTimes = { leaseMs: 1500, renewMs: 250 };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('PostgresHaLock: the leader lease', function () {
  this.timeout(60_000);
  let url: string;
  let proxy: TcpProxy;
  let viaProxy: string;

  before(async () => {
    url = await createTestDatabase();
    const target = new URL(url);
    proxy = await TcpProxy.start({ host: target.hostname, port: Number(target.port) });
    const proxied = new URL(url);
    proxied.port = String(proxy.port);
    viaProxy = proxied.toString();
  });

  after(async () => {
    await proxy.close();
  });

  afterEach(() => proxy.resume());

  const open = (table: string, nodeId: string, through = url) =>
    PostgresStorage.open({ connectionUrl: through, table, nodeId, haEnabled: true, haLease: LEASE, connectTimeoutMs: 2000 });

  /** Tries to take the role every 50 ms for up to `withinMs`; the leadership and when it was taken. */
  async function takeOver(store: PostgresStorage, nodeId: string, withinMs: number): Promise<{ taken: Leadership | undefined; afterMs: number }> {
    const start = Date.now();
    while (Date.now() - start < withinMs) {
      const taken = await store.ha!.tryAcquire({ nodeId, apiAddr: `http://${nodeId}` });
      if (taken) return { taken, afterMs: Date.now() - start };
      await sleep(50);
    }
    return { taken: undefined, afterMs: Date.now() - start };
  }

  it('keeps a leader that renews its lease: a standby never takes the role from it', async () => {
    const a = await open('lease_live', 'a');
    const b = await open('lease_live', 'b');
    try {
      const lead = await a.ha!.tryAcquire({ nodeId: 'a', apiAddr: 'http://a' });
      expect(lead).to.not.equal(undefined);
      const { taken } = await takeOver(b, 'b', 3 * LEASE.leaseMs);
      expect(taken, 'a standby took the role from a live leader').to.equal(undefined);
      expect(await b.ha!.leader()).to.include({ nodeId: 'a' });
      await a.put('k', bytes('still the leader'));
      expect(text(await b.get('k'))).to.equal('still the leader');
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('hands the role to a standby once a frozen leader\'s lease runs out, and the woken leader cannot write and steps down', async () => {
    const a = await open('lease_frozen', 'a', viaProxy);
    const b = await open('lease_frozen', 'b');
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      const lead = await a.ha!.tryAcquire({ nodeId: 'a', apiAddr: 'http://a' });
      expect(lead).to.not.equal(undefined);
      await a.put('k', bytes('before the freeze'));
      const holder = (await admin.query(`SELECT holder_pid FROM lease_frozen_ha WHERE name = 'leader'`)).rows[0].holder_pid as number;
      proxy.pause();
      const { taken, afterMs } = await takeOver(b, 'b', 4 * LEASE.leaseMs);
      expect(taken, 'no standby took over from the frozen leader').to.not.equal(undefined);
      expect(afterMs, 'taken over before the lease ran out').to.be.greaterThan(LEASE.leaseMs - 2 * LEASE.renewMs);
      // The frozen leader's session is still open: only the lease ended its role.
      expect((await admin.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [holder])).rowCount).to.equal(1);
      expect(taken!.epoch).to.be.greaterThan(lead!.epoch);
      await b.put('k', bytes('from the new leader'));
      proxy.resume();
      const err = await caught(a.put('k', bytes('from the woken leader')));
      expect(err).to.be.instanceOf(NotActiveError);
      expect(await lead!.lost, 'the woken leader steps down').to.be.a('string');
      expect(text(await b.get('k'))).to.equal('from the new leader');
    } finally {
      proxy.resume();
      await admin.end();
      await a.close();
      await b.close();
    }
  });

  it('refuses the writes of a leader whose lease ran out even before any other node takes over', async () => {
    const a = await open('lease_lapsed', 'a', viaProxy);
    const b = await open('lease_lapsed', 'b');
    try {
      const lead = await a.ha!.tryAcquire({ nodeId: 'a', apiAddr: 'http://a' });
      expect(lead).to.not.equal(undefined);
      await a.put('k', bytes('acknowledged'));
      proxy.pause();
      // The write is sent while frozen and reaches the database only after the lease has run out.
      const late = caught(a.put('k', bytes('too late')));
      await sleep(LEASE.leaseMs + 500);
      proxy.resume();
      expect(await late).to.be.instanceOf(NotActiveError);
      expect(text(await b.get('k'))).to.equal('acknowledged');
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('hands the role over at once, without waiting out the lease, when a leader gives it up', async () => {
    const a = await open('lease_release', 'a');
    const b = await open('lease_release', 'b');
    try {
      const lead = await a.ha!.tryAcquire({ nodeId: 'a', apiAddr: 'http://a' });
      await lead!.release();
      expect(await b.ha!.leader(), 'nobody leads after a release').to.equal(undefined);
      const taken = await b.ha!.tryAcquire({ nodeId: 'b', apiAddr: 'http://b' });
      expect(taken).to.not.equal(undefined);
      expect(await a.ha!.leader()).to.include({ nodeId: 'b' });
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('answers a standby\'s look-up of the leader within seconds, not when a paused database resumes (requests wait on it)', async () => {
    const a = await open('lease_lookup', 'a');
    const b = await open('lease_lookup', 'b', viaProxy);
    try {
      await a.ha!.tryAcquire({ nodeId: 'a', apiAddr: 'http://a' });
      expect(await b.ha!.leader()).to.include({ nodeId: 'a' });
      proxy.pause();
      const started = Date.now();
      const outcome = await Promise.race([
        caught(b.ha!.leader()),
        sleep(8000).then(() => 'still waiting after 8 s'),
      ]);
      expect(outcome, 'the look-up waited on the paused database').to.be.instanceOf(Error);
      expect(Date.now() - started).to.be.lessThan(8000);
      proxy.resume();
      // The broken connection was dropped; the next look-up opens a fresh one.
      expect(await b.ha!.leader()).to.include({ nodeId: 'a' });
    } finally {
      proxy.resume();
      await a.close();
      await b.close();
    }
  });
});
