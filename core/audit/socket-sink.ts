/**
 * A connection to a log collector that audit devices write through: TCP, UDP or a unix stream
 * socket, connected lazily and again whenever the peer went away.
 *
 * Entries go out by group commit (group-commit.ts), as the file device's do: those that arrive
 * while a write is in flight are written together next, in order. Over a stream that is one
 * gathered write of all of them; over datagrams (UDP, a syslog daemon's unix socket) each entry
 * stays its own datagram, as the protocol frames them, sent one after another, and fails alone.
 *
 * Every attempt (connecting when needed, then handing the bytes to the OS) is bounded by one
 * timeout, so a collector that stops reading or never answers costs a write at most two
 * timeouts (the attempt and one retry on a fresh connection, as Vault's socket device retries
 * once) and never blocks the event loop; entries queued behind a stalled write wait for it.
 *
 * What "written" means is what the OS accepted: a stream socket's bytes in the kernel's buffer,
 * a datagram sent. Like any TCP client, an entry written just as the peer closes can be accepted
 * by the kernel and still lost; the next write then notices the closed connection and reconnects.
 */
import { createSocket, type Socket as DatagramSocket } from 'node:dgram';
import { connect as netConnect, isIP, type Socket } from 'node:net';
import { errorCode } from './file-device.js';
import { GroupCommit } from './group-commit.js';

/** Where a sink connects. */
export type SocketEndpoint =
  | { readonly kind: 'tcp' | 'udp'; readonly host: string; readonly port: number }
  | { readonly kind: 'unix'; readonly path: string };

/** One open connection. */
export interface Connection {
  /** False once the peer closed it or an error was seen: the next write reconnects. */
  readonly usable: boolean;
  /**
   * Hands `lines` to the OS in order. A stream sends them in one gathered write and rejects when it
   * fails; a datagram connection sends each as its own datagram and resolves with each line's
   * failure (undefined for one sent), or undefined when every one was sent.
   */
  send(lines: readonly Buffer[]): Promise<void | readonly (Error | undefined)[]>;
  /** Lets writes already handed over reach the peer (for at most `ms`), then closes. */
  finish(ms: number): Promise<void>;
  /** Closes at once; writes not yet flushed fail. */
  close(): void;
}

export class SocketSink {
  private current: Connection | undefined;
  private connecting: Promise<Connection> | undefined;
  private closed = false;
  private readonly commits = new GroupCommit((lines) => this.writeLines(lines), true);

  /**
   * @param connect opens a new connection (given the attempt's abort signal); the syslog device
   *   passes one that tries several socket paths in turn.
   * @param timeoutMs the bound of one attempt: connecting and writing.
   * @param label names the target in errors (never an entry's content).
   */
  constructor(
    private readonly connect: (signal: AbortSignal) => Promise<Connection>,
    private readonly timeoutMs: number,
    readonly label: string,
  ) {}

  /** A sink for one endpoint. */
  static to(endpoint: SocketEndpoint, timeoutMs: number): SocketSink {
    return new SocketSink((signal) => openConnection(endpoint, signal), timeoutMs, endpointLabel(endpoint));
  }

  /** Connects now (enabling a device checks its target is there); throws naming the target and the OS error. */
  async open(): Promise<void> {
    await this.bounded((signal) => this.connection(signal));
  }

  /** Writes one entry (with those queued beside it); resolves once the OS took it, rejects when it did not. */
  write(line: Buffer): Promise<void> {
    return this.commits.append(line);
  }

  /** Drops the connection and opens a new one (SIGHUP: a collector that moved is found again), after the entries queued before. */
  reopen(): Promise<void> {
    return this.commits.run(async () => {
      const old = this.current;
      this.current = undefined;
      await old?.finish(this.timeoutMs);
      await this.open();
    });
  }

  /** Refuses later writes; entries queued before are written first (bounded by the timeout). */
  close(): Promise<void> {
    return this.commits.run(async () => {
      this.closed = true;
      const connection = this.current;
      this.current = undefined;
      await connection?.finish(this.timeoutMs);
    });
  }

