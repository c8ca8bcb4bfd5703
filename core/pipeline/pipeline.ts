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
import { backendHeaders } from './backend-headers.js';
import { RouteStage } from './route.js';
import { AuthenticateStage } from './authenticate.js';
import { AuthorizeStage } from './authorize.js';
import { AuditStage } from './audit.js';
import { LoginStage } from './login.js';
import { LockoutStage } from './lockout.js';
import type { UserLockout } from '../auth/lockout/user-lockout.js';
import { shape } from './shape.js';
import { WrapStage, type Wrapped } from './wrap.js';
import { Admission } from './admission.js';
import type { ResponseWrapper } from '../wrapping/wrapper.js';
import type { StandbyStrategy } from './standby.js';
import { RunningRequest, type InFlightRequests } from './in-flight.js';
import { MeasureStage } from './measure.js';
import { BodyAllowanceStage, type BodyAllowance, type RequestHead } from './body-allowance.js';
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
  readonly lockout: UserLockout;
}

const SYSTEM_MOUNT = Object.freeze({ path: 'sys/', type: 'system', accessor: 'system', uuid: 'system' });

export class Pipeline {
  private readonly routes: RouteStage;
  private readonly bodies: BodyAllowanceStage;
  private readonly authentication: AuthenticateStage;
  private readonly authorization: AuthorizeStage;
  private readonly audit: AuditStage;
  private readonly login: LoginStage;
  private readonly lockout: LockoutStage;
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
    this.bodies = new BodyAllowanceStage(this.routes, this.authentication, services.standby !== undefined);
    this.authorization = new AuthorizeStage(services.tokens, services.acls);
    this.audit = new AuditStage(services.audit, services.barrier, services.logger);
    this.login = new LoginStage(services.tokens, services.identity, services.mounts);
    this.lockout = new LockoutStage(services.lockout);
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
    const running = new RunningRequest(randomUUID(), http);
    const admitted = this.admission.enter();
    if (admitted) await admitted;
    this.inFlight.add(running);
    let response: HostResponse;
    try {
      response = this.standby ? await this.standby.run(http, (request) => this.run(running, request)) : await this.run(running, http);
    } catch (err) {
      const status = httpStatusOf(err);
      if (status >= 500) {
        this.logger.error({ request_id: running.id, path: http.path, err: err instanceof Error ? err.message : String(err) }, 'request failed');
      }
      response = { status, body: { errors: [publicMessageOf(err)] } };
    } finally {
      this.inFlight.delete(running);
      this.admission.leave();
    }
    this.measure?.record(running, response.status);
    return response;
  }

  /** Runs `work` from inside a request while no other request runs (see Admission). */
  exclusive<T>(work: () => Promise<T>): Promise<T> {
    return this.admission.exclusive(work);
  }

  /** How much of a request's body the HTTP layer may read, from its head (body-allowance.ts). */
  bodyAllowance(head: RequestHead): BodyAllowance | Promise<BodyAllowance> {
    return this.bodies.allowance(head);
  }

  /** Whether the body of a POST/PUT to `path` is to be handed over unread (only sys paths take one). */
  takesBinaryBody(path: string): boolean {
    return path.startsWith('sys/') && (this.system.takesBinaryBody?.(path.slice('sys/'.length)) ?? false);
  }

  /**
   * The stages, in order. A stage with nothing to do for this request (no audit device, a token
   * and ACL already at hand, no login, no wrapping) answers at once: awaited only when it had to wait.
   */
  private async run(running: RunningRequest, http: HostRequest): Promise<HostResponse> {
    const request = readRequest(running.id, http);
    running.operation = request.operation;
    checkHeaders(request);
    const route = this.routes.route(request.path, http.unauthenticatedMetrics === true);
    running.route = route;
    try {
      const audit = this.audit.begin(request, route);
      let caller = this.authentication.authenticate(request, route, audit);
      if (caller instanceof Promise) caller = await caller;
      if (request.wantsHelp) return { status: 200, body: route.backend.help(route.relative) };
      this.wrapping.check(request, route);

      const auth = caller ? requestAuth(caller) : undefined;
      let prepared = route.backend.prepare(this.logical(request, route, auth));
      if (prepared instanceof Promise) prepared = await prepared;
      running.operation = prepared.operation;
      audit.operation = prepared.operation;
      let use = route.unauthenticated ? this.authorization.authorizeSudo(request, caller, auth, prepared) : this.authorization.authorize(request, caller!, auth!, prepared, audit);
      if (use instanceof Promise) use = await use;
      if (audit.recording) await audit.request();

      let response: LogicalResponse | null;
      try {
        const user = prepared.lockoutUser;
        response = user === undefined ? await prepared.execute() : await this.lockout.run(route, prepared, user);
        if (response?.auth) response = await this.login.mint(route, request.path, response);
      } catch (err) {
        if (audit.recording) await audit.failed(err);
        throw err;
      } finally {
        if (use) await use.finish();
      }
      const answer = shape(running.id, request.path, prepared.operation, response);
      if (request.wrapTtl === undefined) {
        if (audit.recording) await audit.succeeded(response);
        return answer;
      }
      // Wrapped before the response is audited, as Vault does: the entry records the wrap_info
      // (its token HMAC'd), which ties this answer to the unwrap that later spends it.
      let wrapped: Wrapped;
      try {
        wrapped = await this.wrapping.wrap(request, route, answer, response);
      } catch (err) {
        if (audit.recording) await audit.failed(err);
        throw err;
      }
      if (audit.recording) await audit.succeeded(wrapped.info ? { warnings: response?.warnings ?? [] } : response, wrapped.info);
      return wrapped.answer;
    } finally {
      route.release();
    }
  }

  /** The request as a backend sees it: relative path, its mount, its storage view (every field present, so every request has one shape). */
  private logical(request: ReadRequest, route: Route, auth: RequestAuth | undefined): LogicalRequest {
    const live = route.live;
    return {
      id: request.id,
      operation: request.operation,
      path: route.relative,
      data: request.data,
      storage: live ? live.storage : this.systemStorage,
      mount: live ? live.ref : SYSTEM_MOUNT,
      clientToken: request.clientToken,
      auth,
      headers: backendHeaders(request.http.headers, live ? live.entry.config.passthrough_request_headers : [], request.clientToken),
      connection: { remoteAddress: request.http.remoteAddress },
      wrapTtl: request.wrapTtl,
      bodyStream: request.http.bodyStream,
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
