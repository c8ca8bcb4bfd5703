import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { UnavailableError } from '../core/errors.js';
import { reasonOf } from './postgresql-shared.js';
import type { HaLock, LeaderInfo, Leadership } from './storage.js';

/**
 * How long a leader's lease lasts without renewal, and how often the leader renews it. The lease
 * bounds fail-over from a leader that stops without closing its connection (a frozen process, a
 * host that hangs): its standbys take over once the lease has run out. A renewal every
 * `renewMs` leaves a leader several chances before its lease lapses. OpenBao's PostgreSQL lock
 * uses a 15 s TTL renewed every 5 s
 * (https://github.com/openbao/openbao/blob/main/internal/physical/postgresql/postgresql.go);
 * these are shorter because Keywarden's writes are fenced in the database itself (below), so a
 * shorter lease costs no safety. See docs/deployment.md, "Faults".
 */
export interface LeaseTimes {
  readonly leaseMs: number;
  readonly renewMs: number;
}
export const DEFAULT_LEASE: LeaseTimes = { leaseMs: 10_000, renewMs: 2_000 };
/** How long one renewal may take before the leader gives its connection (and the role) up. */
const RENEW_TIMEOUT_MS = 3000;
/**
 * How long a standby's look-up of the leader may go unanswered: requests wait on it (a forward
 * with no known leader), so a paused database must not hold them.
 */
const LOOKUP_TIMEOUT_MS = 3000;
/**
 * How long a bid for the role may wait: taking the row FOR UPDATE waits for writes still fenced
 * under the old epoch, which PostgresStorage bounds at 10 s each.
 */
const ACQUIRE_TIMEOUT_MS = 15_000;

/**
 * The HA election over PostgreSQL: a lease in the `<table>_ha` row, renewed by the leader on a
 * connection of its own.
 *
 * The row holds the leader, its lease's expiry (database time, so no two nodes' clocks are
 * compared), the epoch (bumped at every change of leader) and the backend pid of the leader's
 * lock connection. A standby takes the role when the lease has expired, or at once when the
 * leader's session is gone (a leader killed with SIGKILL, or cut off: the server ends its session
 * and the pid leaves `pg_stat_activity`). A frozen leader (SIGSTOP) keeps its session open — the
 * kernel still answers TCP keepalives — so only the lease ends its role.
 *
 * Fencing: every write of the leader checks, in its own statement, that the row still carries its
 * epoch and an unexpired lease (see PostgresStorage), under `FOR KEY SHARE`; taking the role locks
 * the row `FOR UPDATE`, which waits for those writes and makes later ones see the new epoch. So a
 * leader that wakes after its lease ran out cannot commit a single write, whether or not another
 * node has taken over yet. Renewals do not conflict with writes (`FOR KEY SHARE` allows the
 * non-key update of the expiry), so a long write does not starve the lease.
 */
export class PostgresHaLock implements HaLock {
  private client: pg.Client | undefined;
  private connecting: Promise<pg.Client> | undefined;
  private held: Held | undefined;
  private readonly leaderListeners: Array<() => void> = [];
  private readonly haTable: string;
  private readonly leaderChannel: string;
  private closed = false;

  constructor(
    private readonly connectionUrl: string,
    table: string,
    /** Tells the store which epoch to fence its writes with from now on. */
    private readonly setEpoch: (epoch: number) => void,
    private readonly onWarning?: (message: string) => void,
    private readonly times: LeaseTimes = DEFAULT_LEASE,
  ) {
    this.haTable = `"${table}_ha"`;
    this.leaderChannel = `${table}_leader`;
  }

  async tryAcquire(self: { readonly nodeId: string; readonly apiAddr: string }): Promise<Leadership | undefined> {
    if (this.held) throw new Error('the HA lock is already held by this node');
    const client = await this.connection();
    const sentAt = performance.now();
    try {
      await client.query(bounded('BEGIN', [], ACQUIRE_TIMEOUT_MS));
      // FOR UPDATE waits for writes still fenced under the old epoch (they hold FOR KEY SHARE).
      const row = await client.query<{ free: boolean }>(
        bounded(
          `SELECT (h.expires <= now() OR h.holder_pid IS NULL OR h.holder_pid = pg_backend_pid()
                   OR NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = h.holder_pid)) AS free
             FROM ${this.haTable} h WHERE name = 'leader' FOR UPDATE`,
          [],
          ACQUIRE_TIMEOUT_MS,
        ),
      );
      if (!row.rows[0]?.free) {
        await client.query(bounded('ROLLBACK', [], ACQUIRE_TIMEOUT_MS));
        return undefined;
      }
      const taken = await client.query<{ epoch: string }>(
        bounded(
          `UPDATE ${this.haTable} SET epoch = epoch + 1, node_id = $1, api_addr = $2, since = now(),
                  expires = now() + $3 * interval '1 millisecond', holder_pid = pg_backend_pid()
            WHERE name = 'leader' RETURNING epoch`,
          [self.nodeId, self.apiAddr, this.times.leaseMs],
          ACQUIRE_TIMEOUT_MS,
        ),
      );
      await client.query(bounded('SELECT pg_notify($1, $2)', [this.leaderChannel, self.nodeId], ACQUIRE_TIMEOUT_MS));
      await client.query(bounded('COMMIT', [], ACQUIRE_TIMEOUT_MS));
      return this.hold(client, Number(taken.rows[0]!.epoch), sentAt);
    } catch (err) {
      throw this.failed(client, err);
    }
  }

