/**
 * A mount as it serves: its entry, its storage view and the backend built for it. The mount owns
 * the backend's life: requests hold it while they run (`acquire`), a new one replaces it for the
 * requests that come after, and the one replaced is closed once the requests still inside it have
 * ended. Build, swap, clean up is written here once, for enable, reload, tune, remount and HA sync.
 */
import type { Logger } from 'pino';
import { UnavailableError } from '../errors.js';
import type { Backend } from '../framework/backend.js';
import type { MountRef } from '../framework/request.js';
import type { Storage } from '../../storage/storage.js';
import { routePrefixOf, type MountEntry } from './mount-entry.js';

/** The plugin version a backend runs, and its module's SHA-256 (empty for a built-in). */
export interface RunningPlugin {
  readonly version: string;
  readonly sha256: string;
}

/** A backend built for a mount, with what was made for it. */
export interface BuiltBackend {
  readonly backend: Backend;
  /** Undefined for the host's own backends (token, identity, cubbyhole). */
  readonly running: RunningPlugin | undefined;
  /** The backend's logger (sys/loggers sets its level); undefined for the host's own backends. */
  readonly logger: Logger | undefined;
  /** Lets the backend clean up and releases what was made for it. Never throws. */
  close(): Promise<void>;
}

/** The requests running on one backend; `idle()` resolves once none is left. */
class InFlight {
  count = 0;
  private readonly waiters: (() => void)[] = [];

  idle(): Promise<void> {
    if (this.count === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  end(): void {
    this.count--;
    if (this.count === 0) for (const resolve of this.waiters.splice(0)) resolve();
  }
}

/** One request's hold on a backend (LiveMount.acquire); a second release does nothing. */
class Hold {
  private held = true;

  constructor(
    readonly backend: Backend,
    private readonly inflight: InFlight,
  ) {}

  readonly release = (): void => {
    if (!this.held) return;
    this.held = false;
    this.inflight.end();
  };
}

export class LiveMount {
  private current: MountEntry;
  private prefix: string;
  private reference: MountRef;
  private built: BuiltBackend | undefined;
  /** Requests on the current backend; a replacement starts a new count, so the old backend drains on its own. */
  private inflight = new InFlight();
  /** Why the backend could not be built; requests to the mount fail with it. */
  failure: string | undefined;
  /** A level set for this mount's logger alone (sys/loggers/:name); kept across rebuilds. */
  logLevel: string | undefined;

  constructor(
    entry: MountEntry,
    readonly storage: Storage,
  ) {
    this.current = entry;
    this.prefix = routePrefixOf(entry);
    this.reference = refOf(entry, this.prefix);
  }

  /** The entry the mount serves; a tune replaces it (an entry itself never changes). */
  get entry(): MountEntry {
    return this.current;
  }

  set entry(entry: MountEntry) {
    this.current = entry;
    this.prefix = routePrefixOf(entry);
    this.reference = refOf(entry, this.prefix);
  }

  get routePrefix(): string {
    return this.prefix;
  }

  /** The mount as a backend's request names it: made once per entry, since every request reads it. */
  get ref(): MountRef {
    return this.reference;
  }

  get backend(): Backend | undefined {
    return this.built?.backend;
  }

  get running(): RunningPlugin | undefined {
    return this.built?.running;
  }

  get logger(): Logger | undefined {
    return this.built?.logger;
  }

  /** Marks a request as running on the current backend; call `release` once when it ends. */
  acquire(): { backend: Backend; release: () => void } {
    const backend = this.built?.backend;
    if (!backend) throw new UnavailableError(`mount "${this.prefix}" is unavailable: ${this.failure ?? 'not loaded'}`);
    this.inflight.count++;
    return new Hold(backend, this.inflight);
  }

  /** Resolves when no request holds the backend that was current when this was called. */
  waitIdle(): Promise<void> {
    return this.inflight.idle();
  }

  /**
   * Puts `next` in place: requests from now on get it. Resolves once the requests still holding
   * the previous backend have ended and it is closed, so a busy mount cannot hold a reload back
   * forever and nothing a request still uses is cleaned up under it.
   */
  async replace(next: BuiltBackend): Promise<void> {
    const previous = this.built;
    const draining = this.inflight;
    this.inflight = new InFlight();
    this.built = next;
    this.failure = undefined;
    await draining.idle();
    await previous?.close();
  }

  /** Takes the backend out of service: new requests fail, and it is closed once the last one ends. */
  async stop(): Promise<void> {
    const previous = this.built;
    this.built = undefined;
    await this.inflight.idle();
    await previous?.close();
  }

  /** The backend could not be built: requests fail with `why` until one is. */
  fail(why: string): void {
    this.failure = why;
  }
}

function refOf(entry: MountEntry, path: string): MountRef {
  return Object.freeze({ path, type: entry.type, accessor: entry.accessor, uuid: entry.uuid });
}
