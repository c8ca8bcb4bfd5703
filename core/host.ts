/**
 * The host: owns storage, the barrier, the seal, the mount tables and the token store, and takes
 * every logical request through the pipeline of DESIGN.md §3 — operation, sealed check, routing,
 * token, path match and existence check, authorization, handler, response shaping.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { Barrier } from '../storage/barrier.js';
import type { PhysicalStorage } from '../storage/storage.js';
import { TOKENS } from './di/tokens.js';
import { createRootContainer, registerValue, type DependencyContainer } from './di/container.js';
import {
  BadRequestError,
  NotFoundError,
  PermissionDeniedError,
  SealedError,
  UnsupportedMediaTypeError,
  UnsupportedOperationError,
  httpStatusOf,
  publicMessageOf,
} from './errors.js';
import type { Backend } from './framework/backend.js';
import { parseBool, CoercionError } from './framework/fields.js';
import type { LogicalRequest, LogicalResponse, Operation, RequestAuth } from './framework/request.js';
import { MountTable, type LiveMount } from './mounts/mount-table.js';
import { PluginRegistry } from './plugins/registry.js';
import { SealManager } from './seal/seal-manager.js';
import { TokenStore } from './auth/token-store.js';
import { authorize } from './auth/authorizer.js';
import { createSystemBackend } from './system/backend.js';
import type { ClusterInfo, SystemServices } from './system/services.js';
import { systemClock, type Clock } from './clock.js';
import { StorageView } from '../storage/view.js';

export const VERSION = '0.1.0';

/** A request as the HTTP layer hands it over. */
export interface HostRequest {
  readonly method: string;
  /** The path after `/v1/`, without the query. */
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  /** Parsed body (JSON or form), or undefined for none. */
  readonly body: unknown;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly remoteAddress: string;
}

export interface HostResponse {
  readonly status: number;
  /** JSON-serializable; undefined means no body. */
  readonly body?: unknown;
}

export interface HostOptions {
  readonly physical: PhysicalStorage;
  readonly registry: PluginRegistry;
  readonly logger: Logger;
  readonly clock?: Clock;
  /** System TTL defaults in seconds (768h each unless configured). */
  readonly defaultLeaseTtl?: number;
  readonly maxLeaseTtl?: number;
  /** How often backends' periodic hooks run, in ms; 0 disables the timer. */
  readonly periodicIntervalMs?: number;
}

const DEFAULT_TTL = 768 * 3600;

/** Storage keys under the barrier owned by the host. */
const KEYS = {
  // Cluster name and id, created on first unseal; shown by seal-status and health.
  cluster: 'core/cluster/info',
} as const;

/**
 * Routes whose `data` keys are also copied to the top level of the body: a legacy Vault behaviour
 * clients read (hvac's sys.list_mounted_secrets_engines, node-vault's mounts()).
 */
const TOP_LEVEL_DATA_ROUTES = [/^sys\/mounts(\/|$)/, /^sys\/auth(\/|$)/, /^sys\/key-status$/, /^sys\/rotate$/, /^sys\/policy(\/|$)/, /^sys\/capabilities/, /^sys\/audit/];

export class Host {
  readonly barrier: Barrier;
  readonly seal: SealManager;
  readonly tokens: TokenStore;
  readonly registry: PluginRegistry;
  readonly container: DependencyContainer;
  private mountTable: MountTable | undefined;
  private clusterInfo: ClusterInfo | undefined;
  private readonly system: Backend;
  private readonly logger: Logger;
  private readonly clock: Clock;
  private periodicTimer: NodeJS.Timeout | undefined;
  private periodicRunning = false;

  constructor(private readonly options: HostOptions) {
    this.logger = options.logger;
    this.clock = options.clock ?? systemClock;
    this.registry = options.registry;
    this.barrier = new Barrier(options.physical);
    this.tokens = new TokenStore(this.barrier, this.clock);
    this.container = createRootContainer();
    registerValue(this.container, TOKENS.PhysicalStorage, options.physical);
    registerValue(this.container, TOKENS.Barrier, this.barrier);
    registerValue(this.container, TOKENS.Storage, this.barrier);
    registerValue(this.container, TOKENS.Clock, this.clock);
    registerValue(this.container, TOKENS.Logger, this.logger);
    registerValue(this.container, TOKENS.PluginRegistry, this.registry);

    this.seal = new SealManager(options.physical, this.barrier, {
      afterUnseal: () => this.afterUnseal(),
      beforeSeal: () => this.beforeSeal(),
      createRootToken: () => this.tokens.createRootToken(),
    });
    const services: SystemServices = {
      seal: this.seal,
      barrier: this.barrier,
      mounts: () => this.mountTable,
      registry: this.registry,
      clock: this.clock,
      cluster: () => this.clusterInfo,
      storageType: options.physical.kind,
      version: VERSION,
      defaultLeaseTtl: options.defaultLeaseTtl ?? DEFAULT_TTL,
      maxLeaseTtl: options.maxLeaseTtl ?? DEFAULT_TTL,
    };
    this.system = createSystemBackend(services);

    const interval = options.periodicIntervalMs ?? 60_000;
    if (interval > 0) {
      this.periodicTimer = setInterval(() => void this.runPeriodic(), interval);
      this.periodicTimer.unref();
    }
  }

