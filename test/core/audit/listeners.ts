/**
 * Real collectors for the socket and syslog audit devices: a TCP server, a UDP socket, a unix
 * stream server and a unix datagram socket (as a syslog daemon binds `/dev/log`), each keeping
 * every line (or datagram) it received and counting its connections.
 */
import { spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { unlink } from 'node:fs/promises';
import { createSocket as createUnixDatagramSocket } from 'unix-dgram';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';

export interface Collector {
  /** `127.0.0.1:port`, or the socket path. */
  readonly address: string;
  /** Each received line (stream) or datagram, without its trailing newline. */
  readonly lines: string[];
  /** Stream connections accepted so far. */
  connections: number;
  /** Stream connections open now. */
  readonly open: number;
  /** Waits until `predicate` holds over the lines; fails after `ms`. */
  waitFor(predicate: (lines: readonly string[]) => boolean, ms?: number): Promise<void>;
  /** Closes the connections open now (the listener keeps listening); resolves when they are closed. */
  dropConnections(): Promise<void>;
  /** Stops reading from every connection, current and new (a collector that hangs). */
  pause(): void;
  /** Reads again. */
  resume(): void;
  /** Stops listening and closes every connection. */
  close(): Promise<void>;
}

function waiter(lines: string[]) {
  return async (predicate: (lines: readonly string[]) => boolean, ms = 5000): Promise<void> => {
    const deadline = Date.now() + ms;
    while (!predicate(lines)) {
      if (Date.now() > deadline) throw new Error(`collector: condition not met within ${ms} ms; got ${lines.length} line(s)`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };
}

/** A stream server on TCP (on 127.0.0.1, at `port` or a free one) or a unix socket path. */
export async function streamCollector(listen: { path: string } | { tcp: true; port?: number }): Promise<Collector> {
  const lines: string[] = [];
  const open = new Set<Socket>();
  let paused = false;
  const server: Server = createServer((socket) => {
    collector.connections++;
    open.add(socket);
    if (paused) socket.pause();
    socket.on('close', () => open.delete(socket));
    socket.on('error', () => undefined);
    let buffered = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      buffered += chunk;
      let nl: number;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        lines.push(buffered.slice(0, nl));
        buffered = buffered.slice(nl + 1);
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    if ('path' in listen) server.listen(listen.path, resolve);
    else server.listen(listen.port ?? 0, '127.0.0.1', resolve);
  });
  const address = 'path' in listen ? listen.path : `127.0.0.1:${(server.address() as AddressInfo).port}`;
  const dropAll = () =>
    Promise.all(
      [...open].map(
        (socket) =>
          new Promise<void>((resolve) => {
            socket.once('close', () => resolve());
            socket.destroy();
          }),
      ),
    ).then(() => undefined);
  const collector: Collector = {
    address,
    lines,
    connections: 0,
    get open() {
      return open.size;
    },
    waitFor: waiter(lines),
    dropConnections: dropAll,
    pause: () => {
      paused = true;
      for (const socket of open) socket.pause();
    },
    resume: () => {
      paused = false;
      for (const socket of open) socket.resume();
    },
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      await dropAll();
      await closed;
    },
  };
  return collector;
}

/** A UDP socket on 127.0.0.1; each datagram is one entry. */
export async function datagramCollector(): Promise<Collector> {
  const lines: string[] = [];
  const socket = createSocket('udp4');
  socket.on('message', (message) => lines.push(message.toString('utf8').replace(/\n$/, '')));
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return connectionless(`127.0.0.1:${socket.address().port}`, lines, () => new Promise<void>((resolve) => socket.close(() => resolve())));
}

/** A datagram collector: no connections to count, drop, pause or resume. */
function connectionless(address: string, lines: string[], close: () => Promise<void>): Collector {
  return {
    address,
    lines,
    connections: 0,
    open: 0,
    waitFor: waiter(lines),
    dropConnections: async () => undefined,
    pause: () => undefined,
    resume: () => undefined,
    close,
  };
}

/**
 * A unix datagram socket bound at `path`, as rsyslog or journald binds `/dev/log`; each datagram
 * is one message. Closing it leaves the socket file behind, as a daemon that died does; binding
 * again at the same path replaces the file, as a restarted daemon does.
 */
export async function unixDatagramCollector(path: string): Promise<Collector> {
  const lines: string[] = [];
  await unlink(path).catch(() => undefined);
  const socket = createUnixDatagramSocket('unix_dgram', (message) => lines.push(message.toString('utf8').replace(/\n$/, '')));
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.once('listening', resolve);
    socket.bind(path);
  });
  let closed = false;
  return connectionless(path, lines, async () => {
    if (closed) return;
    closed = true;
    socket.close();
  });
}

/**
 * A datagram daemon in its own process that stops reading for `stallMs` after its first message,
 * as a busy rsyslog does: its queue (the kernel's `max_dgram_qlen`, 10 or so) fills and senders
 * see EAGAIN until it reads again. Each message comes back as one line on the child's stdout.
 */
export async function stallingUnixDatagramCollector(path: string, stallMs: number): Promise<Collector> {
  const lines: string[] = [];
  await unlink(path).catch(() => undefined);
  const script = `
    const { createSocket } = require('unix-dgram');
    let stalled = false;
    const socket = createSocket('unix_dgram', (message) => {
      process.stdout.write(message.toString('utf8').replace(/\\n$/, '') + '\\n');
      if (!stalled) {
        stalled = true;
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Number(process.argv[2]));
      }
    });
    socket.on('listening', () => process.stdout.write('listening\\n'));
    socket.bind(process.argv[1]);`;
  // Run from the project root, where unix-dgram resolves.
  const child = spawn(process.execPath, ['-e', script, path, String(stallMs)], { cwd: fileURLToPath(new URL('../../../..', import.meta.url)), stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let buffered = '';
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the datagram daemon exited (${code}) before listening`)));
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      buffered += chunk;
      let nl: number;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        if (line === 'listening') resolve();
        else lines.push(line);
      }
    });
  });
  return connectionless(path, lines, async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
}

/** The audit entries among `lines` (JSON after `prefix`), for request id or path lookups. */
export function entriesOf(lines: readonly string[], prefix = ''): Array<Record<string, any>> {
  return lines.filter((l) => l.startsWith(prefix)).map((l) => JSON.parse(l.slice(prefix.length)) as Record<string, any>);
}
