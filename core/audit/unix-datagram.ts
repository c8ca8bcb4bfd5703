/**
 * Unix datagram connections for the syslog device. The local syslog daemon listens on a unix
 * datagram socket (rsyslog's and journald's `/dev/log`, macOS's `/var/run/syslog`), which Node's
 * `dgram` cannot open; the native module `unix-dgram` can. It is loaded on first use, only when a
 * syslog device connects, so a machine where its build failed runs everything else and names the
 * reason when a datagram socket is actually needed.
 *
 * The socket is non-blocking: while a daemon's queue is full (its `max_dgram_qlen` datagrams
 * unread), entries wait for it asynchronously instead of stalling the event loop, for at most the
 * device's write timeout; after that the write fails like any other.
 */
import { getSystemErrorName } from 'node:util';
import type { UnixDgramSocket } from 'unix-dgram';
import { eachSent, type Connection } from './socket-sink.js';

/** The module could not be loaded (not installed, or its native part did not build). */
export class DatagramUnavailableError extends Error {}

type UnixDgram = typeof import('unix-dgram');

/** sockaddr_un's sun_path: 108 bytes on Linux, 104 on macOS and the BSDs, the terminating NUL included. */
const SUN_PATH_SIZE = process.platform === 'linux' ? 108 : 104;

/** Loaded once per process: a module that failed to load stays unavailable until a restart. */
let loading: Promise<UnixDgram> | undefined;

function loadUnixDgram(): Promise<UnixDgram> {
  loading ??= import('unix-dgram').catch((err: unknown) => {
    // The code only (ERR_MODULE_NOT_FOUND, ERR_DLOPEN_FAILED): the loader's message lists install
    // paths. Without a code it is `bindings` not finding the addon, i.e. it was never built.
    const code = (err as NodeJS.ErrnoException | undefined)?.code ?? 'its native addon was not built';
    throw new DatagramUnavailableError(
      `the unix-dgram module did not load (${code}): an optional native addon, built when Keywarden is ` +
        'installed if its install script may run and node-gyp finds python3, make and a C++ compiler',
    );
  });
  return loading;
}

/** Opens a datagram connection to `path`; rejects with the OS error code (ENOENT, ECONNREFUSED, EPROTOTYPE, …). */
export async function openUnixDatagram(path: string, signal: AbortSignal): Promise<Connection> {
  const { createSocket } = await loadUnixDgram();
  signal.throwIfAborted();
  // The module cuts a longer path to fit sockaddr_un, which would reach some other socket.
  if (Buffer.byteLength(path) >= SUN_PATH_SIZE) throw new Error('ENAMETOOLONG');
  let socket: UnixDgramSocket;
  try {
    socket = createSocket('unix_dgram');
  } catch (err) {
    throw new Error(osCode(err));
  }
  let failure: unknown;
  // connect() reports through an 'error' event, synchronously; the listener stays so that no
  // later 'error' can go unhandled.
  socket.on('error', (err: unknown) => {
    failure = err;
  });
  socket.connect(path);
  if (failure !== undefined) {
    closeQuietly(socket);
    throw new Error(osCode(failure));
  }
  return new UnixDatagramConnection(socket);
}

/** A datagram waiting for its turn: sends keep their order while the daemon's queue is full. */
interface Pending {
  readonly data: Buffer;
  readonly resolve: () => void;
  readonly reject: (err: Error) => void;
}

class UnixDatagramConnection implements Connection {
  private broken = false;
  /** The module asserts (aborting the process) when a descriptor is closed twice. */
  private closed = false;
  private readonly pending: Pending[] = [];

  constructor(private readonly socket: UnixDgramSocket) {}

  get usable(): boolean {
    return !this.broken;
  }

  /**
   * One entry, one datagram. While the daemon's queue is full the datagram waits (the sink's
   * timeout bounds that) until the socket turns writable. Fails with ECONNREFUSED once the
   * daemon's socket is gone (a restarted daemon binds a new one, reached by reconnecting), and
   * EMSGSIZE for an entry larger than the socket's send buffer: that entry alone, the entries
   * queued behind it are still sent.
   */
  send(lines: readonly Buffer[]): Promise<void | readonly (Error | undefined)[]> {
    return eachSent(lines, (line) => this.sendOne(line));
  }

  private sendOne(data: Buffer): Promise<void> {
    if (this.broken) return Promise.reject(new Error('ENOTCONN'));
    return new Promise((resolve, reject) => {
      this.pending.push({ data, resolve, reject });
      if (this.pending.length === 1) this.flush();
    });
  }

  /** Datagrams already sent are with the daemon: nothing to wait for. */
  async finish(): Promise<void> {
    this.close();
  }

  close(): void {
    this.fail(new Error('connection closed'));
    if (this.closed) return;
    this.closed = true;
    this.socket.removeAllListeners('writable');
    closeQuietly(this.socket);
  }

  private flush(): void {
    while (this.pending.length > 0 && !this.broken) {
      const next = this.pending[0]!;
      let congested = false;
      let failure: Error | undefined;
      // The module calls back before send() returns.
      this.socket.send(next.data, (err) => {
        if (err?.code === 1) congested = true;
        else if (err) failure = new Error(osCode(err));
      });
      if (congested) {
        this.socket.once('writable', () => this.flush());
        return;
      }
      this.pending.shift();
      if (!failure) next.resolve();
      else if (failure.message === 'EMSGSIZE') next.reject(failure);
      else {
        next.reject(failure);
        return this.fail(failure);
      }
    }
  }

  /** Marks the connection broken and fails every datagram not yet sent. */
  private fail(err: Error): void {
    this.broken = true;
    for (const waiting of this.pending.splice(0)) waiting.reject(err);
  }
}

function closeQuietly(socket: UnixDgramSocket): void {
  try {
    socket.close();
  } catch {
    // close(2) failing leaves nothing this process can release.
  }
}

/** `ECONNREFUSED` for the module's `-111`. */
function osCode(err: unknown): string {
  const code = (err as { code?: unknown } | undefined)?.code;
  if (typeof code === 'number' && code < 0) return getSystemErrorName(code);
  return err instanceof Error ? err.message : String(err);
}
