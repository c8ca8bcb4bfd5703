/**
 * The host's side of an isolated (external) plugin: a `Backend` whose work runs in a process of
 * its own, one per mount (plugin-process.ts), confined as confinement.ts sets out. The process gets
 * the verified module text and its mount's snapshot; its storage calls are served here from that
 * mount's view of the barrier, nothing else.
 *
 * A process that crashes, exits, runs out of memory or stops answering the watchdog's pings (a
 * blocked event loop) is gone alone: the requests it held fail with a 503 naming the plugin and
 * the mount, and the next request starts a new one, after checking the module's SHA-256 again.
 * The host and the other mounts never notice.
 */
import { pathToFileURL } from 'node:url';
import type { Logger } from 'pino';
import { InternalError, NotFoundError, UnavailableError, errorMessage } from '../../errors.js';
import type { Backend, PreparedRequest } from '../../framework/backend.js';
import { renderHelp, type PathHelp } from '../../framework/help.js';
import { PathPattern } from '../../framework/path.js';
import type { AuthResult, LeasedSecret, LogicalRequest, LogicalResponse, RequestTarget, SecretRenewal, SecretRequest } from '../../framework/request.js';
import type { MountEntry } from '../../mounts/mount-entry.js';
import type { Storage } from '../../../storage/storage.js';
import type { ExternalEntry } from '../catalog.js';
import type { PluginConfig } from '../plugin.js';
import { readVerifiedModule } from '../plugin-file.js';
import { PluginError } from '../registry.js';
import { pluginEnvironment, unsupportedRuntime } from './confinement.js';
import { PluginProcess, type IsolationLimits } from './plugin-process.js';
import type { CallResult, HostCall, PluginStart, ReadyInfo, SystemValues, WireRequest, WireTarget } from './protocol.js';
import { fromWireValue, toWireValue } from './wire-values.js';

export { DEFAULT_ISOLATION_LIMITS, RESIDENT_HEADROOM_MB, type IsolationLimits } from './plugin-process.js';

export interface IsolatedBackendOptions {
  readonly entry: ExternalEntry;
  readonly directory: string | undefined;
  /** The live mount entry (read again at each start and request, so tunes apply). */
  readonly mount: () => MountEntry;
  readonly storage: Storage;
  readonly logger: Logger;
  readonly system: () => SystemValues;
  readonly limits: IsolationLimits;
  /** The plugin's block of the configuration file, handed to it as its context's `config`, as in-process. */
  readonly config: PluginConfig;
}

export class IsolatedBackend implements Backend {
  readonly description: string;
  private readonly patterns: readonly { pattern: PathPattern; help: PathHelp }[];
  private running: PluginProcess;
  private starting: Promise<PluginProcess> | undefined;
  private closed = false;
  private readonly label: string;

  periodic?(): Promise<void>;
  renew?(req: LogicalRequest, auth: AuthResult): Promise<AuthResult>;
  renewSecret?(req: SecretRequest, secret: LeasedSecret): Promise<SecretRenewal>;
  revokeSecret?(req: SecretRequest, secret: LeasedSecret): Promise<void>;
  invalidate?(key: string): void;

  private constructor(
    private readonly options: IsolatedBackendOptions,
    first: PluginProcess,
    info: ReadyInfo,
    label: string,
  ) {
    this.running = first;
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
    // A secret's renewal and revocation cross without the storage: the process has its own remote one.
    const secretRequest = (req: SecretRequest) => ({ id: req.id, path: req.path, mount: req.mount });
    if (info.hooks.renewSecret) {
      this.renewSecret = async (req, secret) => {
        const result = await this.call({ method: 'renew-secret', request: secretRequest(req), secret, system: this.options.system() });
        return fromWireValue((result as { renewal: SecretRenewal }).renewal) as SecretRenewal;
      };
    }
    if (info.hooks.revokeSecret) {
      this.revokeSecret = async (req, secret) => void (await this.call({ method: 'revoke-secret', request: secretRequest(req), secret, system: this.options.system() }));
    }
    if (info.hooks.invalidate) this.invalidate = (key) => this.running.notify({ t: 'invalidate', key });
  }

