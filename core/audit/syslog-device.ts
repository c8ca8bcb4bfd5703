/**
 * The `syslog` audit device: each entry as one message to the local syslog daemon, with Vault's
 * options `facility` (default `AUTH`) and `tag` (default `keywarden`; Vault's is `vault`), at
 * severity INFO as Vault writes them, in the format Go's log/syslog uses on a local socket:
 * `<PRI>Mmm dd hh:mm:ss TAG[PID]: MESSAGE\n` (RFC 3164 without the host name, which the daemon adds).
 *
 * Transport, and why: syslog daemons listen on a unix socket (`/dev/log` on Linux,
 * `/var/run/syslog` on macOS, `/var/run/log` on the BSDs), nearly always a datagram one (rsyslog's
 * imuxsock, journald, macOS's syslogd); some are set up with a stream socket instead (syslog-ng's
 * `unix-stream()`, rsyslog's `imptcp` with a `path`). As Go's log/syslog does, the device tries
 * every path as a datagram socket, then every path as a stream socket, and keeps the first that
 * connects; the option `socket_path` (Keywarden's own) names the one socket to use instead. Node
 * has no unix datagram sockets, so those go through the native module `unix-dgram`, loaded only
 * here (see unix-datagram.ts). A datagram carries one entry up to the socket's send buffer size
 * (about 200 KiB on Linux); a larger entry fails its write, where a stream would carry it.
 *
 * An API-created device may name only a standard socket or one the configuration file lists
 * (`api_audit_socket_allowlist`) as its `socket_path`: any other unix socket would be a way to send
 * bytes to a local service the configuration never allowed.
 */
import path from 'node:path';
import { BadRequestError } from '../errors.js';
import type { AuditEntry } from './entry.js';
import { oneBuffer, parseCommonOptions, serializeEntry, type AuditDevice, type DeviceSettings } from './device.js';
import { openConnection, SocketSink, type Connection } from './socket-sink.js';
import { DatagramUnavailableError, openUnixDatagram } from './unix-datagram.js';
import type { DeviceContext } from './rules.js';

export const SYSLOG_DEVICE_OPTIONS = ['facility', 'tag', 'socket_path'] as const;

/** Where the local syslog daemon listens, in the order Go's log/syslog tries them. */
export const DEFAULT_SYSLOG_PATHS: readonly string[] = ['/dev/log', '/var/run/syslog', '/var/run/log'];

/** Facility codes (RFC 5424 table 1), under the names Vault's syslog device accepts. */
const FACILITIES: Readonly<Record<string, number>> = {
  KERN: 0, USER: 1, MAIL: 2, DAEMON: 3, AUTH: 4, SYSLOG: 5, LPR: 6, NEWS: 7, UUCP: 8, CRON: 9,
  AUTHPRIV: 10, FTP: 11,
  LOCAL0: 16, LOCAL1: 17, LOCAL2: 18, LOCAL3: 19, LOCAL4: 20, LOCAL5: 21, LOCAL6: 22, LOCAL7: 23,
};
const SEVERITY_INFO = 6;
/** A syslog daemon answers or refuses a local connection at once; a slow one is not waited for long. */
const WRITE_TIMEOUT_MS = 2000;
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

export class SyslogAuditDevice implements AuditDevice {
  private readonly sink: SocketSink;
  /** `<PRI>` of every message: facility × 8 + INFO. */
  private readonly priority: number;

  constructor(
    readonly settings: DeviceSettings,
    readonly facility: number,
    readonly tag: string,
    readonly socketPaths: readonly string[],
  ) {
    this.priority = facility * 8 + SEVERITY_INFO;
    this.sink = new SocketSink((signal) => connectFirst(socketPaths, signal), WRITE_TIMEOUT_MS, `syslog ${socketPaths.join(', ')}`);
  }