  /**
   * One group commit's lines, reconnecting and trying once more those the first attempt did not
   * write; resolves with each line's failure, or undefined when all were written.
   */
  private async writeLines(lines: readonly Buffer[]): Promise<void | readonly (Error | undefined)[]> {
    const first = await this.attempt(lines);
    if (!first) return undefined;
    const again: number[] = [];
    for (let i = 0; i < lines.length; i++) if (first[i] !== undefined) again.push(i);
    const second = await this.attempt(again.map((i) => lines[i]!));
    if (!second) return undefined;
    const failures = new Array<Error | undefined>(lines.length);
    let failed = false;
    again.forEach((i, k) => {
      if (second[k] === undefined) return;
      failures[i] = new Error(`${this.label}: ${describe(first[i])}; again after reconnecting: ${describe(second[k])}`);
      failed = true;
    });
    return failed ? failures : undefined;
  }

  /** Sends `lines` once; resolves with each line's failure (all of them the same when the attempt failed whole), or undefined. */
  private async attempt(lines: readonly Buffer[]): Promise<readonly (Error | undefined)[] | undefined> {
    let used: Connection | undefined;
    let failures: readonly (Error | undefined)[] | undefined;
    try {
      failures = await this.bounded(async (signal) => {
        used = await this.connection(signal);
        // Connected only after the attempt had already failed: sending now would duplicate the retry's entries.
        signal.throwIfAborted();
        return (await used.send(lines)) ?? undefined;
      });
    } catch (err) {
      const failure = err instanceof Error ? err : new Error(describe(err));
      failures = lines.map(() => failure);
    }
    // The connection this attempt used is suspect (timed out mid-write, reset): the retry and
    // later writes start on a new one. A newer connection another write opened meanwhile is kept.
    if (failures && used && used === this.current) this.drop();
    return failures;
  }

  /** The open connection, or a new one; concurrent writes share one connection attempt. */
  private connection(signal: AbortSignal): Promise<Connection> {
    if (this.closed) return Promise.reject(new Error('audit device is closed'));
    if (this.current?.usable) return Promise.resolve(this.current);
    this.current?.close();
    this.current = undefined;
    this.connecting ??= this.connect(signal).then(
      (conn) => {
        this.connecting = undefined;
        if (this.closed) {
          conn.close();
          throw new Error('audit device is closed');
        }
        this.current = conn;
        return conn;
      },
      (err: unknown) => {
        this.connecting = undefined;
        throw err;
      },
    );
    return this.connecting;
  }

  /** Runs `work` under the sink's timeout; on expiry its signal aborts and the attempt fails. */
  private async bounded<T>(work: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const err = new Error(`timed out after ${this.timeoutMs} ms`);
        controller.abort(err);
        reject(err);
      }, this.timeoutMs);
    });
    const running = work(controller.signal);
    // A write that settles after the timeout already failed the attempt: its outcome is moot.
    running.catch(() => undefined);
    try {
      return await Promise.race([running, expired]);
    } finally {
      clearTimeout(timer);
    }
  }

  private drop(): void {
    this.current?.close();
    this.current = undefined;
  }
}

/** `tcp 127.0.0.1:9090`, `unix /run/collector.sock`. */
export function endpointLabel(endpoint: SocketEndpoint): string {
  if (endpoint.kind === 'unix') return `unix ${endpoint.path}`;
  const host = isIP(endpoint.host) === 6 ? `[${endpoint.host}]` : endpoint.host;
  return `${endpoint.kind} ${host}:${endpoint.port}`;
}

/** Opens a connection to one endpoint; rejects with the OS error code (ECONNREFUSED, ENOENT, …). */
export function openConnection(endpoint: SocketEndpoint, signal: AbortSignal): Promise<Connection> {
  return endpoint.kind === 'udp' ? openDatagram(endpoint, signal) : openStream(endpoint, signal);
}

