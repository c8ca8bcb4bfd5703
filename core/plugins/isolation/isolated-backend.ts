/**
 * The host's side of an isolated (external) plugin: a `Backend` whose work runs in a worker thread
 * of its own, one per mount. The worker gets the verified module text and its mount's snapshot;
 * its storage calls are served here from that mount's view of the barrier, nothing else.
 *
 * A worker that crashes, runs out of its memory limit or stops answering the watchdog's pings (a
 * blocked event loop) is terminated; the requests it held fail with a 503 naming the plugin and
 * the mount, and the next request starts a new worker, after checking the module's SHA-256 again.
 * The host and the other mounts never notice.
 */
import { Worker } from 'node:worker_threads';
import { pathToFileURL } from 'node:url';
import type { Logger } from 'pino';
import { NotFoundError, UnavailableError } from '../../errors.js';
import type { Backend, PreparedRequest } from '../../framework/backend.js';
import { renderHelp, type PathHelp } from '../../framework/help.js';
import { PathPattern } from '../../framework/path.js';
import type { AuthResult, LogicalRequest, LogicalResponse } from '../../framework/request.js';
import type { MountEntry } from '../../mounts/mount-entry.js';
import type { Storage } from '../../../storage/storage.js';
import type { ExternalEntry } from '../catalog.js';
import { readVerifiedModule } from '../plugin-file.js';
import { PluginError } from '../registry.js';
import { fromWire, toWire, type CallResult, type FromWorker, type HostCall, type ReadyInfo, type StorageOp, type SystemValues, type ToWorker, type WireRequest, type WorkerStart } from './protocol.js';

/** How an isolated plugin's worker is bounded. */
export interface IsolationLimits {
  /** V8 old-generation heap limit of each worker, in MB. */
  readonly memoryLimitMb: number;
  /** A worker that answers no ping for this long is taken as blocked and terminated, in ms. */
  readonly watchdogMs: number;
}

export const DEFAULT_ISOLATION_LIMITS: IsolationLimits = { memoryLimitMb: 128, watchdogMs: 10_000 };

const WORKER_URL = new URL('./worker-main.js', import.meta.url);
/** Where a plugin's import of the SDK (the specifier keywarden/sdk) leads: the host's own. */
const SDK_URL = new URL('../../../sdk/index.js', import.meta.url).href;

export interface IsolatedBackendOptions {
  readonly entry: ExternalEntry;
  readonly directory: string | undefined;
  /** The live mount entry (read again at each start and request, so tunes apply). */
  readonly mount: () => MountEntry;
  readonly storage: Storage;
  readonly logger: Logger;
  readonly system: () => SystemValues;
  readonly limits: IsolationLimits;
}

type Pending = { resolve: (value: CallResult) => void; reject: (err: Error) => void };

/** One worker: started, serving, then dead (and never used again). */
class Runner {
  private readonly worker: Worker;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  private seq = 0;
  private lastPong = Date.now();
  private readonly heartbeat: NodeJS.Timeout;
  /** Why the worker is gone; set once. */
  dead: string | undefined;
  readonly ready: Promise<ReadyInfo>;

  constructor(
    start: WorkerStart,
    private readonly options: IsolatedBackendOptions,
    private readonly label: string,
    args: readonly string[],
    env: Record<string, string>,
  ) {
    this.worker = new Worker(WORKER_URL, {
      workerData: start,
      argv: [...args],
      env,
      stdout: true,
      stderr: true,
      resourceLimits: { maxOldGenerationSizeMb: options.limits.memoryLimitMb },
    });
    const log = options.logger;
    this.worker.stdout.on('data', (chunk: Buffer) => log.info({ plugin_output: chunk.toString('utf8').trimEnd() }, 'plugin wrote to stdout'));
    this.worker.stderr.on('data', (chunk: Buffer) => log.warn({ plugin_output: chunk.toString('utf8').trimEnd() }, 'plugin wrote to stderr'));
    let readyResolve!: (info: ReadyInfo) => void;
    let readyReject!: (err: Error) => void;
    this.ready = new Promise((resolve, reject) => {
      readyResolve = resolve;
      readyReject = reject;
    });
    // Nobody may be waiting on `ready` when the worker dies later; that is not an unhandled rejection.
    this.ready.catch(() => undefined);
    this.worker.on('message', (message: FromWorker) => {
      switch (message.t) {
        case 'ready':
          readyResolve(message.info);
          return;
        case 'start-failed':
          readyReject(fromWire(message.error, `${label}: `));
          this.kill(`failed to start: ${message.error.message}`);
          return;
        case 'pong':
          this.lastPong = Date.now();
          return;
        case 'log':
          this.relayLog(message.line);
          return;
        case 'storage':
          void this.serveStorage(message.id, message.request);
          return;
        case 'result': {
          const waiter = this.pending.get(message.id);
          if (!waiter) return;
          this.pending.delete(message.id);
          if (message.ok) waiter.resolve(message.value);
          else waiter.reject(fromWire(message.error, `${label} failed: `));
          return;
        }
      }
    });
    this.worker.on('error', (err: Error & { code?: string }) => {
      const why =
        err.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? `ran out of memory (its limit is ${options.limits.memoryLimitMb} MB)`
          : 'crashed (an uncaught error; see the server log)';
      log.error({ err: err.message }, `plugin ${why}`);
      this.die(why);
    });
    this.worker.on('exit', (code) => this.die(`exited (code ${code})`));
    const watchdog = options.limits.watchdogMs;
    const tick = Math.max(10, Math.floor(watchdog / 4));
    let lastTick = Date.now();
    this.heartbeat = setInterval(() => {
      const now = Date.now();
      // A late tick means the host itself was busy: pongs may be waiting in its queue, so the worker
      // is not blamed for it and gets a full period again.
      if (now - lastTick > 2 * tick) this.lastPong = now;
      lastTick = now;
      if (now - this.lastPong > watchdog) {
        log.error({ watchdog_ms: watchdog }, 'plugin stopped responding; terminating its worker');
        this.kill(`stopped responding: its event loop was blocked for more than ${watchdog} ms`);
        return;
      }
      this.post({ t: 'ping', seq: this.seq++ });
    }, tick);
    this.heartbeat.unref();
    this.onDeath = (why) => readyReject(this.unavailable(why));
  }

