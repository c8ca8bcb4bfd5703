/**
 * The request pipeline: every request the HTTP layer hands over passes these stages, in this
 * order, each in its own file of this folder. Read this function top to bottom to follow a
 * request; docs/architecture.md describes each stage.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { KeywardenError, httpStatusOf, publicMessageOf, errorMessage } from '../errors.js';
import type { Backend } from '../framework/backend.js';
import type { LogicalRequest, LogicalResponse, Operation, RequestCaller, RequestTarget } from '../framework/request.js';
import type { ResolvedToken } from '../auth/token-store.js';
import type { TokenIssuer } from '../auth/token/issue.js';
import type { Unsealed } from '../unsealed.js';
import type { Storage } from '../../storage/storage.js';
import { StorageView } from '../../storage/view.js';
import { readRequest } from './read.js';
import { checkHeaders } from './headers.js';
import { backendHeaders } from './backend-headers.js';
import { RouteStage } from './route.js';
import { AuthenticateStage, type TokenLookup } from './authenticate.js';
import { AuthorizeStage, type AclSource, type TokenUses } from './authorize.js';
import { AuditStage, type AuditRecorder, type RequestAudit } from './audit.js';
import { LoginStage, type AliasResolver } from './login.js';
import { LockoutStage, type LoginGuard } from './lockout.js';
import { LeaseStage, type SecretRegistry } from './lease.js';
import { shape } from './shape.js';
import { WrapStage, type AnswerWrapper, type Wrapped } from './wrap.js';
import { Admission } from './admission.js';
import { RunningRequest, type InFlightRequests } from './in-flight.js';
import { MeasureStage, type RequestMetrics } from './measure.js';
import { DEFAULT_MAX_REQUEST_DURATION_MS, RequestDeadline } from './deadline.js';
import { BodyAllowanceStage, type BodyAllowance, type RequestHead } from './body-allowance.js';
import { QuotaStage, type QuotaStageDeps } from './quota.js';
import type { HostRequest, HostResponse, ReadRequest, Route, SealState } from './types.js';

/**
 * How a request is run around the stages when it is not simply run here: HA's standby strategy
 * (core/ha/standby.ts), which may forward it to the active node instead.
 */
export interface RequestStrategy {
  run(request: HostRequest, local: (request: HostRequest) => Promise<HostResponse>): Promise<HostResponse>;
  /** The audit trail of a request run here; the strategy may hold its entries until it knows the request is answered here. */
  auditTrail?(trail: RequestAudit): RequestAudit;
}

/**
 * What the pipeline is built from: each stage takes the narrow part of the host it uses, so the
 * pipeline can be built over fakes of them (test/core/pipeline/pipeline.test.ts).
 */
export interface PipelineDeps {
  /** The sys backend: always routed, sealed or not. */
  readonly system: Backend;
  /** Whether the barrier is sealed, and the storage the sys backend's view is taken of (under `sys/`). */
  readonly barrier: SealState & Storage;
  readonly tokens: TokenLookup & TokenUses & TokenIssuer;
  readonly acls: AclSource;
  readonly wrapper: AnswerWrapper;
  readonly identity: AliasResolver;
  readonly audit: AuditRecorder;
  readonly unsealed: Pick<Unsealed, 'mounts'>;
  readonly logger: Logger;
  /** HA only. */
  readonly standby?: RequestStrategy;
  /** The requests being answered (sys/in-flight-req). */
  readonly inFlight: InFlightRequests;
  /** Absent when metrics are not collected. */
  readonly metrics?: RequestMetrics;
  /** User lockout of logins (core/auth/lockout/user-lockout.ts). */
  readonly lockout: LoginGuard;
  /** Where the secrets engines' secrets get their leases (core/leases/). */
  readonly leases: SecretRegistry;
  /** Rate-limit quotas (core/quotas/); without them no request is limited. */
  readonly quotas?: Pick<QuotaStageDeps, 'quotas' | 'unsealed' | 'metrics' | 'now'>;
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
  private readonly leasing: LeaseStage;
  private readonly wrapping: WrapStage;
  private readonly standby: RequestStrategy | undefined;
  private readonly admission = new Admission();
  private readonly system: Backend;
  private readonly inFlight: InFlightRequests;
  private readonly measure: MeasureStage | undefined;
  private readonly quota: QuotaStage | undefined;
  private readonly logger: Logger;
  /** The sys backend's storage: the barrier under `sys/`. */
  private readonly systemStorage: StorageView;

  constructor(deps: PipelineDeps) {
    this.routes = new RouteStage(deps.system, deps.barrier, deps.unsealed);
    this.authentication = new AuthenticateStage(deps.tokens, deps.barrier);
    this.bodies = new BodyAllowanceStage(this.routes, this.authentication, deps.standby !== undefined);
    this.authorization = new AuthorizeStage(deps.tokens, deps.acls);
    this.audit = new AuditStage(deps.audit, deps.barrier, deps.logger);
    this.login = new LoginStage(deps.tokens, deps.identity, deps.unsealed);
    this.lockout = new LockoutStage(deps.lockout);
    this.leasing = new LeaseStage(deps.leases);
    this.wrapping = new WrapStage(deps.wrapper);
    this.standby = deps.standby;
    this.system = deps.system;
    this.inFlight = deps.inFlight;
    this.measure = deps.metrics ? new MeasureStage(deps.metrics) : undefined;
    this.quota = deps.quotas ? new QuotaStage({ ...deps.quotas, barrier: deps.barrier, audit: deps.audit, logger: deps.logger }) : undefined;
    this.logger = deps.logger;
    this.systemStorage = new StorageView(deps.barrier, 'sys/');
  }

