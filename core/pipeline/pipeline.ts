/**
 * The request pipeline: every request the HTTP layer hands over passes these stages, in this
 * order, each in its own file of this folder. Read this function top to bottom to follow a
 * request; docs/architecture.md describes each stage.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { httpStatusOf, publicMessageOf } from '../errors.js';
import type { Backend } from '../framework/backend.js';
import type { LogicalRequest, LogicalResponse, RequestAuth } from '../framework/request.js';
import type { AuditBroker } from '../audit/broker.js';
import type { IdentityStore } from '../auth/identity/identity-store.js';
import type { ResolvedToken, TokenStore } from '../auth/token-store.js';
import type { TokenAcls } from '../auth/token-acls.js';
import type { MountTable } from '../mounts/mount-table.js';
import type { Barrier } from '../../storage/barrier.js';
import { StorageView } from '../../storage/view.js';
import { readRequest } from './read.js';
import { checkHeaders } from './headers.js';
import { RouteStage } from './route.js';
import { AuthenticateStage } from './authenticate.js';
import { AuthorizeStage, type TokenUse } from './authorize.js';
import { AuditStage } from './audit.js';
import { LoginStage } from './login.js';
import { shape } from './shape.js';
import { WrapStage } from './wrap.js';
import { Admission } from './admission.js';
import type { ResponseWrapper } from '../wrapping/wrapper.js';
import type { StandbyStrategy } from './standby.js';
import type { InFlightRequests } from './in-flight.js';
import { MeasureStage, type Observed } from './measure.js';
import type { Metrics } from '../metrics/metrics.js';
import type { HostRequest, HostResponse, ReadRequest, Route } from './types.js';

export interface PipelineServices {
  readonly system: Backend;
  readonly barrier: Barrier;
  readonly tokens: TokenStore;
  readonly acls: TokenAcls;
  readonly wrapper: ResponseWrapper;
  readonly identity: IdentityStore;
  readonly audit: AuditBroker;
  mounts(): MountTable | undefined;
  readonly logger: Logger;
  /** HA only. */
  readonly standby?: StandbyStrategy;
  /** The requests being answered (sys/in-flight-req). */
  readonly inFlight: InFlightRequests;
  /** Absent when metrics are not collected. */
  readonly metrics?: Metrics;
}

const NO_USE: TokenUse = { finish: async () => {} };

export class Pipeline {
  private readonly routes: RouteStage;
  private readonly authentication: AuthenticateStage;
  private readonly authorization: AuthorizeStage;
  private readonly audit: AuditStage;
  private readonly login: LoginStage;
  private readonly wrapping: WrapStage;
  private readonly standby: StandbyStrategy | undefined;
  private readonly admission = new Admission();
  private readonly system: Backend;
  private readonly inFlight: InFlightRequests;
  private readonly measure: MeasureStage | undefined;
  private readonly logger: Logger;
  /** The sys backend's storage: the barrier under `sys/`. */
  private readonly systemStorage: StorageView;

  constructor(services: PipelineServices) {
    this.routes = new RouteStage(services.system, services.barrier, services.mounts);
    this.authentication = new AuthenticateStage(services.tokens, services.barrier);
    this.authorization = new AuthorizeStage(services.tokens, services.acls);
    this.audit = new AuditStage(services.audit, services.barrier);
    this.login = new LoginStage(services.tokens, services.identity, services.mounts);
    this.wrapping = new WrapStage(services.wrapper);
    this.standby = services.standby;
    this.system = services.system;
    this.inFlight = services.inFlight;
    this.measure = services.metrics ? new MeasureStage(services.metrics) : undefined;
    this.logger = services.logger;
    this.systemStorage = new StorageView(services.barrier, 'sys/');
  }