  async leader(): Promise<LeaderInfo | undefined> {
    const client = await this.connection();
    try {
      const result = await client.query<{ node_id: string; api_addr: string; since: Date; held: boolean }>(
        bounded(
          `SELECT node_id, api_addr, since,
                  (expires > now() AND EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = h.holder_pid)) AS held
             FROM ${this.haTable} h WHERE name = 'leader'`,
          [],
          LOOKUP_TIMEOUT_MS,
        ),
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

  private hold(client: pg.Client, epoch: number, sentAt: number): Leadership {
    let lose!: (reason: string) => void;
    const lost = new Promise<string>((resolve) => (lose = resolve));
    const held: Held = { epoch, timer: setInterval(() => this.renew(client, held), this.times.renewMs), lose, validUntil: sentAt + this.times.leaseMs, renewing: false };
    held.timer.unref();
    this.held = held;
    this.setEpoch(epoch);
    return {
      epoch,
      lost,
      release: async () => {
        if (this.held?.epoch !== epoch) return;
        this.lose('released');
        await client
          .query(`UPDATE ${this.haTable} SET expires = now(), holder_pid = NULL WHERE name = 'leader' AND epoch = $1`, [epoch])
          .catch(() => this.drop(client, 'release failed'));
      },
    };
  }

  /**
   * One renewal. The lease is counted from when the renewal was sent (an earlier moment than the
   * database's `now()`), so this node believes in its lease no longer than the database does; a
   * node that finds its lease over (it was frozen, or the database was slow) steps down before
   * asking.
   */
  private renew(client: pg.Client, held: Held): void {
    if (this.held !== held || held.renewing) return;
    const sentAt = performance.now();
    if (sentAt > held.validUntil) {
      this.onWarning?.('HA lease expired before it could be renewed; stepping down');
      this.lose('lease expired');
      return;
    }
    held.renewing = true;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('lease renewal timeout')), RENEW_TIMEOUT_MS);
      timer.unref();
    });
    const renewal = client.query(
      `UPDATE ${this.haTable} SET expires = now() + $2 * interval '1 millisecond'
        WHERE name = 'leader' AND epoch = $1 AND expires > now() RETURNING epoch`,
      [held.epoch, this.times.leaseMs],
    );
    Promise.race([renewal, timeout])
      .then((result) => {
        if (this.held !== held) return;
        if (result.rowCount === 0) {
          this.onWarning?.('HA lease lost: another node took over, or the lease ran out');
          this.lose('another node took over');
          return;
        }
        held.validUntil = sentAt + this.times.leaseMs;
      })
      .catch((err: unknown) => this.drop(client, `lease renewal failed: ${reasonOf(err)}`))
      .finally(() => {
        clearTimeout(timer);
        held.renewing = false;
      });
  }

  private lose(reason: string): void {
    const held = this.held;
    if (!held) return;
    this.held = undefined;
    clearInterval(held.timer);
    // The store keeps fencing with the old epoch: a write already on its way when the role was
    // lost must fail, not go out unfenced (a node that has led never writes as a standby).
    held.lose(reason);
  }

  /** A query on the lock connection failed: drop the connection and say why. */
  private failed(client: pg.Client, err: unknown): UnavailableError {
    this.drop(client, reasonOf(err));
    return new UnavailableError(`HA lock: PostgreSQL ${reasonOf(err)}`, { cause: err });
  }

  /** Forgets a broken connection; if it held the role, the role is lost (its session ends, so others take over at once). */
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
      // The server side of the keepalives: the session of a leader whose host vanished ends within ~5 s.
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

interface Held {
  readonly epoch: number;
  readonly timer: NodeJS.Timeout;
  readonly lose: (reason: string) => void;
  /** Until when (performance.now()) this node may believe it holds the lease. */
  validUntil: number;
  renewing: boolean;
}

/**
 * A query that fails after `ms` unanswered (the driver reads `query_timeout` per query; its types
 * do not list it). The caller drops the connection then: a late answer must not meet the next query.
 */
function bounded(text: string, values: unknown[], ms: number): pg.QueryConfig {
  const config: pg.QueryConfig & { query_timeout: number } = { text, values, query_timeout: ms };
  return config;
}
