import pg from 'pg';
import { BadRequestError, NotActiveError, UnavailableError } from '../core/errors.js';
import { prefixEnd, validateOp } from './keys.js';
import { DEFAULT_LEASE, PostgresHaLock, type LeaseTimes } from './postgresql-ha.js';
import { lockKeys, reasonOf } from './postgresql-shared.js';
import type { BatchOp, HaLock, SharedStorage, StoredEntry } from './storage.js';

export interface PostgresOptions {
  /** A libpq-style URL: `postgres://user:password@host:5432/database?sslmode=require`. */
  readonly connectionUrl: string;
  /** The data table (created if missing). Default `keywarden_store`. */
  readonly table?: string;
  /** Elect one active node through the database. */
  readonly haEnabled?: boolean;
  /** This node's name in change notifications and the HA record. */
  readonly nodeId: string;
  /** Connections in the pool of this node. Default 10. */
  readonly poolSize?: number;
  /** How long a query may wait for a free connection or a new one, ms. Default 5 s. */
  readonly connectTimeoutMs?: number;
  /** Told about connection trouble that no caller sees (the change feed). */
  readonly onWarning?: (message: string) => void;
  /** The HA lease (postgresql-ha.ts); tests shorten it. */
  readonly haLease?: LeaseTimes;
}

export const DEFAULT_TABLE = 'keywarden_store';
/** Rows fetched per round trip by `entries`, and written per statement by `replaceAll`. */
const SNAPSHOT_CHUNK = 1000;
/**
 * A notification whose only key is empty (never a valid key): the sender replaced the whole
 * store, so the other nodes drop every cache instead of hearing of every key.
 */
const EVERYTHING_CHANGED = '';
/** A notification payload must stay under PostgreSQL's 8000-byte limit. */
const NOTIFY_BYTES = 7000;
const FEED_RETRY_MS = [100, 250, 500, 1000, 2000];
/**
 * How long one query may go unanswered before its caller gets a 503 (and its connection is
 * dropped): a database that is paused or cut off mid-query must not hold requests, whatever the
 * request deadline. Waits for a cluster-wide lock (`exclusive`) are not bounded by it.
 */
const QUERY_TIMEOUT_MS = 10_000;
/** Delays between attempts to reach the database at start. */
const OPEN_RETRY_MS = [500, 1000, 2000, 5000];

/**
 * The PostgreSQL physical store: one table of path → value (values arrive barrier-encrypted, like
 * every backend's), for several Keywarden nodes at once.
 *
 * - Every write is one SQL statement (so one round trip and one implicit transaction): the rows,
 *   a `pg_notify` naming the changed keys (delivered to the other nodes on commit), and, when this
 *   node is the HA leader, a check under `FOR KEY SHARE` that its leadership epoch is still the
 *   current one and its lease unexpired — a deposed or frozen leader's late writes fail instead
 *   of racing the new leader's (postgresql-ha.ts).
 * - `list` walks the primary-key index one child at a time (a loose index scan in a recursive
 *   query), so a folder with a million entries below one child costs one probe, as with LevelDB.
 * - A dedicated connection LISTENs for the other nodes' changes; `sync()` is a round trip on that
 *   same connection, and PostgreSQL delivers pending notifications before a query's result, so
 *   after it every change committed earlier has been heard.
 */
export class PostgresStorage implements SharedStorage {
  readonly kind = 'postgresql';
  readonly ha: HaLock | undefined;
  private readonly table: string;
  private readonly channel: string;
  private readonly sql: ReturnType<typeof statements>;
  private readonly listeners: Array<(change: { keys: readonly string[] } | { resync: true }) => void> = [];
  /** The leadership epoch writes are fenced with: the last one this node held; undefined if it never led. */
  private epoch: number | undefined;
  private feed: pg.Client | undefined;
  private feedDown: string | undefined = 'not connected';
  private feedRetry = 0;
  private feedTimer: NodeJS.Timeout | undefined;
  private closed = false;
  /** Coalescing of `sync`: callers that arrive while a fence is in flight wait for the next one. */
  private fenceRunning: Promise<void> | undefined;
  private fenceQueued: Promise<void> | undefined;

