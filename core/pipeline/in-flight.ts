/**
 * The requests a node is answering right now, for `sys/in-flight-req` and the in-flight gauge:
 * added when the pipeline takes a request, removed when it answers. Only what identifies the
 * request is shown (method, path, client address), never its data or token.
 */
import type { HostRequest } from './types.js';

/** One entry of `sys/in-flight-req`, in Vault's shape. */
export interface InFlightEntry {
  readonly start_time: string;
  readonly client_remote_address: string;
  readonly request_path: string;
  readonly request_method: string;
  readonly client_id: string;
}

interface Running {
  readonly started: number;
  readonly http: HostRequest;
}

export class InFlightRequests {
  private readonly running = new Map<string, Running>();

  add(id: string, http: HostRequest): void {
    this.running.set(id, { started: Date.now(), http });
  }

  delete(id: string): void {
    this.running.delete(id);
  }

  get size(): number {
    return this.running.size;
  }

  /** Every request in flight by request id (Keywarden has no client ids: `client_id` is empty). */
  snapshot(): Record<string, InFlightEntry> {
    const out: Record<string, InFlightEntry> = {};
    for (const [id, { started, http }] of this.running) {
      out[id] = {
        start_time: new Date(started).toISOString(),
        client_remote_address: http.remoteAddress,
        request_path: `/v1/${http.path}`,
        request_method: http.method,
        client_id: '',
      };
    }
    return out;
  }
}
