/**
 * The HA strategy around the pipeline. On the active node it trusts the client address a standby
 * vouched for only when the forwarding MAC (core/ha/forward.ts) verifies and its nonce is fresh. On a standby it answers what it can from its own caches — after a `sync`,
 * so every change committed before the request arrived has been applied — and forwards to the
 * active node any request that tries to write (the barrier's write guard marks the attempt), any
 * login that would store a service token (it would otherwise run twice, provider calls included),
 * and everything while the cluster is not set up yet — unless the client forbade forwarding
 * (X-Vault-No-Request-Forwarding), and then it answers 503.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { createSecretKey, type KeyObject } from 'node:crypto';
import type { Logger } from 'pino';
import { NotActiveError, PermissionDeniedError } from '../errors.js';
import type { Backend } from '../framework/backend.js';
import { issuedTokenType } from '../auth/token/token-type.js';
import type { RequestStrategy } from '../pipeline/pipeline.js';
import type { RequestAudit } from '../pipeline/audit.js';
import type { HostRequest, HostResponse } from '../pipeline/types.js';
import type { Unsealed } from '../unsealed.js';
import type { Barrier } from '../../storage/barrier.js';
import type { SharedStorage } from '../../storage/storage.js';
import { checkForwarded, ForwardNonces, type ForwardSigner } from './forward.js';
import type { HaManager } from './ha-manager.js';
import type { RemoteChanges } from './remote-changes.js';

export interface StandbyDeps {
  readonly ha: HaManager;
  readonly shared: SharedStorage;
  readonly barrier: Barrier;
  readonly unsealed: Unsealed;
  readonly changes: RemoteChanges;
  readonly system: Backend;
  readonly logger: Logger;
}

export class StandbyStrategy implements RequestStrategy {
  /** Set while a standby runs a request itself: a write attempt marks it for forwarding. */
  private readonly attempt = new AsyncLocalStorage<{ wrote: boolean }>();
  private forwardingKey: KeyObject | undefined;
  /** What standbys and the active node sign and check forwarded requests with. */
  readonly signer: ForwardSigner = { key: () => this.key() };
  /** Not cleared on seal: a request accepted before a seal stays refused after the unseal until it ages out. */
  private readonly forwardedNonces = new ForwardNonces();

  constructor(private readonly options: StandbyDeps) {}

  /**
   * Runs a request: locally on the active node (with the vouched client address of a forwarded
   * one), or the standby's way.
   */
  async run(request: HostRequest, local: (request: HostRequest) => Promise<HostResponse>): Promise<HostResponse> {
    const forwarded = this.acceptForwarded(request);
    if (forwarded) request = forwarded;
    if (this.options.ha.state !== 'standby' || this.isNodeLocal(request.path)) return local(request);
    return this.onStandby(request, forwarded !== undefined, local);
  }

  /**
   * A standby's attempt is audited only when it is answered here, so that a request audited by the
   * active node after forwarding is not audited twice (the workers of one server share their
   * devices' files): the request entry waits for the outcome, and an attempt that tried to write
   * leaves no entry. Fail-closed still holds, since both entries are written before the answer, and
   * nothing the attempt did lasts unaudited: the write guard stopped every write before it was made.
   */
  auditTrail(trail: RequestAudit): RequestAudit {
    const attempt = this.attempt.getStore();
    return attempt && trail.recording ? new AttemptTrail(trail, attempt) : trail;
  }

  /** The barrier's write guard and sys step-down: on a standby, marks the request for forwarding and throws. */
  refuseWrites(): void {
    if (this.options.ha.mayWrite) return;
    const attempt = this.attempt.getStore();
    if (attempt) attempt.wrote = true;
    throw new NotActiveError();
  }

  /** The key standbys and the active node authenticate forwarded requests with; undefined while sealed. */
  key(): KeyObject | undefined {
    if (this.options.barrier.sealed) return undefined;
    if (!this.forwardingKey) {
      const bytes = this.options.barrier.deriveKey('ha request forwarding');
      this.forwardingKey = createSecretKey(bytes);
      bytes.fill(0);
    }
    return this.forwardingKey;
  }

  /**
   * A request a standby of this cluster forwarded, as that standby received it (the client's
   * address is the one it vouches for); undefined for a request without forwarding headers, or on
   * a sealed node, which trusts nothing. Forwarding headers that do not verify are refused rather
   * than ignored: only a standby sets them, so a failure is a probe, a replay or a misconfigured
   * cluster, and each should be seen.
   */
  private acceptForwarded(request: HostRequest): HostRequest | undefined {
    const check = checkForwarded(request, this.signer, this.forwardedNonces);
    if (check && 'refused' in check) {
      this.options.logger.warn({ remote_address: request.remoteAddress, reason: check.refused }, 'refused a request whose forwarding headers do not verify');
      throw new PermissionDeniedError('the X-Keywarden-Forwarded-* headers do not verify: only a standby of this cluster sets them, once per request');
    }
    return check?.request;
  }

  /** Sealing: the key goes with the keyring. */
  forgetKey(): void {
    this.forwardingKey = undefined;
  }

  private async onStandby(request: HostRequest, forwarded: boolean, local: (request: HostRequest) => Promise<HostResponse>): Promise<HostResponse> {
    const { shared, unsealed, changes } = this.options;
    const again = () => new NotActiveError('this node is not the active node (the request was forwarded here during a change of leader); retry');
    // Another node forwards to this node's api_addr, which any of its workers may take: a standby
    // worker passes such a request on once, to the active worker beside it; never one a sibling sent.
    const onwards = (): Promise<HostResponse> => {
      if (forwarded && (request.fromSibling || !this.options.ha.leaderIsSibling)) throw again();
      return this.forward(request);
    };
    if (!unsealed.loaded || this.mintsServiceToken(request.path)) return onwards();
    await shared.sync();
    await changes.settled();
    const attempt = { wrote: false };
    let response: HostResponse | undefined;
    try {
      response = await this.attempt.run(attempt, () => local(request));
    } catch (err) {
      if (!attempt.wrote) throw err;
    }
    if (!attempt.wrote) return response!;
    return onwards();
  }

  /** Forwards to the active node, unless the client sent X-Vault-No-Request-Forwarding: then 503, as a request this node cannot run. */
  private forward(request: HostRequest): Promise<HostResponse> {
    if (request.headers['x-vault-no-request-forwarding'] !== undefined) {
      throw new NotActiveError('this node is a standby, and X-Vault-No-Request-Forwarding forbids forwarding the request to the active node');
    }
    return this.options.ha.forward(request);
  }

  /**
   * Whether a request is a login whose token will be a service token (stored, so written on the
   * active node). Logins that mint batch tokens write nothing themselves and are answered by the
   * standby. Decided before the login runs, so without the role's own `token_type`: by the mount's
   * tune, for a role that asks for no type (issuedTokenType). A login whose role asks otherwise
   * still ends where it must: one that turns out to store a token is caught by the write guard and
   * forwarded; one that turns out to be a batch token's is answered by the active node.
   */
  private mintsServiceToken(path: string): boolean {
    const found = this.options.unsealed.mounts.resolve(path);
    if (!found || found.mount.entry.table !== 'auth' || found.mount.entry.builtin) return false;
    if (!found.mount.backend?.isUnauthenticated(found.relative)) return false;
    return issuedTokenType(found.mount.entry.config.token_type, 'default') === 'service';
  }

  /**
   * Paths a node answers about itself, even as a standby that cannot reach the store: seal status,
   * health, leader, and sealing this node.
   */
  private isNodeLocal(path: string): boolean {
    if (path !== 'sys' && !path.startsWith('sys/')) return false;
    const relative = path.slice('sys/'.length);
    return relative === 'seal' || (this.options.system.isAvailableSealed?.(relative) ?? false);
  }
}

/** The audit trail of a standby's attempt (StandbyStrategy.auditTrail). */
class AttemptTrail implements RequestAudit {
  readonly recording = true;
  private requested = false;

  constructor(
    private readonly trail: RequestAudit,
    private readonly attempt: { readonly wrote: boolean },
  ) {}

  get caller(): RequestAudit['caller'] {
    return this.trail.caller;
  }

  set caller(caller: RequestAudit['caller']) {
    this.trail.caller = caller;
  }

  get operation(): RequestAudit['operation'] {
    return this.trail.operation;
  }

  set operation(operation: RequestAudit['operation']) {
    this.trail.operation = operation;
  }

  async request(): Promise<void> {
    this.requested = true;
  }

  async refused(error: unknown): Promise<void> {
    if (!this.attempt.wrote) await this.trail.refused(error);
  }

  async failed(error: unknown): Promise<void> {
    if (this.attempt.wrote) return;
    if (this.requested) await this.trail.request();
    await this.trail.failed(error);
  }

  async succeeded(...args: Parameters<RequestAudit['succeeded']>): Promise<void> {
    if (this.attempt.wrote) return;
    if (this.requested) await this.trail.request();
    await this.trail.succeeded(...args);
  }
}