  private constructor(
    private readonly pool: pg.Pool,
    private readonly options: PostgresOptions,
  ) {
    this.table = options.table ?? DEFAULT_TABLE;
    this.channel = `${this.table}_changes`;
    this.sql = statements(this.table);
    this.ha = options.haEnabled ? new PostgresHaLock(options.connectionUrl, this.table, (epoch) => (this.epoch = epoch), options.onWarning, options.haLease) : undefined;
  }

  /**
   * Connects, creates the tables if they are missing, and starts listening for other nodes'
   * changes.
   * @throws BadRequestError for an invalid table name; UnavailableError when the database cannot
   *   be reached or the tables cannot be created (the reason in the message).
   */
  static async open(options: PostgresOptions): Promise<PostgresStorage> {
    checkTableName(options.table ?? DEFAULT_TABLE);
    const pool = new pg.Pool({
      connectionString: options.connectionUrl,
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
      idleTimeoutMillis: 30_000,
      keepAlive: true,
    });
    // An idle pooled connection that dies emits here; the next query gets a fresh one.
    pool.on('error', (err) => options.onWarning?.(`PostgreSQL connection lost: ${reasonOf(err)}`));
    const storage = new PostgresStorage(pool, options);
    try {
      await storage.createSchema();
      await storage.connectFeed();
    } catch (err) {
      await storage.close().catch(() => undefined);
      throw err instanceof UnavailableError || err instanceof BadRequestError ? err : unavailable('open', err);
    }
    return storage;
  }