  /** The live mount table; undefined while sealed. */
  get mounts(): MountTable | undefined {
    return this.mountTable;
  }

  /** Runs every backend's periodic hook once (the timer calls this; tests may too). */
  async runPeriodic(): Promise<void> {
    if (this.periodicRunning || !this.mountTable) return;
    this.periodicRunning = true;
    try {
      await this.mountTable.runPeriodic();
    } finally {
      this.periodicRunning = false;
    }
  }

  private async afterUnseal(): Promise<void> {
    const table = new MountTable({
      root: this.container,
      storage: this.barrier,
      registry: this.registry,
      logger: this.logger,
      clock: this.clock,
      defaults: { defaultLeaseTtl: this.options.defaultLeaseTtl ?? DEFAULT_TTL, maxLeaseTtl: this.options.maxLeaseTtl ?? DEFAULT_TTL },
    });
    // Load first: ensureBuiltin persists the table, which must already hold the stored entries.
    await table.load();
    await table.ensureBuiltin('secret', 'sys/', 'system', 'system endpoints used for control, policy and debugging');
    this.clusterInfo = await this.loadClusterInfo();
    this.mountTable = table;
    this.logger.info({ mounts: table.entries('secret').length + table.entries('auth').length }, 'unsealed');
  }

  private async beforeSeal(): Promise<void> {
    const table = this.mountTable;
    this.mountTable = undefined;
    this.clusterInfo = undefined;
    this.tokens.reset();
    await table?.unload();
    this.logger.info('sealed');
  }

  private async loadClusterInfo(): Promise<ClusterInfo> {
    const raw = await this.barrier.get(KEYS.cluster);
    if (raw) return JSON.parse(Buffer.from(raw).toString('utf8')) as ClusterInfo;
    const id = randomUUID();
    const info: ClusterInfo = { name: `keywarden-cluster-${id.slice(0, 8)}`, id };
    await this.barrier.put(KEYS.cluster, Buffer.from(JSON.stringify(info)));
    return info;
  }

  /** Stops the timer and seals; the physical store is closed by its owner. */
  async shutdown(): Promise<void> {
    if (this.periodicTimer) clearInterval(this.periodicTimer);
    this.periodicTimer = undefined;
    await this.seal.seal();
  }

  /** The whole pipeline; never throws: every failure becomes an error response. */
  async handle(request: HostRequest): Promise<HostResponse> {
    const id = randomUUID();
    try {
      return await this.dispatch(id, request);
    } catch (err) {
      const status = httpStatusOf(err);
      if (status >= 500) {
        this.logger.error({ request_id: id, path: request.path, err: err instanceof Error ? err.message : String(err) }, 'request failed');
      }
      return { status, body: { errors: [publicMessageOf(err)] } };
    }
  }

  private async dispatch(id: string, request: HostRequest): Promise<HostResponse> {
    const operation = operationOf(request);
    let path = request.path;
    if (path.split('/').some((segment) => segment === '..' || segment === '.')) {
      throw new BadRequestError('path cannot contain parent references');
    }
    if (operation === 'list' && !path.endsWith('/')) path += '/';

    const data = requestData(request, operation);
    const wantsHelp = request.query.help !== undefined && safeBool(request.query.help);

    // Route: the sys backend is always there; everything else needs the unsealed mount table.
    let backend: Backend;
    let relative: string;
    let live: LiveMount | undefined;
    let release = () => {};
    if (path === 'sys' || path.startsWith('sys/')) {
      backend = this.system;
      relative = path.slice('sys/'.length);
      if (this.barrier.sealed && !backend.isAvailableSealed?.(relative)) throw new SealedError();
    } else {
      if (this.barrier.sealed) throw new SealedError();
      const found = this.mountTable?.resolve(path);
      if (!found) throw new NotFoundError(`no handler for route ${JSON.stringify(path)}. route entry not found.`);
      live = found.mount;
      relative = found.relative;
      const acquired = live.acquire();
      backend = acquired.backend;
      release = acquired.release;
    }

    try {
      const unauthenticated = backend.isUnauthenticated(relative);
      const auth = await this.authenticate(request, unauthenticated);
      if (wantsHelp) {
        if (!auth && !unauthenticated) throw new PermissionDeniedError();
        return { status: 200, body: backend.help(relative) };
      }
      const mount = live?.entry;
      const logical: LogicalRequest = {
        id,
        operation,
        path: relative,
        data,
        storage: live?.storage ?? new StorageView(this.barrier, 'sys/'),
        mount: mount
          ? { path: live!.routePrefix, type: mount.type, accessor: mount.accessor, uuid: mount.uuid }
          : { path: 'sys/', type: 'system', accessor: 'system', uuid: 'system' },
        clientToken: tokenOf(request),
        auth,
        headers: request.headers,
        connection: { remoteAddress: request.remoteAddress },
      };
      const prepared = await backend.prepare(logical);
      authorize({ path, operation: prepared.operation, sudo: prepared.sudo, auth, unauthenticated });
      const response = await prepared.execute();
      return this.shape(id, path, prepared.operation, response);
    } finally {
      release();
    }
  }

