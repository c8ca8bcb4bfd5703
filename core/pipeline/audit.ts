/**
 * Stages 7 and 10, audit request and audit response: each request that reaches a mounted path is
 * recorded before it runs and its outcome after, by every enabled device (the broker refuses the
 * request when none can record it). Requests refused before they run — a bad token, a denied
 * policy — are recorded too, request and error, so guessing leaves a trace. Paths served while
 * sealed are not audited (the devices are closed then).
 *
 * One way out of the blocking rule: `DELETE sys/audit/:path`, authorized (the path needs sudo),
 * goes ahead when no device can record it, so a device whose collector is gone for good can be
 * disabled without the device working; the server log says so, with the caller's accessor.
 */
import type { Logger } from 'pino';
import { AuditMemo, AuditUnavailableError, type AuditBroker } from '../audit/broker.js';
import type { AuditInput, AuditWrapInfo } from '../audit/entry.js';
import type { RecordedHeader } from '../audit/request-headers.js';
import type { ResolvedToken } from '../auth/token-store.js';
import { publicMessageOf } from '../errors.js';
import type { LogicalResponse, Operation } from '../framework/request.js';
import type { ReadRequest, Route, SealState } from './types.js';

/** What a request's trail records through: the broker's devices, and the headers it audits. */
export interface AuditRecorder extends Pick<AuditBroker, 'hasDevices' | 'logRequest' | 'logResponse'> {
  readonly headers: Pick<AuditBroker['headers'], 'select'>;
}

/** One request's audit trail; the pipeline tells it who called and what ran as it learns them. */
export interface RequestAudit {
  /** False when nothing is recorded (no device, or a path served while sealed): the pipeline skips the calls. */
  readonly recording: boolean;
  /** The authenticated caller, once known. */
  caller: ResolvedToken | undefined;
  /** The operation after the existence check (create or update), once known. */
  operation: Operation;
  /** Logs the request before it runs. */
  request(): Promise<void>;
  /** The request was refused before it ran: logs the request and the error. */
  refused(error: unknown): Promise<void>;
  /** The request ran and failed: logs the error (never masks the failure itself). */
  failed(error: unknown): Promise<void>;
  /** The request ran: logs the response, or the wrap_info of the wrapped answer the client got instead. */
  succeeded(response: LogicalResponse | null, wrapInfo?: AuditWrapInfo): Promise<void>;
}

const UNAUDITED: RequestAudit = {
  recording: false,
  caller: undefined,
  operation: 'read',
  request: async () => {},
  refused: async () => {},
  failed: async () => {},
  succeeded: async () => {},
};

export class AuditStage {
  constructor(
    private readonly broker: AuditRecorder,
    private readonly barrier: SealState,
    private readonly logger: Logger,
  ) {}

  /** The trail of one routed request; a shared no-op when nothing is audited. */
  begin(request: ReadRequest, route: Route): RequestAudit {
    if (!this.broker.hasDevices() || this.barrier.sealed || route.availableSealed) return UNAUDITED;
    return new Trail(this.broker, request, route, this.logger);
  }
}

class Trail implements RequestAudit {
  readonly recording = true;
  caller: ResolvedToken | undefined;
  operation: Operation;
  /** The audited headers the request carried, picked once for both of its entries. */
  private readonly headers: Record<string, RecordedHeader> | undefined;
  /** The request's data as each device hashed it, for both of its entries. */
  private readonly memo = new AuditMemo();
  /** The request went ahead though no device recorded it (the way out above). */
  private unrecorded = false;

  constructor(
    private readonly broker: AuditRecorder,
    private readonly read: ReadRequest,
    private readonly route: Route,
    private readonly logger: Logger,
  ) {
    this.operation = read.operation;
    this.headers = broker.headers.select(read.http.headers);
  }

