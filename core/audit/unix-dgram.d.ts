/**
 * Types of `unix-dgram` (a native module shipped without them), as far as the syslog device and
 * its tests use it. Errors carry the negative errno in `code`; a send the kernel refused for lack
 * of buffer space (EAGAIN, ENOBUFS) fails with `code` 1 and the message "congestion".
 */
declare module 'unix-dgram' {
  import type { EventEmitter } from 'node:events';

  export interface UnixDgramError extends Error {
    readonly code: number;
  }

  export interface UnixDgramSocket extends EventEmitter {
    /** Binds a listening socket at `path` (emits 'listening', or 'error'); the caller unlinks it. */
    bind(path: string): void;
    /** Connects synchronously: emits 'connect', or 'error' (ENOENT, ECONNREFUSED, EPROTOTYPE, …). */
    connect(path: string): void;
    /** On a connected socket: sends one datagram without blocking; the callback runs before it returns, and after a congestion failure the socket emits 'writable' once it can send again. */
    send(data: Buffer, callback: (err?: UnixDgramError) => void): void;
    /** Releases the descriptor and its event-loop watcher; throws when close(2) fails. */
    close(): void;
  }

  export function createSocket(type: 'unix_dgram', onMessage?: (message: Buffer) => void): UnixDgramSocket;
}