  private async authenticate(request: HostRequest, unauthenticated: boolean): Promise<RequestAuth | undefined> {
    const token = tokenOf(request);
    if (!token || this.barrier.sealed) {
      if (!unauthenticated) throw new PermissionDeniedError();
      return undefined;
    }
    const entry = await this.tokens.lookup(token);
    if (!entry) {
      // A bad token on an unauthenticated path (login, health) is ignored, as in Vault.
      if (!unauthenticated) throw new PermissionDeniedError();
      return undefined;
    }
    return {
      accessor: entry.accessor,
      policies: entry.policies,
      displayName: entry.displayName,
      metadata: entry.meta,
      root: entry.policies.includes('root'),
    };
  }

  private shape(id: string, path: string, operation: Operation, response: LogicalResponse | null): HostResponse {
    if (response?.raw) return { status: response.raw.status, body: response.raw.body };
    if (!response || (!response.data && !response.warnings && !response.auth)) {
      if (operation === 'read' || operation === 'list') return { status: 404, body: { errors: [] } };
      return { status: 204 };
    }
    if (operation === 'list') {
      const keys = response.data?.keys;
      if (!Array.isArray(keys) || keys.length === 0) return { status: 404, body: { errors: [] } };
    }
    const body: Record<string, unknown> = {
      request_id: id,
      lease_id: '',
      renewable: false,
      lease_duration: 0,
      data: response.data ?? null,
      wrap_info: null,
      warnings: response.warnings && response.warnings.length > 0 ? response.warnings : null,
      auth: null,
    };
    if (response.data && TOP_LEVEL_DATA_ROUTES.some((re) => re.test(path))) {
      for (const [key, value] of Object.entries(response.data)) {
        if (!(key in body)) body[key] = value;
      }
    }
    return { status: 200, body };
  }
}

/** Method → operation, as Vault maps them. */
function operationOf(request: HostRequest): Operation {
  switch (request.method) {
    case 'GET':
    case 'HEAD': {
      const list = request.query.list;
      if (list === undefined) return 'read';
      try {
        return parseBool(list) ? 'list' : 'read';
      } catch (err) {
        if (err instanceof CoercionError) throw new BadRequestError(`invalid value for "list": ${err.message}`);
        throw err;
      }
    }
    case 'LIST':
      return 'list';
    case 'POST':
    case 'PUT':
      return 'update';
    case 'DELETE':
      return 'delete';
    case 'PATCH': {
      const type = String(request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
      if (type !== 'application/merge-patch+json') {
        throw new UnsupportedMediaTypeError('PATCH requires Content-Type: application/merge-patch+json');
      }
      return 'patch';
    }
    default:
      throw new UnsupportedOperationError(`unsupported method ${request.method}`);
  }
}

function safeBool(text: string): boolean {
  try {
    return parseBool(text);
  } catch {
    return false;
  }
}

/** Query parameters are the data of reads, lists and deletes; bodies are the data of writes. */
function requestData(request: HostRequest, operation: Operation): Record<string, unknown> {
  if (operation === 'read' || operation === 'list' || (operation === 'delete' && request.body === undefined)) {
    const { list: _list, help: _help, ...rest } = request.query;
    return { ...rest };
  }
  if (request.body === undefined || request.body === null) return {};
  if (typeof request.body !== 'object' || Array.isArray(request.body)) {
    throw new BadRequestError('the request body must be a JSON object');
  }
  return request.body as Record<string, unknown>;
}

/** `X-Vault-Token`, then `X-Service-Token`, then `Authorization: Bearer`. */
function tokenOf(request: HostRequest): string | undefined {
  const first = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
  const direct = first(request.headers['x-vault-token']) ?? first(request.headers['x-service-token']);
  if (direct) return direct.trim();
  const authorization = request.headers.authorization;
  for (const value of Array.isArray(authorization) ? authorization : authorization ? [authorization] : []) {
    if (value.startsWith('Bearer ')) return value.slice('Bearer '.length).trim();
  }
  return undefined;
}
