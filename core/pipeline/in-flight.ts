/**
 * The requests a node is answering right now, for `sys/in-flight-req` and the in-flight gauge:
 * added when the pipeline takes a request, removed when it answers. Only what identifies the
 * request is shown (method, path, client address), never its data or token.
 *
 * Each request is one `RunningRequest`, the record the pipeline keeps of it from start to answer
 * (what the measure stage reads at the end, too); the records are linked into a list, so taking
 * one in and out costs no hashing and no allocation beyond the record.
 */
import type { HostRequest, Route } from './types.js';

/** One entry of `sys/in-flight-req`, in Vault's shape. */
export interface InFlightEntry {
  readonly start_time: string;
  readonly client_remote_address: string;
  readonly request_path: string;
  readonly request_method: string;
  readonly client_id: string;
}

/** A request from the moment the pipeline takes it to its answer. */
export class RunningRequest {
  /** performance.now() when the pipeline took it. */
  readonly started = performance.now();
  /** Where it went; undefined until routed (and for a request refused before). */
  route: Route | undefined = undefined;
  /** The final operation (`create` once the existence check ran), or `none` before the read stage. */
  operation = 'none';
  /** Neighbours in the in-flight list, while in it. */
  previous: RunningRequest | undefined = undefined;
  next: RunningRequest | undefined = undefined;

  constructor(
    readonly id: string,
    readonly http: HostRequest,
  ) {}
}

export class InFlightRequests {
  private newest: RunningRequest | undefined;
  private count = 0;
  private taken = 0;

  add(request: RunningRequest): void {
    this.taken++;
    request.next = this.newest;
    if (this.newest) this.newest.previous = request;
    this.newest = request;
    this.count++;
  }

  delete(request: RunningRequest): void {
    if (request.previous) request.previous.next = request.next;
    else if (this.newest === request) this.newest = request.next;
    else return; // not in the list
    if (request.next) request.next.previous = request.previous;
    request.previous = request.next = undefined;
    this.count--;
  }

  get size(): number {
    return this.count;
  }

  /** Every request taken since the process started, answered or not. */
  get total(): number {
    return this.taken;
  }

  /** Every request in flight by request id (Keywarden has no client ids: `client_id` is empty). */
  snapshot(): Record<string, InFlightEntry> {
    const out: Record<string, InFlightEntry> = {};
    for (let request = this.newest; request; request = request.next) {
      const { http } = request;
      out[request.id] = {
        start_time: new Date(performance.timeOrigin + request.started).toISOString(),
        client_remote_address: http.remoteAddress,
        request_path: `/v1/${http.path}`,
        request_method: http.method,
        client_id: '',
      };
    }
    return out;
  }
}
