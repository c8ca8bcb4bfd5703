/**
 * One isolated plugin's process, seen from the host: started, serving, then dead (and never used
 * again). The host talks to it over its IPC channel, serves its storage calls from the mount's view,
 * and watches it on one heartbeat: a ping it must answer (a blocked event loop does not) and its
 * resident memory, read by the host from /proc (never reported by the process itself). A process
 * that crashes, exits, runs out of heap, grows past its resident limit or stops answering is
 * killed; the calls it held fail with a 503 naming the plugin and the mount.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import { UnavailableError } from '../../errors.js';
import type { Storage } from '../../../storage/storage.js';
import { PluginError } from '../registry.js';
import { PLUGIN_MAIN, ignoreInspectorSignal, processFlags } from './confinement.js';
import { CRASH_EXIT_CODE, UNCONFINED_EXIT_CODE, fromWire, toWire, type CallResult, type FromPlugin, type HostCall, type PluginStart, type ReadyInfo, type StorageOp, type ToPlugin } from './protocol.js';

/** How an isolated plugin's process is bounded. */
export interface IsolationLimits {
  /** V8 old-generation heap limit of each process, in MB (`--max-old-space-size`). */
  readonly memoryLimitMb: number;
  /**
   * Resident memory limit of each process, in MB: the heap, Buffers and everything else the
   * process holds in RAM. Checked by the host at every heartbeat (Linux only: it reads /proc).
   */
  readonly residentLimitMb: number;
  /** A process that answers no ping for this long is taken as blocked and killed, in ms. */
  readonly watchdogMs: number;
}

/** What a process holds besides its heap when no resident limit is set: Node itself, the SDK, the WASM core, Buffers. */
export const RESIDENT_HEADROOM_MB = 128;

export const DEFAULT_ISOLATION_LIMITS: IsolationLimits = { memoryLimitMb: 128, residentLimitMb: 128 + RESIDENT_HEADROOM_MB, watchdogMs: 10_000 };

/** The longest time between two heartbeats, in ms: how long a burst of memory can go unseen. */
export const MAX_HEARTBEAT_MS = 1000;

/** What V8 writes to stderr when a heap outgrows `--max-old-space-size`, just before it aborts. */
const HEAP_OUT_OF_MEMORY = 'JavaScript heap out of memory';

export interface ProcessContext {
  readonly label: string;
  readonly logger: Logger;
  readonly storage: Storage;
  readonly limits: IsolationLimits;
  readonly args: readonly string[];
  readonly env: Record<string, string>;
}

type Pending = { resolve: (value: CallResult) => void; reject: (err: Error) => void };

/** Whether this system shows processes' memory in /proc (Linux); read once, when first needed. */
let procStatus: boolean | undefined;

export class PluginProcess {
  private readonly child: ChildProcess;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  private seq = 0;
  private lastPong = Date.now();
  private readonly heartbeat: NodeJS.Timeout;
  /** The end of what the process last wrote to stderr, where V8's heap message may have begun. */
  private stderrTail = '';
  /** V8 said the heap outgrew its limit: the abort that follows is that, not a crash. */
  private heapExhausted = false;
  /** Why the process is gone; set once. */
  dead: string | undefined;
  readonly ready: Promise<ReadyInfo>;
  /** Fails a start still in progress when the process dies. */
  private readonly onDeath: (why: string) => void;