  /**
   * `open`, waiting for a database that cannot be reached yet (a node started before its
   * database, or while it restarts): each failed attempt is told to `onWaiting` with the reason and
   * the delay before the next, and attempts go on until one succeeds. A configuration mistake that
   * waiting cannot mend (an invalid table name) fails at once.
   */
  static async openWhenReachable(options: PostgresOptions, onWaiting: (reason: string, retryInMs: number) => void): Promise<PostgresStorage> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await PostgresStorage.open(options);
      } catch (err) {
        if (!(err instanceof UnavailableError)) throw err;
        const delay = OPEN_RETRY_MS[Math.min(attempt, OPEN_RETRY_MS.length - 1)]!;
        onWaiting(err.message, delay);
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }

  onRemoteChange(listener: (change: { keys: readonly string[] } | { resync: true }) => void): void {
    this.listeners.push(listener);
  }

  async get(key: string): Promise<Uint8Array | undefined> {
    checkKey(key);
    const result = await this.query<{ value: Buffer }>('read', this.sql.get, [key]);
    return result.rows[0]?.value;
  }

  async put(key: string, value: Uint8Array): Promise<void> {
    await this.batch([{ type: 'put', key, value }]);
  }

  async delete(key: string): Promise<void> {
    await this.batch([{ type: 'delete', key }]);
  }

  async list(prefix: string): Promise<string[]> {
    if (prefix !== '') checkKey(prefix);
    const result = await this.query<{ k: string }>('list', this.sql.list, [prefix, prefixEnd(prefix) ?? null]);
    const out: string[] = [];
    for (const { k } of result.rows) {
      const rest = k.slice(prefix.length);
      const slash = rest.indexOf('/');
      out.push(slash < 0 ? rest : rest.slice(0, slash + 1));
    }
    return out;
  }

  async batch(ops: readonly BatchOp[]): Promise<void> {
    for (const op of ops) {
      validateOp(op);
      checkKey(op.key);
    }
    if (ops.length === 0) return;
    // One statement cannot order a put and a delete of one key: the last op per key wins.
    const last = new Map<string, BatchOp>();
    for (const op of ops) {
      last.delete(op.key);
      last.set(op.key, op);
    }
    const deletes: string[] = [];
    const putKeys: string[] = [];
    const putValues: Buffer[] = [];
    for (const op of last.values()) {
      if (op.type === 'delete') {
        deletes.push(op.key);
      } else {
        putKeys.push(op.key);
        putValues.push(Buffer.from(op.value.buffer, op.value.byteOffset, op.value.byteLength));
      }
    }
    const epoch = this.epoch;
    const result = await this.query<{ lead: string }>('write', this.sql.write, [
      epoch ?? null,
      deletes,
      putKeys,
      putValues,
      this.channel,
      notifications(this.options.nodeId, [...last.keys()]),
    ]);
    if (Number(result.rows[0]?.lead ?? 0) === 0) {
      // Only a fenced write can miss the leader row: another node has taken over.
      throw new NotActiveError('this node is no longer the active node (another node took over, or its lease ran out)');
    }
  }

  /**
   * One REPEATABLE READ transaction (a single view of the table for its whole length) and a cursor
   * read in chunks, so a large store is never held in memory at once.
   */
  entries(): AsyncIterable<StoredEntry> {
    if (this.closed) throw new UnavailableError('storage is closed');
    const pool = this.pool;
    const sql = this.sql;
    return (async function* () {
      const client = await pool.connect().catch((err: unknown) => {
        throw unavailable('read', err);
      });
      let clean = false;
      // A failed (or timed-out) query leaves the connection unfit for the closing statement.
      let broken = false;
      try {
        try {
          await client.query(timed('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY', []));
          await client.query(timed(sql.declareCursor, []));
        } catch (err) {
          broken = true;
          throw unavailable('read', err);
        }
        for (;;) {
          let rows: Array<{ path: string; value: Buffer }>;
          try {
            rows = (await client.query<{ path: string; value: Buffer }>(timed(`FETCH ${SNAPSHOT_CHUNK} FROM keywarden_snapshot`, []))).rows;
          } catch (err) {
            broken = true;
            throw unavailable('read', err);
          }
          if (rows.length === 0) break;
          for (const row of rows) yield { key: row.path, value: row.value };
        }
        clean = true;
      } finally {
        // Also reached when the reader stops early (a client that went away): the transaction ends either way.
        if (broken) client.release(true);
        else await client.query(timed(clean ? 'COMMIT' : 'ROLLBACK', [])).then(
          () => client.release(),
          () => client.release(true),
        );
      }
    })();
  }

  /**
   * One transaction: every row deleted, the new ones inserted in chunks, and one notification
   * that tells the other nodes to drop every cache; nothing is visible to them before COMMIT. On
   * the HA leader it is fenced on its epoch like every write.
   */
  async replaceAll(entries: AsyncIterable<StoredEntry>): Promise<number> {
    if (this.closed) throw new UnavailableError('storage is closed');
    const client = await this.pool.connect().catch((err: unknown) => {
      throw unavailable('write', err);
    });
    let written = 0;
    let inTransaction = false;
    // A query that failed (or timed out, its answer still due) leaves the connection unfit for a ROLLBACK.
    let broken = false;
    try {
      const run = async (text: string, values: unknown[] = []): Promise<pg.QueryResult> => {
        try {
          return await client.query(timed(text, values));
        } catch (err) {
          broken = true;
          throw unavailable('write', err);
        }
      };
      await run('BEGIN');
      inTransaction = true;
      // The fence below holds the leader row until COMMIT: if this node freezes mid-transaction,
      // the server ends the session once the lease would have run out, so a standby can take over.
      await run(`SET LOCAL idle_in_transaction_session_timeout = ${(this.options.haLease ?? DEFAULT_LEASE).leaseMs}`);
      const lead = await run(this.sql.leadFence, [this.epoch ?? null]);
      if (lead.rowCount === 0) throw new NotActiveError('this node is no longer the active node (another node took over, or its lease ran out)');
      await run(this.sql.deleteAll);
      let keys: string[] = [];
      let values: Buffer[] = [];
      const flush = async (): Promise<void> => {
        if (keys.length === 0) return;
        await run(this.sql.insertMany, [keys, values]);
        keys = [];
        values = [];
      };
      for await (const entry of entries) {
        validateOp({ type: 'put', key: entry.key, value: entry.value });
        checkKey(entry.key);
        keys.push(entry.key);
        values.push(Buffer.from(entry.value.buffer, entry.value.byteOffset, entry.value.byteLength));
        written++;
        if (keys.length >= SNAPSHOT_CHUNK) await flush();
      }
      await flush();
      await run('SELECT pg_notify($1, $2)', [this.channel, `${this.options.nodeId}\n${EVERYTHING_CHANGED}`]);
      await run('COMMIT');
      inTransaction = false;
    } finally {
      if (broken) {
        // Closing the session rolls the transaction back.
        client.release(true);
      } else if (inTransaction) {
        await client.query(timed('ROLLBACK', [])).then(
          () => client.release(),
          () => client.release(true),
        );
      } else {
        client.release();
      }
    }
    return written;
  }

  async exclusive<T>(name: string, work: () => Promise<T>): Promise<T> {
    const client = await this.pool.connect().catch((err: unknown) => {
      throw unavailable('lock', err);
    });
    const keys = lockKeys(`keywarden exclusive ${this.table} ${name}`);
    try {
      await client.query('SELECT pg_advisory_lock($1, $2)', keys);
    } catch (err) {
      client.release(true);
      throw unavailable('lock', err);
    }
    try {
      return await work();
    } finally {
      // A failed unlock ends the session, which releases the lock too.
      await client.query('SELECT pg_advisory_unlock($1, $2)', keys).then(
        () => client.release(),
        () => client.release(true),
      );
    }
  }

  /** See the class comment. Concurrent callers share round trips. */
  sync(): Promise<void> {
    if (this.feedDown !== undefined) return Promise.reject(this.feedUnavailable());
    if (!this.fenceRunning) return this.startFence();
    // The fence in flight may have been sent before our caller's moment: join the next one.
    this.fenceQueued ??= this.fenceRunning
      .catch(() => undefined)
      .then(() => {
        this.fenceQueued = undefined;
        return this.startFence();
      });
    return this.fenceQueued;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.feedTimer) clearTimeout(this.feedTimer);
    await this.ha?.close().catch(() => undefined);
    const feed = this.feed;
    this.feed = undefined;
    await feed?.end().catch(() => undefined);
    await this.pool.end().catch(() => undefined);
  }

  private startFence(): Promise<void> {
    const run = this.runFence().finally(() => {
      if (this.fenceRunning === run) this.fenceRunning = undefined;
    });
    this.fenceRunning = run;
    return run;
  }

  private async runFence(): Promise<void> {
    const feed = this.feed;
    if (!feed || this.feedDown !== undefined) throw this.feedUnavailable();
    try {
      await feed.query(timed('SELECT 1', []));
    } catch (err) {
      // A feed that does not answer may have missed changes too: it is dropped and reconnected.
      this.feedLost(feed, reasonOf(err));
      throw unavailable('sync', err);
    }
  }

  private feedUnavailable(): UnavailableError {
    return new UnavailableError(`storage unavailable: the PostgreSQL change feed is down (${this.feedDown ?? 'not connected'})`);
  }

  private async createSchema(): Promise<void> {
    const client = await this.pool.connect().catch((err: unknown) => {
      throw unavailable('connect', err);
    });
    try {
      // Several nodes may start at once: CREATE TABLE IF NOT EXISTS still races on the catalog.
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock($1, $2)', schemaLockKey(this.table));
      for (const statement of this.sql.schema) await client.query(statement);
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw unavailable('create the tables', err);
    } finally {
      client.release();
    }
  }

  private async connectFeed(): Promise<void> {
    const client = new pg.Client({ connectionString: this.options.connectionUrl, keepAlive: true, connectionTimeoutMillis: this.options.connectTimeoutMs ?? 5000 });
    client.on('error', (err) => this.feedLost(client, reasonOf(err)));
    client.on('end', () => this.feedLost(client, 'connection closed'));
    client.on('notification', (message) => {
      if (message.channel !== this.channel || !message.payload) return;
      const [origin, ...keys] = message.payload.split('\n');
      if (origin === this.options.nodeId || keys.length === 0) return;
      if (keys.length === 1 && keys[0] === EVERYTHING_CHANGED) this.emit({ resync: true });
      else this.emit({ keys });
    });
    await client.connect();
    await client.query(`LISTEN ${this.channel}`);
    const wasDown = this.feed !== undefined || this.feedRetry > 0;
    this.feed = client;
    this.feedDown = undefined;
    this.feedRetry = 0;
    // Changes made while we were not listening were never delivered: caches must start over.
    if (wasDown) this.emit({ resync: true });
  }

  private feedLost(client: pg.Client, reason: string): void {
    if (this.feed !== client || this.closed) return;
    this.feed = undefined;
    this.feedDown = reason;
    this.options.onWarning?.(`PostgreSQL change feed lost: ${reason}; reconnecting`);
    void client.end().catch(() => undefined);
    this.emit({ resync: true });
    this.scheduleFeed();
  }

  private scheduleFeed(): void {
    if (this.closed) return;
    const delay = FEED_RETRY_MS[Math.min(this.feedRetry, FEED_RETRY_MS.length - 1)]!;
    this.feedRetry++;
    this.feedTimer = setTimeout(() => {
      this.connectFeed().catch((err: unknown) => {
        this.feedDown = reasonOf(err);
        this.scheduleFeed();
      });
    }, delay);
    this.feedTimer.unref();
  }

  private emit(change: { keys: readonly string[] } | { resync: true }): void {
    for (const listener of this.listeners) {
      try {
        listener(change);
      } catch (err) {
        this.options.onWarning?.(`change listener failed: ${reasonOf(err)}`);
      }
    }
  }

  private async query<R extends pg.QueryResultRow>(what: string, text: string, values: unknown[]): Promise<pg.QueryResult<R>> {
    if (this.closed) throw new UnavailableError('storage is closed');
    try {
      return await this.pool.query<R>(timed(text, values));
    } catch (err) {
      throw unavailable(what, err);
    }
  }
}