  /**
   * Starts the first process and waits until its backend is built.
   * @throws PluginError when this Node.js cannot confine a plugin, or the module is missing, fails
   *   its checksum or its checks, or cannot start.
   */
  static async start(options: IsolatedBackendOptions): Promise<IsolatedBackend> {
    const mount = options.mount();
    const label = `plugin "${options.entry.name}" (mount "${mount.table === 'auth' ? 'auth/' : ''}${mount.path}")`;
    const running = await IsolatedBackend.spawn(options, label);
    let info: ReadyInfo;
    try {
      info = await running.ready;
    } catch (err) {
      running.kill('was not needed');
      throw err instanceof PluginError ? err : new PluginError(errorMessage(err));
    }
    return new IsolatedBackend(options, running, info, label);
  }

  private static async spawn(options: IsolatedBackendOptions, label: string): Promise<PluginProcess> {
    const unsupported = unsupportedRuntime();
    if (unsupported) throw new PluginError(`${label} cannot run: ${unsupported}`);
    const { entry } = options;
    // Checked at registration too; an entry stored before a name was refused is refused here.
    const env = pluginEnvironment(entry.env);
    const verified = await readVerifiedModule(options.directory, entry.command, entry.sha256, entry.name);
    const start: PluginStart = {
      entryUrl: pathToFileURL(verified.file).href,
      source: verified.source.toString('utf8'),
      expected: { name: entry.name, kind: entry.type, version: entry.version },
      mount: structuredClone(options.mount()),
      system: options.system(),
      logLevel: options.logger.level,
      config: options.config,
    };
    return new PluginProcess(start, { label, logger: options.logger, storage: options.storage, limits: options.limits, args: entry.args, env });
  }

  async prepare(target: RequestTarget): Promise<PreparedRequest> {
    const result = (await this.call({ method: 'prepare', target: wireTargetOf(target), system: this.options.system() }, target.signal)) as Extract<CallResult, { method: 'prepare' }>;
    return this.checkPrepared(target, result.prepared);
  }

  async execute(request: LogicalRequest, prepared: PreparedRequest): Promise<LogicalResponse | null> {
    const call: HostCall = { method: 'execute', request: wireOf(request, this.options.mount()), prepared, system: this.options.system() };
    return fromWireValue(((await this.call(call, request.signal)) as Extract<CallResult, { method: 'execute' }>).response) as LogicalResponse | null;
  }