  /** Answers one request; never throws: every failure becomes an error response. */
  async handle(http: HostRequest): Promise<HostResponse> {
    const running = new RunningRequest(randomUUID(), http);
    const admitted = this.admission.enter();
    if (admitted) await admitted;
    this.inFlight.add(running);
    let response: HostResponse;
    try {
      const local = (request: HostRequest) => (this.quota ? this.quota.guard(request, (admitted) => this.run(running, admitted)) : this.run(running, request));
      response = this.standby ? await this.standby.run(http, local) : await local(http);
    } catch (err) {
      const status = httpStatusOf(err);
      if (status >= 500) {
        this.logger.error({ request_id: running.id, path: http.path, code: err instanceof KeywardenError ? err.code : 'KW_INTERNAL', err: errorMessage(err) }, 'request failed');
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
    // A restore's length is the upload's, which http_read_timeout bounds; stopped part way it would leave half a store.
    const deadline = http.bodyStream ? undefined : new RequestDeadline(http.maxDurationMs ?? DEFAULT_MAX_REQUEST_DURATION_MS);
    try {
      const begun = this.audit.begin(request, route);
      const audit = this.standby?.auditTrail ? this.standby.auditTrail(begun) : begun;
      let caller = this.authentication.authenticate(request, route, audit);
      if (caller instanceof Promise) caller = await caller;
      if (request.wantsHelp) return { status: 200, body: route.backend.help(route.relative) };
      this.wrapping.check(request, route);

      const who = caller ? callerOf(caller) : undefined;
      let prepared = route.backend.prepare(this.target(request, route, who, deadline));
      if (prepared instanceof Promise) prepared = await (deadline ? deadline.race(prepared) : prepared);
      running.operation = prepared.operation;
      audit.operation = prepared.operation;
      let authorized = route.unauthenticated ? this.authorization.authorizeSudo(request, caller, prepared) : this.authorization.authorize(request, caller!, prepared, audit);
      if (authorized instanceof Promise) authorized = await authorized;
      if (audit.recording) await audit.request();

      let response: LogicalResponse | null;
      try {
        const execute = () => {
          const work = route.backend.execute(this.logical(request, route, prepared.operation, who, authorized.sudo, deadline), prepared);
          return deadline ? deadline.race(work) : work;
        };
        const user = prepared.lockoutUser;
        response = user === undefined ? await execute() : await this.lockout.run(route, user, execute);
        if (response?.auth) response = await this.login.mint(route, request.path, response);
        if (response?.secret !== undefined || response?.lease !== undefined) response = await this.leasing.lease(route, request.path, response, caller);
      } catch (err) {
        if (audit.recording) await audit.failed(err);
        throw err;
      } finally {
        if (authorized.use) await authorized.use.finish();
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
      deadline?.clear();
      route.release();
    }
  }

  /** The request as `prepare` sees it: before authorization, the operation as asked. */
  private target(request: ReadRequest, route: Route, who: RequestCaller | undefined, deadline: RequestDeadline | undefined): RequestTarget {
    const live = route.live;
    return {
      id: request.id,
      operation: request.operation,
      path: route.relative,
      data: request.data,
      storage: this.storageOf(route, deadline),
      mount: live ? live.ref : SYSTEM_MOUNT,
      clientToken: request.clientToken,
      auth: who,
      ...(deadline ? { signal: deadline.signal } : {}),
    };
  }

  /**
   * A mount's storage, refusing every call once the request's deadline passed. The sys backend's
   * is not cut off: its handlers change core state in steps that belong together (a mount table
   * and its entries), so one past its deadline finishes its work after the 504 has gone out.
   */
  private storageOf(route: Route, deadline: RequestDeadline | undefined): Storage {
    const live = route.live;
    if (!live) return this.systemStorage;
    return deadline ? deadline.guard(live.storage) : live.storage;
  }

  /**
   * The request as its handler sees it, built once it is authorized and frozen: relative path, its
   * mount, its storage view, the final operation, the caller with its sudo decision (every field
   * present, so every request has one shape).
   */
  private logical(request: ReadRequest, route: Route, operation: Operation, who: RequestCaller | undefined, sudo: boolean, deadline: RequestDeadline | undefined): LogicalRequest {
    const live = route.live;
    return Object.freeze({
      id: request.id,
      operation,
      path: route.relative,
      data: request.data,
      storage: this.storageOf(route, deadline),
      mount: live ? live.ref : SYSTEM_MOUNT,
      clientToken: request.clientToken,
      auth: who ? Object.freeze({ ...who, sudo }) : undefined,
      headers: backendHeaders(request.http.headers, live ? live.entry.config.passthrough_request_headers : [], request.clientToken),
      connection: { remoteAddress: request.http.remoteAddress },
      wrapTtl: request.wrapTtl,
      bodyStream: request.http.bodyStream,
      signal: deadline?.signal,
    });
  }
}

/** Who is calling, as backends see it; authorization adds `sudo`. */
function callerOf(caller: ResolvedToken): RequestCaller {
  const entry = caller.entry;
  return {
    accessor: entry.accessor,
    policies: entry.policies,
    displayName: entry.displayName,
    metadata: entry.meta ?? {},
    root: entry.policies.includes('root'),
    entityId: entry.entityId,
    tokenType: entry.type,
  };
}