/** The SQL of one table. Names are checked by `checkTableName`, so quoting them is enough. */
function statements(table: string) {
  const t = `"${table}"`;
  const ha = `"${table}_ha"`;
  const fence = `($1::bigint IS NULL OR (epoch = $1 AND expires > now()))`;
  return {
    schema: [
      // COLLATE "C": byte order, the order every backend lists in, whatever the database's locale.
      `CREATE TABLE IF NOT EXISTS ${t} (path text COLLATE "C" PRIMARY KEY, value bytea NOT NULL)`,
      `CREATE TABLE IF NOT EXISTS ${ha} (name text PRIMARY KEY, epoch bigint NOT NULL, node_id text NOT NULL, api_addr text NOT NULL, since timestamptz NOT NULL)`,
      `INSERT INTO ${ha} (name, epoch, node_id, api_addr, since) VALUES ('leader', 0, '', '', now()) ON CONFLICT (name) DO NOTHING`,
      // The lease (postgresql-ha.ts); added to tables made before it existed.
      `ALTER TABLE ${ha} ADD COLUMN IF NOT EXISTS expires timestamptz NOT NULL DEFAULT '-infinity'`,
      `ALTER TABLE ${ha} ADD COLUMN IF NOT EXISTS holder_pid integer`,
    ],
    get: `SELECT value FROM ${t} WHERE path = $1`,
    declareCursor: `DECLARE keywarden_snapshot NO SCROLL CURSOR FOR SELECT path, value FROM ${t} ORDER BY path`,
    // $1 the fencing epoch (NULL: not fenced); no row when another node has taken over or the lease ran out.
    leadFence: `SELECT epoch FROM ${ha} WHERE name = 'leader' AND ${fence} FOR KEY SHARE`,
    deleteAll: `DELETE FROM ${t}`,
    insertMany: `INSERT INTO ${t} (path, value) SELECT p, v FROM unnest($1::text[], $2::bytea[]) AS u(p, v)`,
    // From the first key at or after the prefix, each step jumps past the child just found: past
    // the whole folder (its name followed by '0', the character after '/') or past the key.
    list: `WITH RECURSIVE walk(k) AS (
        (SELECT path FROM ${t} WHERE path >= $1 AND ($2::text IS NULL OR path < $2) ORDER BY path LIMIT 1)
        UNION ALL
        SELECT (SELECT path FROM ${t}
                 WHERE path >= (CASE WHEN strpos(substr(walk.k, length($1) + 1), '/') > 0
                                     THEN left(walk.k, length($1) + strpos(substr(walk.k, length($1) + 1), '/') - 1) || '0'
                                     ELSE walk.k || chr(1) END)
                   AND ($2::text IS NULL OR path < $2)
                 ORDER BY path LIMIT 1)
          FROM walk WHERE walk.k IS NOT NULL)
      SELECT k FROM walk WHERE k IS NOT NULL`,
    // $1 the fencing epoch (NULL: not fenced), $2 keys to delete, $3/$4 keys and values to put,
    // $5 the channel, $6 the notification payloads. `lead` is 0 when the fence failed.
    write: `WITH lead AS (SELECT epoch FROM ${ha} WHERE name = 'leader' AND ${fence} FOR KEY SHARE),
        del AS (DELETE FROM ${t} WHERE path = ANY($2::text[]) AND EXISTS (SELECT 1 FROM lead) RETURNING 1),
        ins AS (INSERT INTO ${t} (path, value) SELECT p, v FROM unnest($3::text[], $4::bytea[]) AS u(p, v)
                 WHERE EXISTS (SELECT 1 FROM lead)
                 ON CONFLICT (path) DO UPDATE SET value = EXCLUDED.value RETURNING 1),
        note AS (SELECT pg_notify($5, m) FROM unnest($6::text[]) AS m WHERE EXISTS (SELECT 1 FROM lead))
      SELECT (SELECT count(*) FROM lead) AS lead, (SELECT count(*) FROM del) + (SELECT count(*) FROM ins) + (SELECT count(*) FROM note) AS n`,
  };
}

