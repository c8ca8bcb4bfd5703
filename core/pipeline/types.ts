/**
 * What the HTTP layer hands the pipeline and gets back, and what the stages pass each other. A
 * request is read once into a `ReadRequest`; routing adds a `Route`; authentication a caller.
 */
import type { LiveMount } from '../mounts/mount-table.js';
import type { Backend } from '../framework/backend.js';
import type { Operation } from '../framework/request.js';

/** Whether the barrier is sealed: what most stages need to know of it. */
export interface SealState {
  readonly sealed: boolean;
}

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
  /**
   * The body's bytes as received, kept only for a request with a forwarding MAC (which covers
   * them); undefined for every other request.
   */
  readonly rawBody?: Buffer;
  /**
   * The body, unread, for a path that takes bytes rather than fields (`binaryBody`: snapshot
   * restore); `body` is then undefined.
   */
  readonly bodyStream?: AsyncIterable<Uint8Array>;
  /** The listener serves `sys/metrics` without a token (`telemetry { unauthenticated_metrics_access }`). */
  readonly unauthenticatedMetrics?: boolean;
  /** The listener's `max_request_duration` in milliseconds (deadline.ts); its default when absent. */
  readonly maxDurationMs?: number;
  /** Came through a worker's forwarding socket, from another worker of this server (core/cluster/). */
  readonly fromSibling?: boolean;
}

export interface HostResponse {
  readonly status: number;
  /** JSON-serializable, or the text itself when `contentType` is set; undefined means no body. */
  readonly body?: unknown;
  /** Bytes streamed as `application/octet-stream` instead of a JSON body (snapshots). */
  readonly binary?: AsyncIterable<Uint8Array>;
  /** A body that is not JSON (sys/metrics in the Prometheus format): sent as it is, with this type. */
  readonly contentType?: string;
  /** Headers to send with the answer (a rate-limit quota's X-Ratelimit-* and Retry-After). */
  readonly headers?: Readonly<Record<string, string>>;
}

/** The request after the read stage: its operation, checked path, data and client token. */
export interface ReadRequest {
  readonly id: string;
  readonly http: HostRequest;
  readonly operation: Operation;
  /** The full logical path; a list's ends in `/`. */
  readonly path: string;
  readonly data: Record<string, unknown>;
  /** `?help=1`: answer the path's help instead of running it. */
  readonly wantsHelp: boolean;
  readonly clientToken: string | undefined;
  /** X-Vault-Wrap-TTL in seconds: the answer is to be wrapped. */
  readonly wrapTtl: number | undefined;
}

/** Where a request goes: a backend and the path relative to it, held until `release`. */
export interface Route {
  readonly backend: Backend;
  readonly relative: string;
  /** Undefined for the sys backend. */
  readonly live: LiveMount | undefined;
  /** The path needs no token (login, health). */
  readonly unauthenticated: boolean;
  /** Served while sealed (seal status, unseal, health): never audited. */
  readonly availableSealed: boolean;
  release(): void;
}