  constructor(
    start: PluginStart,
    private readonly context: ProcessContext,
  ) {
    const { logger: log, limits } = context;
    ignoreInspectorSignal(log);
    procStatus ??= existsSync('/proc/self/status');
    if (!procStatus) log.warn('this system has no /proc: the plugin process is held to its heap limit only, not to its resident memory limit');
    this.child = fork(PLUGIN_MAIN, [...context.args], {
      execArgv: processFlags(limits.memoryLimitMb),
      env: context.env,
      // The structured clone algorithm, as between threads: Uint8Array values cross as they are.
      serialization: 'advanced',
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      // A process group of its own: a signal to "its group" cannot reach the host.
      detached: true,
      cwd: path.parse(PLUGIN_MAIN).root,
    });
    this.child.stdout!.on('data', (chunk: Buffer) => log.info({ plugin_output: chunk.toString('utf8').trimEnd() }, 'plugin wrote to stdout'));
    this.child.stderr!.on('data', (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      const seen = this.stderrTail + text;
      if (seen.includes(HEAP_OUT_OF_MEMORY)) this.heapExhausted = true;
      this.stderrTail = seen.slice(-HEAP_OUT_OF_MEMORY.length);
      log.warn({ plugin_output: text.trimEnd() }, 'plugin wrote to stderr');
    });
    let readyResolve!: (info: ReadyInfo) => void;
    let readyReject!: (err: Error) => void;
    this.ready = new Promise((resolve, reject) => {
      readyResolve = resolve;
      readyReject = reject;
    });
    // Nobody may be waiting on `ready` when the process dies later; that is not an unhandled rejection.
    this.ready.catch(() => undefined);
    this.onDeath = (why) => readyReject(this.unavailable(why));
    this.child.on('message', (message: FromPlugin) => this.receive(message, readyResolve, readyReject));
    this.child.on('error', (err) => {
      log.error({ err: err.message }, 'plugin process failed');
      this.kill(`failed: ${err.message}`);
    });
    // 'close', not 'exit': by then everything the process wrote to stderr has been read.
    this.child.on('close', (code, signal) => this.die(this.exitReason(code, signal)));
    const watchdog = limits.watchdogMs;
    const tick = Math.min(MAX_HEARTBEAT_MS, Math.max(10, Math.floor(watchdog / 4)));
    let lastTick = Date.now();
    this.heartbeat = setInterval(() => {
      const now = Date.now();
      // A late tick means the host itself was busy: pongs may be waiting in its queue, so the
      // process is not blamed for it and gets a full period again.
      if (now - lastTick > 2 * tick) this.lastPong = now;
      lastTick = now;
      if (now - this.lastPong > watchdog) {
        log.error({ watchdog_ms: watchdog }, 'plugin stopped responding; killing its process');
        this.kill(`stopped responding: its event loop was blocked for more than ${watchdog} ms`);
        return;
      }
      this.post({ t: 'ping', seq: this.seq++ });
      void this.checkResidentMemory();
    }, tick);
    this.heartbeat.unref();
    this.post({ t: 'start', start });
  }

  /** The operating system's id of the process (tests look it up in /proc). */
  get pid(): number | undefined {
    return this.child.pid;
  }

