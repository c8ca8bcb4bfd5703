/**
 * Stage 0, rate-limit quotas (docs/quotas.md): before anything else runs for it — authentication
 * included, so a flood of bad tokens costs one map lookup each — a request takes one from the
 * bucket of the quota rule that applies to it and its client address, and is answered 429 when
 * the bucket is empty, as Vault's quota wrapper does. With `enable_rate_limit_response_headers`
 * every answer under a rule carries X-Ratelimit-Limit, -Remaining and -Reset, and a refusal
 * Retry-After; with `enable_rate_limit_audit_logging` a refusal is audited (request and error).
 * With no rule at all the stage answers at once: one check of a loaded value.
 */
import type { Logger } from 'pino';
import type { AuditBroker } from '../audit/broker.js';
import { errorMessage } from '../errors.js';
import { Quotas, type LiveRule, type LoadedQuotas } from '../quotas/quotas.js';
import type { Take } from '../quotas/client-buckets.js';
import type { Unsealed } from '../unsealed.js';
import type { HostRequest, HostResponse, SealState } from './types.js';

/** Where refusals are counted, one series per rule (docs/metrics.md). */
export interface QuotaMetrics {
  quotaRefused(name: string): void;
}

export interface QuotaStageDeps {
  readonly quotas: Pick<Quotas, 'current'>;
  readonly barrier: SealState;
  readonly unsealed: Pick<Unsealed, 'mounts' | 'loaded'>;
  readonly audit: Pick<AuditBroker, 'hasDevices' | 'logRequest' | 'logResponse'>;
  readonly metrics?: QuotaMetrics;
  readonly logger: Logger;
  readonly now: () => number;
}

export class QuotaStage {
  constructor(private readonly deps: QuotaStageDeps) {}

  /** Runs `run` unless the request's quota refuses it; adds the rate-limit headers when they are on. */
  guard(http: HostRequest, run: (request: HostRequest) => Promise<HostResponse>): Promise<HostResponse> {
    if (this.deps.barrier.sealed) return run(http);
    const loaded = this.deps.quotas.current();
    if (loaded instanceof Promise) {
      // Rules that cannot be read (the storage is down) limit nothing: the request goes on and
      // answers for itself (a 503 if it needs the storage; sys/health and seal-status still answer).
      return loaded.then(
        (ready) => this.apply(ready, http, run),
        (err: unknown) => {
          this.deps.logger.warn({ path: http.path, err: errorMessage(err) }, 'rate-limit quotas could not be read; the request is not limited');
          return run(http);
        },
      );
    }
    return this.apply(loaded, http, run);
  }

  private apply(loaded: LoadedQuotas, http: HostRequest, run: (request: HostRequest) => Promise<HostResponse>): Promise<HostResponse> {
    if (loaded.rules.size === 0 || !Quotas.mayApply(loaded, http.path) || Quotas.exempt(loaded, http.path)) return run(http);
    const live = Quotas.applying(loaded, http.path, this.mountOf(http.path));
    if (!live) return run(http);
    const take = live.buckets.take(http.remoteAddress, this.deps.now());
    const headers = loaded.config.enableRateLimitResponseHeaders ? rateLimitHeaders(take) : undefined;
    if (!take.allowed) return this.refuse(loaded, live, http, headers);
    if (!headers) return run(http);
    return run(http).then((response) => ({ ...response, headers: { ...response.headers, ...headers } }));
  }

  /** The mount a path is under: 'sys/' for the sys backend, undefined when nothing is mounted there. */
  private mountOf(path: string): string | undefined {
    if (path === 'sys' || path.startsWith('sys/')) return 'sys/';
    if (!this.deps.unsealed.loaded) return undefined;
    return this.deps.unsealed.mounts.resolve(path)?.mount.routePrefix;
  }

  private async refuse(loaded: LoadedQuotas, live: LiveRule, http: HostRequest, headers: Record<string, string> | undefined): Promise<HostResponse> {
    const message = `request path ${JSON.stringify(http.path)}: rate limit quota exceeded`;
    this.deps.metrics?.quotaRefused(live.rule.name);
    if (loaded.config.enableRateLimitAuditLogging && this.deps.audit.hasDevices()) {
      const request = {
        id: '',
        operation: operationOf(http),
        path: http.path,
        data: isRecord(http.body) ? http.body : null,
        remoteAddress: http.remoteAddress,
        ...(typeof http.headers['x-vault-token'] === 'string' ? { clientToken: http.headers['x-vault-token'] } : {}),
      };
      try {
        await this.deps.audit.logRequest({ request });
        await this.deps.audit.logResponse({ request, error: message });
      } catch (err) {
        // Vault answers the refusal all the same and only logs that the audit failed.
        this.deps.logger.warn({ path: http.path, err: errorMessage(err) }, 'failed to audit a request refused by a rate limit quota');
      }
    }
    return { status: 429, body: { errors: [message] }, ...(headers ? { headers } : {}) };
  }
}

/** Vault's names and values (seconds); Retry-After only on a refusal. */
function rateLimitHeaders(take: Take): Record<string, string> {
  return {
    'X-Ratelimit-Limit': String(take.limit),
    'X-Ratelimit-Remaining': String(take.remaining),
    'X-Ratelimit-Reset': String(take.reset),
    ...(take.retryAfter !== undefined ? { 'Retry-After': String(take.retryAfter) } : {}),
  };
}

function operationOf(http: HostRequest): string {
  if (http.method === 'GET' || http.method === 'HEAD') return http.query.list === 'true' ? 'list' : 'read';
  if (http.method === 'LIST') return 'list';
  if (http.method === 'DELETE') return 'delete';
  return 'update';
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
