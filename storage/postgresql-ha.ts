import pg from 'pg';
import { UnavailableError } from '../core/errors.js';
import { lockKeys, reasonOf } from './postgresql-shared.js';
import type { HaLock, LeaderInfo, Leadership } from './storage.js';

/** How often the leader proves its lock connection is alive, and how long one proof may take. */
const HEARTBEAT_MS = 1000;
const HEARTBEAT_TIMEOUT_MS = 3000;

/**
 * The HA election over PostgreSQL: a session-level advisory lock, held on a connection of its own.
 *
 * Why an advisory lock and not a lease row: PostgreSQL releases it the moment the holder's session
 * ends, so a leader killed with SIGKILL (its socket closed by the kernel) frees it at once, with no
 * lease to wait out. A leader that vanishes without closing its socket (a partition, a frozen host)
 * is caught by TCP keepalives the lock session turns on (idle 2 s, probe every 1 s, 3 probes): the
 * server ends the session and frees the lock within about 5 s. The leader, for its part, checks
 * its own lock connection every second and steps down when it fails.
 *
 * Taking the lock bumps an epoch in the `<table>_ha` row; the data table's writes are fenced on it
 * (see PostgresStorage), so a deposed leader that has not yet noticed cannot write.
 */
export class PostgresHaLock implements HaLock {
  private client: pg.Client | undefined;
  private connecting: Promise<pg.Client> | undefined;
  private held: { epoch: number; timer: NodeJS.Timeout; lose: (reason: string) => void } | undefined;
  private readonly leaderListeners: Array<() => void> = [];
  private readonly keys: [number, number];
  private readonly haTable: string;
  private readonly leaderChannel: string;
  private closed = false;

  constructor(
    private readonly connectionUrl: string,
    table: string,
    /** Tells the store which epoch to fence writes with (undefined: not the leader). */
    private readonly setEpoch: (epoch: number | undefined) => void,
    private readonly onWarning?: (message: string) => void,
  ) {
    this.keys = lockKeys(`keywarden ha ${table}`);
    this.haTable = `"${table}_ha"`;
    this.leaderChannel = `${table}_leader`;
  }

  async tryAcquire(self: { readonly nodeId: string; readonly apiAddr: string }): Promise<Leadership | undefined> {
    if (this.held) throw new Error('the HA lock is already held by this node');
    const client = await this.connection();
    try {
      const got = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1, $2) AS ok', this.keys);
      if (!got.rows[0]?.ok) return undefined;
      // Waits for writes still fenced under the old epoch (they hold the row FOR SHARE) to finish.
      const row = await client.query<{ epoch: string }>(
        `UPDATE ${this.haTable} SET epoch = epoch + 1, node_id = $1, api_addr = $2, since = now() WHERE name = 'leader' RETURNING epoch`,
        [self.nodeId, self.apiAddr],
      );
      await client.query('SELECT pg_notify($1, $2)', [this.leaderChannel, self.nodeId]);
      const epoch = Number(row.rows[0]!.epoch);
      return this.hold(client, epoch);
    } catch (err) {
      throw this.failed(client, err);
    }
  }

  async leader(): Promise<LeaderInfo | undefined> {
    const client = await this.connection();
    try {
      const result = await client.query<{ node_id: string; api_addr: string; since: Date; held: boolean }>(
        `SELECT node_id, api_addr, since,
                EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted
                          AND classid = $1::oid AND objid = $2::oid AND objsubid = 2) AS held
           FROM ${this.haTable} WHERE name = 'leader'`,
        [String(this.keys[0] >>> 0), String(this.keys[1] >>> 0)],
      );
      const row = result.rows[0];
      if (!row || !row.held || row.node_id === '') return undefined;
      return { nodeId: row.node_id, apiAddr: row.api_addr, since: row.since };
    } catch (err) {
      throw this.failed(client, err);
    }
  }

  onLeaderChange(listener: () => void): void {
    this.leaderListeners.push(listener);
  }

  async close(): Promise<void> {
    this.closed = true;
    const client = this.client;
    this.lose('shutting down');
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private hold(client: pg.Client, epoch: number): Leadership {
    let lose!: (reason: string) => void;
    const lost = new Promise<string>((resolve) => (lose = resolve));
    const timer = setInterval(() => {
      const proof = client.query('SELECT 1');
      const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('heartbeat timeout')), HEARTBEAT_TIMEOUT_MS).unref());
      Promise.race([proof, timeout]).catch((err: unknown) => this.drop(client, `lock connection failed: ${reasonOf(err)}`));
    }, HEARTBEAT_MS);
    timer.unref();
    this.held = { epoch, timer, lose };
    this.setEpoch(epoch);
    return {
      epoch,
      lost,
      release: async () => {
        if (this.held?.epoch !== epoch) return;
        this.lose('released');
        await client.query('SELECT pg_advisory_unlock($1, $2)', this.keys).catch(() => this.drop(client, 'unlock failed'));
      },
    };
  }

  private lose(reason: string): void {
    const held = this.held;
    if (!held) return;
    this.held = undefined;
    clearInterval(held.timer);
    this.setEpoch(undefined);
    held.lose(reason);
  }

  /** A query on the lock connection failed: drop the connection and say why. */
  private failed(client: pg.Client, err: unknown): UnavailableError {
    this.drop(client, reasonOf(err));
    return new UnavailableError(`HA lock: PostgreSQL ${reasonOf(err)}`, { cause: err });
  }

  /** Forgets a broken connection; if it held the lock, leadership is lost (the server frees it). */
  private drop(client: pg.Client, reason: string): void {
    if (this.client !== client) return;
    this.client = undefined;
    if (this.held) this.onWarning?.(`HA lock lost: ${reason}`);
    this.lose(reason);
    void client.end().catch(() => undefined);
  }

  private connection(): Promise<pg.Client> {
    if (this.closed) return Promise.reject(new UnavailableError('HA lock is closed'));
    if (this.client) return Promise.resolve(this.client);
    this.connecting ??= this.connect().finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  private async connect(): Promise<pg.Client> {
    const client = new pg.Client({ connectionString: this.connectionUrl, keepAlive: true, keepAliveInitialDelayMillis: 1000, connectionTimeoutMillis: 3000 });
    client.on('error', (err) => this.drop(client, reasonOf(err)));
    client.on('end', () => this.drop(client, 'connection closed'));
    client.on('notification', (message) => {
      if (message.channel !== this.leaderChannel) return;
      for (const listener of this.leaderListeners) listener();
    });
    try {
      await client.connect();
      // The server side of the keepalives: a vanished leader's session ends within ~5 s.
      await client.query('SET tcp_keepalives_idle = 2');
      await client.query('SET tcp_keepalives_interval = 1');
      await client.query('SET tcp_keepalives_count = 3');
      await client.query(`LISTEN ${this.leaderChannel}`);
    } catch (err) {
      await client.end().catch(() => undefined);
      throw new UnavailableError(`HA lock: PostgreSQL ${reasonOf(err)}`, { cause: err });
    }
    this.client = client;
    return client;
  }
}