  /** Validates the `syslog` device's options (400 naming the bad one); nothing is connected yet. */
  static fromOptions(options: Readonly<Record<string, string>>, context: DeviceContext): SyslogAuditDevice {
    const settings = parseCommonOptions(options, SYSLOG_DEVICE_OPTIONS, context);
    const facilityName = (options.facility || 'AUTH').toUpperCase();
    const facility = Object.hasOwn(FACILITIES, facilityName) ? FACILITIES[facilityName] : undefined;
    if (facility === undefined) {
      throw new BadRequestError(`audit device option "facility": "${options.facility}" is not one of ${Object.keys(FACILITIES).join(', ')}`);
    }
    const tag = options.tag || 'keywarden';
    // The tag ends at the first space or colon for every syslog parser; a newline would split the message.
    if (!/^[\x21-\x7e]{1,48}$/.test(tag) || tag.includes(':') || tag.includes('[')) {
      throw new BadRequestError(`audit device option "tag": "${tag}" must be 1 to 48 printable characters without spaces, ":" or "["`);
    }
    const socketPath = options.socket_path;
    if (socketPath && context.origin === 'api') checkApiSocketPath(socketPath, context);
    return new SyslogAuditDevice(settings, facility, tag, socketPath ? [socketPath] : DEFAULT_SYSLOG_PATHS);
  }

  async open(): Promise<void> {
    try {
      await this.sink.open();
    } catch (err) {
      throw new BadRequestError(`cannot connect to the syslog socket: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  write(entry: AuditEntry): Promise<void> {
    let message: Buffer;
    try {
      message = oneBuffer(serializeEntry(entry, this.settings, `<${this.priority}>${stamp(new Date())} ${this.tag}[${process.pid}]: `));
    } catch (err) {
      return Promise.reject(err);
    }
    return this.sink.write(message);
  }

  reopen(): Promise<void> {
    return this.sink.reopen();
  }

  close(): Promise<void> {
    return this.sink.close();
  }
}

/** Refuses an API-created device's `socket_path` that is neither a standard syslog socket nor listed. */
function checkApiSocketPath(socketPath: string, context: DeviceContext): void {
  const target = path.resolve(socketPath);
  if (DEFAULT_SYSLOG_PATHS.includes(target) || context.rules.apiAuditSocketAllowlist.includes(target)) return;
  throw new BadRequestError(
    `audit device option "socket_path": "${socketPath}" is neither a standard syslog socket (${DEFAULT_SYSLOG_PATHS.join(', ')}) ` +
      'nor in the configuration\'s api_audit_socket_allowlist',
  );
}

/**
 * Connects to the first of `paths` that accepts a datagram connection, else to the first that
 * accepts a stream connection (the order of Go's log/syslog); rejects naming each path and why
 * it failed.
 */
export async function connectFirst(paths: readonly string[], signal: AbortSignal): Promise<Connection> {
  const datagramFailures: unknown[] = [];
  for (const path of paths) {
    try {
      return await openUnixDatagram(path, signal);
    } catch (err) {
      datagramFailures.push(err);
      if (signal.aborted) throw err;
    }
  }
  const failures: string[] = [];
  for (const [i, path] of paths.entries()) {
    try {
      return await openConnection({ kind: 'unix', path }, signal);
    } catch (err) {
      failures.push(`${path}: ${whyNeither(datagramFailures[i], err)}`);
      if (signal.aborted) break;
    }
  }
  throw new Error(failures.join('; '));
}

/** One path's failure, from its datagram and its stream attempt: the code when both agree, else both. */
function whyNeither(datagram: unknown, stream: unknown): string {
  const streamCode = messageOf(stream);
  if (datagram instanceof DatagramUnavailableError) {
    // Only a stream connection was tried: EPROTOTYPE says the socket was a datagram one.
    return streamCode === 'EPROTOTYPE' ? `a datagram socket, and ${datagram.message}` : streamCode;
  }
  const datagramCode = messageOf(datagram);
  if (datagramCode === streamCode) return streamCode;
  return `datagram ${datagramCode}, stream ${streamCode}`;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Go's time.Stamp in local time: `Jan _2 15:04:05`. */
function stamp(now: Date): string {
  const two = (n: number) => String(n).padStart(2, '0');
  return `${MONTHS[now.getMonth()]} ${String(now.getDate()).padStart(2, ' ')} ${two(now.getHours())}:${two(now.getMinutes())}:${two(now.getSeconds())}`;
}