function openStream(endpoint: SocketEndpoint, signal: AbortSignal): Promise<Connection> {
  return new Promise((resolve, reject) => {
    const socket =
      endpoint.kind === 'unix' ? netConnect({ path: endpoint.path }) : netConnect({ host: endpoint.host, port: endpoint.port });
    const fail = (err: unknown) => {
      signal.removeEventListener('abort', onAbort);
      // A late error from the abandoned socket must not become an uncaught 'error' event.
      socket.on('error', () => undefined);
      socket.destroy();
      reject(new Error(errorCode(err)));
    };
    const onAbort = () => fail(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    socket.once('error', fail);
    socket.once('connect', () => {
      signal.removeEventListener('abort', onAbort);
      socket.off('error', fail);
      resolve(new StreamConnection(socket));
    });
  });
}

class StreamConnection implements Connection {
  private broken = false;

  constructor(private readonly socket: Socket) {
    socket.setNoDelay(true);
    // Read and discard whatever the collector sends, so its FIN is seen as soon as it arrives
    // ('end' fires only on a flowing stream) and the next write reconnects.
    socket.resume();
    const broken = () => {
      this.broken = true;
      socket.destroy();
    };
    socket.on('end', broken);
    socket.on('close', broken);
    socket.on('error', broken);
  }

  get usable(): boolean {
    return !this.broken && !this.socket.destroyed && this.socket.writable;
  }

  /** Corked, so the socket hands every line to the OS in one gathered write. */
  send(lines: readonly Buffer[]): Promise<void> {
    return new Promise((resolve, reject) => {
      const socket = this.socket;
      socket.cork();
      for (let i = 0; i < lines.length - 1; i++) socket.write(lines[i]!);
      socket.write(lines[lines.length - 1]!, (err) => (err ? reject(new Error(errorCode(err))) : resolve()));
      socket.uncork();
    });
  }

  finish(ms: number): Promise<void> {
    if (!this.usable) {
      this.close();
      return Promise.resolve();
    }
    this.broken = true;
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.socket.destroy();
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.socket.once('close', done);
      this.socket.end(done);
    });
  }

  close(): void {
    this.broken = true;
    this.socket.destroy();
  }
}

function openDatagram(endpoint: { readonly host: string; readonly port: number }, signal: AbortSignal): Promise<Connection> {
  return new Promise((resolve, reject) => {
    const socket = createSocket(isIP(endpoint.host) === 6 ? 'udp6' : 'udp4');
    const fail = (err: unknown) => {
      signal.removeEventListener('abort', onAbort);
      socket.on('error', () => undefined);
      try {
        socket.close();
      } catch {
        // Closed already by the error itself.
      }
      reject(new Error(errorCode(err)));
    };
    const onAbort = () => fail(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    socket.once('error', fail);
    // Connected, so an ICMP "port unreachable" surfaces as ECONNREFUSED on a later send.
    socket.connect(endpoint.port, endpoint.host, () => {
      signal.removeEventListener('abort', onAbort);
      socket.off('error', fail);
      resolve(new DatagramConnection(socket));
    });
  });
}

class DatagramConnection implements Connection {
  private broken = false;

  constructor(private readonly socket: DatagramSocket) {
    socket.on('error', () => {
      this.broken = true;
    });
  }

  get usable(): boolean {
    return !this.broken;
  }

  /** Datagrams already sent are with the OS: nothing to wait for. */
  async finish(): Promise<void> {
    this.close();
  }

  /** One entry, one datagram: an entry larger than a datagram can carry fails with EMSGSIZE, alone. */
  send(lines: readonly Buffer[]): Promise<void | readonly (Error | undefined)[]> {
    return eachSent(lines, (line) => new Promise<void>((resolve, reject) => {
      this.socket.send(line, (err) => (err ? reject(new Error(errorCode(err))) : resolve()));
    }));
  }

  close(): void {
    if (this.broken) return;
    this.broken = true;
    try {
      this.socket.close();
    } catch {
      // Already closed by an error: nothing left to release.
    }
  }
}

/**
 * Sends every line as its own datagram, in order (each send is queued behind the one before), and
 * resolves with each one's failure, or undefined when all were sent.
 */
export async function eachSent(lines: readonly Buffer[], sendOne: (line: Buffer) => Promise<void>): Promise<void | readonly (Error | undefined)[]> {
  const results = await Promise.allSettled(lines.map(sendOne));
  if (results.every((r) => r.status === 'fulfilled')) return undefined;
  return results.map((r) => (r.status === 'fulfilled' ? undefined : r.reason instanceof Error ? r.reason : new Error(describe(r.reason))));
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