  /** Fails a start still in progress when the worker dies. */
  private readonly onDeath: (why: string) => void;

  call(call: HostCall): Promise<CallResult> {
    if (this.dead) return Promise.reject(this.unavailable(this.dead));
    const id = this.nextId++;
    return new Promise<CallResult>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.post({ t: 'call', id, call });
    });
  }

  notify(message: ToWorker): void {
    if (!this.dead) this.post(message);
  }

  /** Ends the worker; the calls it held fail with `why`. */
  kill(why: string): void {
    this.die(why);
    void this.worker.terminate();
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
    return new UnavailableError(`${this.label} ${why}; it is restarted on the next request`);
  }

  private post(message: ToWorker): void {
    this.worker.postMessage(message);
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
    this.options.logger[name](fields, typeof msg === 'string' ? msg : '');
  }

  /** Serves one storage call from this mount's view, checking the shape of what the worker sent. */
  private async serveStorage(id: number, request: StorageOp): Promise<void> {
    const s = this.options.storage;
    const isKey = (k: unknown): k is string => typeof k === 'string';
    const isValue = (v: unknown): v is Uint8Array => v instanceof Uint8Array;
    let reply: ToWorker;
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
          if (!Array.isArray(request.ops) || !request.ops.every((o) => isKey(o.key) && (o.type === 'delete' || (o.type === 'put' && isValue(o.value))))) {
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

export class IsolatedBackend implements Backend {
  readonly description: string;
  private readonly patterns: readonly { pattern: PathPattern; help: PathHelp }[];
  private runner: Runner;
  private starting: Promise<Runner> | undefined;
  private closed = false;
  private readonly label: string;

  periodic?(): Promise<void>;
  renew?(req: LogicalRequest, auth: AuthResult): Promise<AuthResult>;
  invalidate?(key: string): void;

  private constructor(
    private readonly options: IsolatedBackendOptions,
    first: Runner,
    info: ReadyInfo,
    label: string,
  ) {
    this.runner = first;
    this.label = label;
    this.description = info.description;
    this.patterns = info.paths.map((help) => ({ pattern: new PathPattern(help.pattern), help }));
    if (info.hooks.periodic) this.periodic = async () => void (await this.call({ method: 'periodic', system: this.options.system() }));
    if (info.hooks.renew) {
      this.renew = async (req, auth) => {
        const result = await this.call({ method: 'renew', request: wireOf(req, this.options.mount()), auth, system: this.options.system() });
        return (result as { auth: AuthResult }).auth;
      };
    }
    if (info.hooks.invalidate) this.invalidate = (key) => this.runner.notify({ t: 'invalidate', key });
  }

  /**
   * Starts the first worker and waits until its backend is built.
   * @throws PluginError when the module is missing, fails its checksum or its checks, or cannot start.
   */
  static async start(options: IsolatedBackendOptions): Promise<IsolatedBackend> {
    const mount = options.mount();
    const label = `plugin "${options.entry.name}" (mount "${mount.table === 'auth' ? 'auth/' : ''}${mount.path}")`;
    const runner = await IsolatedBackend.spawn(options, label);
    let info: ReadyInfo;
    try {
      info = await runner.ready;
    } catch (err) {
      runner.kill('was not needed');
      throw err instanceof PluginError ? err : new PluginError(err instanceof Error ? err.message : String(err));
    }
    return new IsolatedBackend(options, runner, info, label);
  }

  private static async spawn(options: IsolatedBackendOptions, label: string): Promise<Runner> {
    const { entry } = options;
    const verified = await readVerifiedModule(options.directory, entry.command, entry.sha256, entry.name);
    const env: Record<string, string> = {};
    for (const pair of entry.env) {
      const at = pair.indexOf('=');
      env[pair.slice(0, at)] = pair.slice(at + 1);
    }
    const start: WorkerStart = {
      entryUrl: pathToFileURL(verified.file).href,
      source: verified.source.toString('utf8'),
      sdkUrl: SDK_URL,
      expected: { name: entry.name, kind: entry.type, version: entry.version },
      mount: structuredClone(options.mount()),
      system: options.system(),
      logLevel: options.logger.level,
    };
    return new Runner(start, options, label, entry.args, env);
  }

  async prepare(req: LogicalRequest): Promise<PreparedRequest> {
    const runner = await this.live();
    const result = (await this.callOn(runner, { method: 'prepare', request: wireOf(req, this.options.mount()), system: this.options.system() })) as Extract<CallResult, { method: 'prepare' }>;
    req.operation = result.operation;
    return {
      operation: result.operation,
      pattern: result.pattern,
      sudo: result.sudo,
      execute: async () => {
        const done = (await this.callOn(runner, { method: 'execute', handle: result.handle })) as { response: LogicalResponse | null };
        return done.response;
      },
    };
  }

  isUnauthenticated(path: string): boolean {
    return this.match(path)?.unauthenticated ?? false;
  }

  help(path: string): { help: string; openapi: Record<string, unknown> } {
    const found = this.match(path);
    if (!found) throw new NotFoundError('unsupported path');
    return { help: renderHelp(found), openapi: { paths: { [found.openApiPath]: found } } };
  }

  describePaths(): readonly PathHelp[] {
    return this.patterns.map((p) => p.help);
  }

  /** Lets the plugin clean up, then ends its worker for good. */
  async cleanup(): Promise<void> {
    this.closed = true;
    const runner = this.runner;
    if (!runner.dead) {
      try {
        await this.callOn(runner, { method: 'cleanup' });
      } catch (err) {
        this.options.logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'plugin cleanup failed');
      }
    }
    runner.kill('was stopped (unmount, reload or seal)');
  }

  /** Ends the current worker as a crash would (an operator's or a test's lever); the next request starts a new one. */
  terminateWorker(): void {
    this.runner.kill('was terminated');
  }

  private match(path: string): PathHelp | undefined {
    let best: { pattern: PathPattern; help: PathHelp } | undefined;
    for (const candidate of this.patterns) {
      if (candidate.pattern.match(path) && (!best || candidate.pattern.specificity > best.pattern.specificity)) best = candidate;
    }
    return best?.help;
  }

  private async call(call: HostCall): Promise<CallResult> {
    return this.callOn(await this.live(), call);
  }

  private callOn(runner: Runner, call: HostCall): Promise<CallResult> {
    return runner.call(call);
  }

  /** The serving worker; a dead one is replaced (its module checked again) before use. */
  private async live(): Promise<Runner> {
    if (this.closed) throw new UnavailableError(`${this.label} is stopped`);
    if (!this.runner.dead) return this.runner;
    this.starting ??= (async () => {
      try {
        const runner = await IsolatedBackend.spawn(this.options, this.label);
        await runner.ready;
        this.runner = runner;
        this.options.logger.info('plugin worker restarted');
        return runner;
      } catch (err) {
        const why = err instanceof Error ? err.message : String(err);
        this.options.logger.error({ err: why }, 'plugin worker could not be restarted');
        throw new UnavailableError(`${this.label} cannot be restarted: ${why}`);
      } finally {
        this.starting = undefined;
      }
    })();
    return this.starting;
  }
}

/**
 * The request as the plugin sees it: no client token, and only the headers the mount lets
 * through (`passthrough_request_headers`), as Vault treats its external plugins.
 */
function wireOf(req: LogicalRequest, mount: MountEntry): WireRequest {
  const allowed = new Set(mount.config.passthrough_request_headers.map((h) => h.toLowerCase()));
  const headers: Record<string, string | string[] | undefined> = {};
  for (const [name, value] of Object.entries(req.headers)) if (allowed.has(name.toLowerCase())) headers[name] = value;
  return {
    id: req.id,
    operation: req.operation,
    path: req.path,
    data: { ...req.data },
    mount: { ...req.mount },
    ...(req.auth ? { auth: { ...req.auth } } : {}),
    headers,
    connection: { remoteAddress: req.connection.remoteAddress },
    ...(req.wrapTtl !== undefined ? { wrapTtl: req.wrapTtl } : {}),
  };
}