  async request(): Promise<void> {
    try {
      await this.broker.logRequest(this.input(), this.memo);
    } catch (err) {
      if (!(err instanceof AuditUnavailableError) || !this.disablesAuditDevice()) throw err;
      this.unrecorded = true;
      this.logger.warn(
        { device: this.route.relative.slice('audit/'.length), accessor: this.caller!.entry.accessor },
        'no audit device could record the request; disabling an audit device anyway',
      );
    }
  }

  /**
   * Called once authorized, so the caller holds sudo on the path (sys/audit/:path requires it);
   * sys is the only backend without a live mount.
   */
  private disablesAuditDevice(): boolean {
    return this.operation === 'delete' && this.caller !== undefined && this.route.live === undefined && /^audit\/./.test(this.route.relative);
  }

  async refused(error: unknown): Promise<void> {
    await this.broker.logRequest(this.input(), this.memo);
    await this.broker.logResponse({ ...this.input(), error: publicMessageOf(error) }, this.memo);
  }

  async failed(error: unknown): Promise<void> {
    await this.broker.logResponse({ ...this.input(), error: publicMessageOf(error) }, this.memo).catch(() => undefined);
  }

  succeeded(response: LogicalResponse | null, wrapInfo?: AuditWrapInfo): Promise<void> {
    const recorded = unwrapped(this.read.path, response) ?? {
      data: response?.data ?? null,
      warnings: response?.warnings ?? null,
      auth: response?.tokenAuth ?? null,
    };
    const logged = this.broker.logResponse({ ...this.input(), response: { ...recorded, ...(wrapInfo ? { wrapInfo } : {}) } }, this.memo);
    // Other devices as broken as the one just disabled must not undo the way out.
    return this.unrecorded ? logged.catch(unlessUnavailable) : logged;
  }

  private input(): AuditInput {
    const { read, route, caller } = this;
    const mount = route.live?.entry;
    const clientToken = read.clientToken;
    return {
      request: {
        id: read.id,
        operation: this.operation,
        path: read.path,
        data: read.data,
        ...(clientToken ? { clientToken } : {}),
        ...(caller ? { clientTokenAccessor: caller.entry.accessor } : {}),
        mountPoint: route.live ? route.live.routePrefix : 'sys/',
        mountType: mount ? mount.type : 'system',
        mountAccessor: mount ? mount.accessor : 'system',
        remoteAddress: read.http.remoteAddress,
        ...(this.headers ? { headers: this.headers } : {}),
      },
      ...(caller
        ? {
            auth: {
              ...(clientToken ? { clientToken } : {}),
              accessor: caller.entry.accessor,
              displayName: caller.entry.displayName,
              policies: caller.entry.policies,
              tokenPolicies: caller.entry.policies,
              metadata: caller.entry.meta ?? {},
              entityId: caller.entry.entityId,
              tokenType: caller.entry.type,
              tokenTtl: caller.entry.ttl,
              tokenIssueTime: new Date(caller.entry.creationTime * 1000).toISOString(),
            },
          }
        : {}),
      nonHmacRequestKeys: mount?.config.audit_non_hmac_request_keys ?? [],
      nonHmacResponseKeys: mount?.config.audit_non_hmac_response_keys ?? [],
    };
  }
}

/**
 * An unwrap answers with the wrapped response as it was (a raw body): its entry records that
 * response's data and auth, as Vault does, so what the wrapping token released is in the log.
 */
function unwrapped(path: string, response: LogicalResponse | null): { data: Record<string, unknown> | null; warnings: string[] | null; auth: Record<string, unknown> | null } | undefined {
  if (path !== 'sys/wrapping/unwrap' || !response?.raw) return undefined;
  const body = response.raw.body as { data?: unknown; warnings?: unknown; auth?: unknown } | undefined;
  const record = (value: unknown) => (value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null);
  return {
    data: record(body?.data),
    warnings: Array.isArray(body?.warnings) ? (body.warnings as string[]) : null,
    auth: record(body?.auth),
  };
}

function unlessUnavailable(err: unknown): void {
  if (!(err instanceof AuditUnavailableError)) throw err;
}
