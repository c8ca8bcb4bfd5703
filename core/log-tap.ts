/**
 * The server log's lines, as they are written, for `sys/monitor`
 * (https://developer.hashicorp.com/vault/api-docs/system/monitor): the logger built by
 * `serverLogger` hands each line to the tap, which passes it on to every open monitor. A monitor
 * sees the lines the log has, so nothing reaches it that the log would not hold (the log never
 * carries a secret), and the server's level bounds what it can see (docs/metrics.md, "Streaming the log").
 *
 * Each monitor keeps at most MONITOR_BUFFER_LINES lines for its reader; past that, lines are
 * dropped and counted, and the reader gets Vault's marker line in their place, so a slow or stalled
 * reader costs the server a bounded amount of memory and never slows the log.
 */
import type { LogLevel } from './config/config.js';

/** Lines held for one reader before newer ones are dropped (Vault's monitor holds as many). */
export const MONITOR_BUFFER_LINES = 512;

/** pino's level numbers (https://getpino.io/#/docs/api?id=loggerlevels-object). */
const PINO_LEVELS: Readonly<Record<LogLevel, number>> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50 };
const LEVEL_NAMES: Readonly<Record<number, string>> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };

/** Fields every line of the server log carries, which Vault's formats put elsewhere or leave out. */
const ENVELOPE = new Set(['level', 'time', 'pid', 'hostname', 'service', 'msg', 'mount']);

/** A monitor's last line when its node seals: Vault's words. */
export const SEALED_FAREWELL = 'core received sealed state change, ending monitor session';

export type MonitorFormat = 'standard' | 'json';

interface Dropped {
  count: number;
}

interface Subscriber {
  line(text: string): void;
  end(farewell?: string): void;
}

export class LogTap {
  private readonly subscribers = new Set<Subscriber>();

  /** pino's `hooks.streamWrite`: sees each line on its way to the log and returns it unchanged. */
  readonly hook = (line: string): string => {
    for (const subscriber of this.subscribers) subscriber.line(line);
    return line;
  };

  /** How many monitors are open. */
  get open(): number {
    return this.subscribers.size;
  }

  /**
   * A monitor: the log's lines at `level` and above, in `format`, one at a time, until the reader
   * stops reading (the iterator's `return`, which the HTTP layer calls when the client goes away)
   * or `endAll` ends every monitor.
   */
  monitor(level: LogLevel, format: MonitorFormat): AsyncIterableIterator<Uint8Array> {
    const threshold = PINO_LEVELS[level];
    // Lines, and where lines were dropped, the count of them; one slot past the bound holds that count.
    const queue: (string | Dropped)[] = [];
    let ended = false;
    let wake: (() => void) | undefined;
    const subscriber: Subscriber = {
      line: (text) => {
        const entry = parse(text);
        if (!entry || (entry.level as number) < threshold) return;
        const last = queue[queue.length - 1];
        if (queue.length >= MONITOR_BUFFER_LINES) {
          if (typeof last === 'object') last.count++;
          else queue.push({ count: 1 });
        } else {
          queue.push(format === 'json' ? jsonLine(entry) : standardLine(entry));
        }
        wake?.();
      },
      end: (farewell) => {
        if (farewell) queue.push(`${farewell}\n`);
        ended = true;
        this.subscribers.delete(subscriber);
        wake?.();
      },
    };
    this.subscribers.add(subscriber);
    const encoder = new TextEncoder();
    const done = (): IteratorResult<Uint8Array> => {
      subscriber.end();
      queue.length = 0;
      return { done: true, value: undefined };
    };
    const iterator: AsyncIterableIterator<Uint8Array> = {
      next: async () => {
        while (queue.length === 0 && !ended) await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
        const next = queue.shift();
        if (next === undefined) return done();
        // Vault's marker, where the dropped lines would have been.
        return { done: false, value: encoder.encode(typeof next === 'string' ? next : `Monitor dropped ${next.count} logs during monitor request\n`) };
      },
      return: async () => done(),
      throw: async () => done(),
      [Symbol.asyncIterator]: () => iterator,
    };
    return iterator;
  }

  /** Ends every open monitor, after `farewell` as its last line (sealing says why; shutting down says nothing). */
  endAll(farewell?: string): void {
    for (const subscriber of [...this.subscribers]) subscriber.end(farewell);
  }
}

function parse(text: string): Record<string, unknown> | undefined {
  try {
    const entry = JSON.parse(text) as unknown;
    return entry && typeof entry === 'object' && typeof (entry as { level?: unknown }).level === 'number' ? (entry as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The logger that wrote the line: a mount's path (its `mount` binding without the slash), or `core`. */
function moduleOf(entry: Record<string, unknown>): string {
  return typeof entry.mount === 'string' ? entry.mount.replace(/\/$/, '') : 'core';
}

function fieldsOf(entry: Record<string, unknown>): [string, unknown][] {
  return Object.entries(entry).filter(([key]) => !ENVELOPE.has(key));
}

function levelOf(entry: Record<string, unknown>): string {
  return LEVEL_NAMES[entry.level as number] ?? String(entry.level);
}

function timeOf(entry: Record<string, unknown>): string {
  return new Date(typeof entry.time === 'number' ? entry.time : Date.now()).toISOString();
}

/** hclog's standard line, as Vault writes it: `<time> [INFO]  core: message: key=value`. */
function standardLine(entry: Record<string, unknown>): string {
  const level = `[${levelOf(entry).toUpperCase()}]`.padEnd(7);
  const fields = fieldsOf(entry).map(([key, value]) => {
    const text = typeof value === 'string' ? value : JSON.stringify(value);
    return `${key}=${/[\s"=]/.test(text) || text === '' ? JSON.stringify(text) : text}`;
  });
  const message = typeof entry.msg === 'string' ? entry.msg : '';
  return `${timeOf(entry)} ${level} ${moduleOf(entry)}: ${message}${fields.length > 0 ? `: ${fields.join(' ')}` : ''}\n`;
}

/** hclog's JSON line, as Vault writes it: `@level`, `@message`, `@module`, `@timestamp` and the fields. */
function jsonLine(entry: Record<string, unknown>): string {
  const line: Record<string, unknown> = {
    '@level': levelOf(entry),
    '@message': typeof entry.msg === 'string' ? entry.msg : '',
    '@module': moduleOf(entry),
    '@timestamp': timeOf(entry),
  };
  for (const [key, value] of fieldsOf(entry)) if (!(key in line)) line[key] = value;
  return `${JSON.stringify(line)}\n`;
}