/** A query bounded by QUERY_TIMEOUT_MS (the driver reads `query_timeout` per query; its types do not list it). */
function timed(text: string, values: unknown[]): pg.QueryConfig {
  const config: pg.QueryConfig & { query_timeout: number } = { text, values, query_timeout: QUERY_TIMEOUT_MS };
  return config;
}

/** `origin\nkey\nkey…` payloads, each under the size PostgreSQL accepts. */
function notifications(nodeId: string, keys: readonly string[]): string[] {
  const out: string[] = [];
  let current = nodeId;
  let size = Buffer.byteLength(nodeId);
  let count = 0;
  for (const key of keys) {
    const bytes = Buffer.byteLength(key) + 1;
    if (count > 0 && size + bytes > NOTIFY_BYTES) {
      out.push(current);
      current = nodeId;
      size = Buffer.byteLength(nodeId);
      count = 0;
    }
    current += `\n${key}`;
    size += bytes;
    count++;
  }
  if (count > 0) out.push(current);
  return out;
}

/** Table names go into SQL text (identifiers cannot be parameters), so only plain ones are allowed. */
export function checkTableName(table: string): void {
  if (!/^[a-z_][a-z0-9_]{0,50}$/.test(table)) {
    throw new BadRequestError(`invalid PostgreSQL table name "${table}": use lower-case letters, digits and "_" (at most 51 characters), not starting with a digit`);
  }
}

/** PostgreSQL text holds no NUL and no unpaired surrogate; refuse them rather than store a different key. */
function checkKey(key: string): void {
  if (key.includes('\u0000') || /\p{Surrogate}/u.test(key)) {
    throw new BadRequestError('storage key must be valid UTF-8 text without NUL characters');
  }
}

function schemaLockKey(table: string): [number, number] {
  return lockKeys(`keywarden schema ${table}`);
}

/** A client may see the message: name the cause (connection refused, timeout), not the SQL. */
export function unavailable(what: string, err: unknown): UnavailableError {
  return new UnavailableError(`storage ${what} failed: PostgreSQL ${reasonOf(err)}`, { cause: err });
}
