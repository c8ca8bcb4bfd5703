/**
 * The `socket` audit device: one JSON line per entry to a collector over TCP, UDP (one datagram
 * per entry) or a unix stream socket, with Vault's options `address`, `socket_type` (default
 * `tcp`) and `write_timeout` (default `2s`).
 *
 * Enabling connects at once, so a wrong address is a 400 rather than a silent gap in the log. A
 * collector that restarts is reconnected to on the next write; a write that fails twice (the
 * second time on a fresh connection) fails this device, and when no other device recorded the
 * entry the request is refused. See socket-sink.ts for the timeouts.
 *
 * An API-created device connects only to an address the configuration file lists
 * (`api_audit_socket_allowlist`): otherwise a token with sudo on `sys/audit` could make the server
 * send bytes it shapes to any service the server's host can reach.
 */
import path from 'node:path';
import { BadRequestError } from '../errors.js';
import { CoercionError, parseDurationExact } from '../framework/fields.js';
import type { AuditEntry } from './entry.js';
import { oneBuffer, parseCommonOptions, serializeEntry, type AuditDevice, type DeviceSettings } from './device.js';
import { SocketSink, type SocketEndpoint } from './socket-sink.js';
import { checkApiSocketTarget, hostPort, type DeviceContext } from './rules.js';

export const SOCKET_DEVICE_OPTIONS = ['address', 'socket_type', 'write_timeout'] as const;

const SOCKET_TYPES = ['tcp', 'udp', 'unix'] as const;
const DEFAULT_WRITE_TIMEOUT_MS = 2000;

export class SocketAuditDevice implements AuditDevice {
  private readonly sink: SocketSink;

  constructor(
    readonly settings: DeviceSettings,
    readonly endpoint: SocketEndpoint,
    readonly writeTimeoutMs: number = DEFAULT_WRITE_TIMEOUT_MS,
  ) {
    this.sink = SocketSink.to(endpoint, writeTimeoutMs);
  }

  /** Validates the `socket` device's options (400 naming the bad one); nothing is connected yet. */
  static fromOptions(options: Readonly<Record<string, string>>, context: DeviceContext): SocketAuditDevice {
    const settings = parseCommonOptions(options, SOCKET_DEVICE_OPTIONS, context);
    const endpoint = parseEndpoint(options.socket_type, options.address);
    const writeTimeoutMs = parseWriteTimeout(options.write_timeout);
    if (context.origin === 'api') {
      checkApiSocketTarget(endpoint.kind === 'unix' ? path.resolve(endpoint.path) : hostPort(endpoint.host, endpoint.port), 'address', context.rules);
    }
    return new SocketAuditDevice(settings, endpoint, writeTimeoutMs);
  }

  async open(): Promise<void> {
    try {
      await this.sink.open();
    } catch (err) {
      throw new BadRequestError(`cannot connect to audit socket ${this.sink.label}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  write(entry: AuditEntry): Promise<void> {
    let line: Buffer;
    try {
      line = oneBuffer(serializeEntry(entry, this.settings));
    } catch (err) {
      return Promise.reject(err);
    }
    return this.sink.write(line);
  }

  reopen(): Promise<void> {
    return this.sink.reopen();
  }

  close(): Promise<void> {
    return this.sink.close();
  }
}

function parseEndpoint(rawType: string | undefined, address: string | undefined): SocketEndpoint {
  const type = rawType === undefined || rawType === '' ? 'tcp' : rawType;
  if (!(SOCKET_TYPES as readonly string[]).includes(type)) {
    throw new BadRequestError(`audit device option "socket_type": "${type}" is not one of ${SOCKET_TYPES.join(', ')}`);
  }
  if (address === undefined || address === '') throw new BadRequestError('audit device option "address" is required');
  if (type === 'unix') return { kind: 'unix', path: address };
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(address);
  const port = match ? Number(match[3]) : NaN;
  if (!match || port < 1 || port > 65535) {
    throw new BadRequestError(`audit device option "address": "${address}" is not host:port (use [addr]:port for IPv6)`);
  }
  return { kind: type as 'tcp' | 'udp', host: match[1] ?? match[2]!, port };
}

function parseWriteTimeout(raw: string | undefined): number {
  if (raw === undefined || raw === '') return DEFAULT_WRITE_TIMEOUT_MS;
  let seconds: number;
  try {
    seconds = parseDurationExact(raw);
  } catch (err) {
    if (err instanceof CoercionError) throw new BadRequestError(`audit device option "write_timeout": ${err.message}`);
    throw err;
  }
  const ms = Math.round(seconds * 1000);
  // Zero would mean "no bound" in Go; here every write is bounded, so it is refused.
  if (ms < 1 || ms > 60_000) throw new BadRequestError(`audit device option "write_timeout": "${raw}" must be between 1ms and 1m`);
  return ms;
}