  /** Answers one request; never throws: every failure becomes an error response. */
  async handle(http: HostRequest): Promise<HostResponse> {
    const id = randomUUID();
    const started = performance.now();
    const admitted = this.admission.enter();
    if (admitted) await admitted;
    const observed: Observed = { route: undefined, operation: 'none' };
    this.inFlight.add(id, http);
    let response: HostResponse;
    try {
      response = this.standby
        ? await this.standby.run(http, (request) => this.run(id, request, observed))
        : await this.run(id, http, observed);
    } catch (err) {
      const status = httpStatusOf(err);
      if (status >= 500) {
        this.logger.error({ request_id: id, path: http.path, err: err instanceof Error ? err.message : String(err) }, 'request failed');
      }
      response = { status, body: { errors: [publicMessageOf(err)] } };
    } finally {
      this.inFlight.delete(id);
      this.admission.leave();
    }
    this.measure?.record(observed, response.status, started);
    return response;
  }

  /** Runs `work` from inside a request while no other request runs (see Admission). */
  exclusive<T>(work: () => Promise<T>): Promise<T> {
    return this.admission.exclusive(work);
  }

  /** Whether the body of a POST/PUT to `path` is to be handed over unread (only sys paths take one). */
  takesBinaryBody(path: string): boolean {
    return path.startsWith('sys/') && (this.system.takesBinaryBody?.(path.slice('sys/'.length)) ?? false);
  }

  private async run(id: string, http: HostRequest, observed: Observed): Promise<HostResponse> {
    const request = readRequest(id, http);
    observed.operation = request.operation;
    checkHeaders(request);
    const route = this.routes.route(request.path, http.unauthenticatedMetrics === true);
    observed.route = route;
    try {
      const audit = this.audit.begin(request, route);
      const caller = await this.authentication.authenticate(request, route, audit);
      if (request.wantsHelp) return { status: 200, body: route.backend.help(route.relative) };

      const auth = caller ? requestAuth(caller) : undefined;
      const prepared = await route.backend.prepare(this.logical(request, route, auth));
      observed.operation = prepared.operation;
      audit.operation = prepared.operation;
      const use = route.unauthenticated ? NO_USE : await this.authorization.authorize(request, caller!, auth!, prepared, audit);
      await audit.request();

      let response: LogicalResponse | null;
      try {
        response = await prepared.execute();
        response = await this.login.mint(route, request.path, response);
      } catch (err) {
        await audit.failed(err);
        throw err;
      } finally {
        await use.finish();
      }
      await audit.succeeded(response);
      return await this.wrapping.wrap(request, shape(id, request.path, prepared.operation, response), response);
    } finally {
      route.release();
    }
  }

  /** The request as a backend sees it: relative path, its mount, its storage view. */
  private logical(request: ReadRequest, route: Route, auth: RequestAuth | undefined): LogicalRequest {
    const live = route.live;
    return {
      id: request.id,
      operation: request.operation,
      path: route.relative,
      data: request.data,
      storage: live ? live.storage : this.systemStorage,
      mount: live
        ? { path: live.routePrefix, type: live.entry.type, accessor: live.entry.accessor, uuid: live.entry.uuid }
        : { path: 'sys/', type: 'system', accessor: 'system', uuid: 'system' },
      ...(request.clientToken !== undefined ? { clientToken: request.clientToken } : {}),
      ...(auth ? { auth } : {}),
      headers: request.http.headers,
      connection: { remoteAddress: request.http.remoteAddress },
      ...(request.wrapTtl !== undefined ? { wrapTtl: request.wrapTtl } : {}),
      ...(request.http.bodyStream ? { bodyStream: request.http.bodyStream } : {}),
    };
  }
}

/** Who is calling, as backends see it; `sudo` is set by authorization. */
function requestAuth(caller: ResolvedToken): RequestAuth {
  const entry = caller.entry;
  return {
    accessor: entry.accessor,
    policies: entry.policies,
    displayName: entry.displayName,
    metadata: entry.meta ?? {},
    root: entry.policies.includes('root'),
    entityId: entry.entityId,
    tokenType: entry.type,
    sudo: false,
  };
}