  call(call: HostCall): Promise<CallResult> {
    if (this.dead) return Promise.reject(this.unavailable(this.dead));
    const id = this.nextId++;
    return new Promise<CallResult>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.post({ t: 'call', id, call });
    });
  }

  notify(message: ToPlugin): void {
    if (!this.dead) this.post(message);
  }

  /** Ends the process at once; the calls it held fail with `why`. */
  kill(why: string): void {
    this.die(why);
    this.child.kill('SIGKILL');
  }

  private receive(message: FromPlugin, readyResolve: (info: ReadyInfo) => void, readyReject: (err: Error) => void): void {
    switch (message.t) {
      case 'ready':
        readyResolve(message.info);
        return;
      case 'start-failed':
        readyReject(fromWire(message.error, `${this.context.label}: `));
        this.kill(`failed to start: ${message.error.message}`);
        return;
      case 'pong':
        this.lastPong = Date.now();
        return;
      case 'log':
        this.relayLog(message.line);
        return;
      case 'storage':
        // A process killed (past a request's deadline, or by the watchdog) writes nothing more,
        // whatever was still on its way through the channel.
        if (this.dead) return;
        void this.serveStorage(message.id, message.request);
        return;
      case 'result': {
        const waiter = this.pending.get(message.id);
        if (!waiter) return;
        this.pending.delete(message.id);
        if (message.ok) waiter.resolve(message.value);
        else waiter.reject(fromWire(message.error, `${this.context.label} failed: `));
        return;
      }
    }
  }

  private exitReason(code: number | null, signal: NodeJS.Signals | null): string {
    if (this.heapExhausted) return `ran out of memory (its heap limit is ${this.context.limits.memoryLimitMb} MB)`;
    if (code === CRASH_EXIT_CODE) return 'crashed (an uncaught error; see the server log)';
    if (code === UNCONFINED_EXIT_CODE) return 'refused to run without Node\'s permission model';
    return signal ? `exited (signal ${signal})` : `exited (code ${code})`;
  }

  /** Kills the process if it holds more resident memory than its limit. */
  private async checkResidentMemory(): Promise<void> {
    const pid = this.child.pid;
    if (pid === undefined || this.dead || !procStatus) return;
    let status: string;
    try {
      status = await readFile(`/proc/${pid}/status`, 'utf8');
    } catch {
      // Gone meanwhile: its exit is handled on its own.
      return;
    }
    const kb = /^VmRSS:\s*(\d+)\s*kB/m.exec(status);
    if (!kb) return;
    const mb = Math.round(Number(kb[1]) / 1024);
    const limit = this.context.limits.residentLimitMb;
    if (mb <= limit || this.dead) return;
    this.context.logger.error({ resident_mb: mb, limit_mb: limit }, 'plugin exceeded its resident memory limit; killing its process');
    this.kill(`ran out of memory (it held ${mb} MB resident, its limit is ${limit} MB)`);
  }

  private die(why: string): void {
    if (this.dead) return;
    this.dead = why;
    clearInterval(this.heartbeat);
    this.onDeath(why);
    const err = this.unavailable(why);
    for (const waiter of this.pending.values()) waiter.reject(err);
    this.pending.clear();
  }

  private unavailable(why: string): UnavailableError {
    return new UnavailableError(`${this.context.label} ${why}; it is restarted on the next request`);
  }

  private post(message: ToPlugin): void {
    if (this.child.connected) this.child.send(message);
  }

  private relayLog(line: string): void {
    let entry: Record<string, unknown>;
    try {
      entry = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return;
    }
    const { level, msg, time: _time, ...fields } = entry;
    const name = typeof level === 'number' ? (level >= 50 ? 'error' : level >= 40 ? 'warn' : level >= 30 ? 'info' : 'debug') : 'info';
    this.context.logger[name](fields, typeof msg === 'string' ? msg : '');
  }

  /** Serves one storage call from this mount's view, checking the shape of what the process sent. */
  private async serveStorage(id: number, request: StorageOp): Promise<void> {
    const s = this.context.storage;
    const isKey = (k: unknown): k is string => typeof k === 'string';
    const isValue = (v: unknown): v is Uint8Array => v instanceof Uint8Array;
    let reply: ToPlugin;
    try {
      let value: unknown;
      switch (request.op) {
        case 'get':
          if (!isKey(request.key)) throw new PluginError('storage: key must be a string');
          value = await s.get(request.key);
          break;
        case 'delete':
          if (!isKey(request.key)) throw new PluginError('storage: key must be a string');
          await s.delete(request.key);
          break;
        case 'put':
          if (!isKey(request.key) || !isValue(request.value)) throw new PluginError('storage: put needs a string key and bytes');
          await s.put(request.key, request.value);
          break;
        case 'list':
          if (!isKey(request.prefix)) throw new PluginError('storage: prefix must be a string');
          value = await s.list(request.prefix);
          break;
        case 'batch':
          if (!Array.isArray(request.ops) || !(request.ops as { key?: unknown; type?: unknown; value?: unknown }[]).every((o) => isKey(o.key) && (o.type === 'delete' || (o.type === 'put' && isValue(o.value))))) {
            throw new PluginError('storage: batch needs put and delete operations with string keys and bytes');
          }
          await s.batch(request.ops);
          break;
        default:
          throw new PluginError('storage: unknown operation');
      }
      reply = { t: 'storage-result', id, ok: true, value };
    } catch (err) {
      reply = { t: 'storage-result', id, ok: false, error: toWire(err) };
    }
    this.notify(reply);
  }
}
