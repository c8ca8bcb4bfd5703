/**
 * Keeps a test process off the network: every outgoing TCP connection from this process to a host
 * other than the loopback is refused at once (ECONNREFUSED, as a closed port answers) and recorded.
 * The fuzzer may write any endpoint into a plugin's configuration, and an SDK falls back to
 * instance metadata (169.254.169.254) without credentials; neither may leave the machine, or wait
 * on DNS, during a test. The SSRF checks read `attempts`.
 */
import net from 'node:net';

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost|::ffff:127\.\d+\.\d+\.\d+)$/i;

export interface NetworkGuard {
  /** `host:port` of every refused connection, in order. */
  readonly attempts: string[];
  restore(): void;
}

type Connect = (this: net.Socket, ...args: unknown[]) => net.Socket;

export function guardOutboundConnections(): NetworkGuard {
  const original = net.Socket.prototype.connect as unknown as Connect;
  const attempts: string[] = [];
  const guarded: Connect = function (this: net.Socket, ...args: unknown[]) {
    const first = args[0];
    const options = (Array.isArray(first) ? first[0] : first) as { host?: string; port?: number; path?: string } | number | string;
    let host: string | undefined;
    let port: unknown;
    if (typeof options === 'object' && options !== null) {
      if (options.path === undefined) {
        host = options.host ?? 'localhost';
        port = options.port;
      }
    } else if (typeof options === 'number' || (typeof options === 'string' && /^\d+$/.test(options))) {
      host = typeof args[1] === 'string' ? args[1] : 'localhost';
      port = options;
    }
    if (host !== undefined && !LOOPBACK.test(host.replace(/^\[|\]$/g, ''))) {
      attempts.push(`${host}:${String(port)}`);
      const error = Object.assign(new Error(`connect ECONNREFUSED ${host}:${String(port)} (blocked by the test's network guard)`), {
        code: 'ECONNREFUSED',
        syscall: 'connect',
        address: host,
        port,
      });
      process.nextTick(() => this.destroy(error));
      return this;
    }
    return original.apply(this, args);
  };
  net.Socket.prototype.connect = guarded as unknown as typeof net.Socket.prototype.connect;
  return {
    attempts,
    restore: () => {
      net.Socket.prototype.connect = original as unknown as typeof net.Socket.prototype.connect;
    },
  };
}