  /**
   * What the process answered `prepare` with, held to what the host knows of the plugin: a path it
   * declared at start, the operation asked (or `create` for an `update`, the existence check's one
   * change), and the path's own sudo flag. Authorization decides on this answer, so a plugin cannot
   * talk its way past the ACL; `anyToken` is never taken from a process, and `lockoutUser` only
   * for a path that declared itself a login under user lockout.
   */
  private checkPrepared(target: RequestTarget, prepared: PreparedRequest): PreparedRequest {
    const path = this.patterns.find((p) => p.help.pattern === prepared?.pattern);
    const operation = prepared?.operation;
    const fits = operation === target.operation || (operation === 'create' && target.operation === 'update');
    const { input, unknown, invalid, lockoutUser } = prepared ?? {};
    if (
      !path || !fits || input === null || typeof input !== 'object' || !Array.isArray(unknown) || !unknown.every((u) => typeof u === 'string') ||
      (invalid !== undefined && typeof invalid !== 'string') || (lockoutUser !== undefined && typeof lockoutUser !== 'string')
    ) {
      throw new InternalError(`${this.label} answered prepare for ${target.operation} ${JSON.stringify(target.path)} with a request it cannot have prepared`);
    }
    return {
      pattern: path.help.pattern,
      operation,
      sudo: path.help.sudo,
      anyToken: false,
      input,
      unknown,
      ...(invalid !== undefined ? { invalid } : {}),
      ...(lockoutUser && path.help.userLockout ? { lockoutUser } : {}),
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

  /** Lets the plugin clean up, then ends its process for good. */
  async cleanup(): Promise<void> {
    this.closed = true;
    const running = this.running;
    if (!running.dead) {
      try {
        await this.callOn(running, { method: 'cleanup' });
      } catch (err) {
        this.options.logger.warn({ err: errorMessage(err) }, 'plugin cleanup failed');
      }
    }
    running.kill('was stopped (unmount, reload or seal)');
  }

  /** Ends the current process as a crash would (an operator's or a test's lever); the next request starts a new one. */
  terminateProcess(): void {
    this.running.kill('was terminated');
  }

  private match(path: string): PathHelp | undefined {
    let best: { pattern: PathPattern; help: PathHelp } | undefined;
    for (const candidate of this.patterns) {
      if (candidate.pattern.match(path) && (!best || candidate.pattern.specificity > best.pattern.specificity)) best = candidate;
    }
    return best?.help;
  }

  /**
   * A call for a request, whose deadline (`signal`) the process is held to: a process still working
   * on a request once its deadline passed is killed, and the next request starts a new one. It may
   * be stuck in a promise that never settles, which the watchdog cannot see (its event loop still
   * answers pings); its other requests fail with the 503 of a crash.
   */
  private async call(call: HostCall, signal?: AbortSignal): Promise<CallResult> {
    const running = await this.live();
    if (!signal) return this.callOn(running, call);
    signal.throwIfAborted();
    const overdue = (): void => {
      this.options.logger.warn({ plugin: this.options.entry.name }, 'plugin ignored a request deadline; restarting its process');
      running.kill('ignored a request deadline (the listener\'s max_request_duration)');
    };
    signal.addEventListener('abort', overdue, { once: true });
    try {
      return await this.callOn(running, call);
    } finally {
      signal.removeEventListener('abort', overdue);
    }
  }

  private callOn(running: PluginProcess, call: HostCall): Promise<CallResult> {
    return running.call(call);
  }

  /** The operating system's id of the serving process. */
  get pid(): number | undefined {
    return this.running.pid;
  }

  /** The serving process; a dead one is replaced (its module checked again) before use. */
  private async live(): Promise<PluginProcess> {
    if (this.closed) throw new UnavailableError(`${this.label} is stopped`);
    if (!this.running.dead) return this.running;
    this.starting ??= (async () => {
      try {
        const running = await IsolatedBackend.spawn(this.options, this.label);
        await running.ready;
        this.running = running;
        this.options.logger.info('plugin process restarted');
        return running;
      } catch (err) {
        const why = errorMessage(err);
        this.options.logger.error({ err: why }, 'plugin process could not be restarted');
        throw new UnavailableError(`${this.label} cannot be restarted: ${why}`);
      } finally {
        this.starting = undefined;
      }
    })();
    return this.starting;
  }
}

/** The request target as the plugin's `prepare` sees it: no storage (the process has its own remote one) and no client token. */
function wireTargetOf(target: RequestTarget): WireTarget {
  return {
    id: target.id,
    operation: target.operation,
    path: target.path,
    data: toWireValue(target.data) as Record<string, unknown>,
    mount: target.mount,
    ...(target.auth ? { auth: target.auth } : {}),
  };
}

/**
 * The request as the plugin's handler sees it: no client token, and only the headers the mount
 * lets through (`passthrough_request_headers`), as Vault treats its external plugins.
 */
function wireOf(req: LogicalRequest, mount: MountEntry): WireRequest {
  const allowed = new Set(mount.config.passthrough_request_headers.map((h) => h.toLowerCase()));
  const headers: Record<string, string | string[] | undefined> = {};
  for (const [name, value] of Object.entries(req.headers)) if (allowed.has(name.toLowerCase())) headers[name] = value;
  return {
    id: req.id,
    operation: req.operation,
    path: req.path,
    data: toWireValue(req.data) as Record<string, unknown>,
    mount: req.mount,
    ...(req.auth ? { auth: req.auth } : {}),
    headers,
    connection: { remoteAddress: req.connection.remoteAddress },
    ...(req.wrapTtl !== undefined ? { wrapTtl: req.wrapTtl } : {}),
  };
}
