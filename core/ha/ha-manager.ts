/**
 * High availability over a shared store: which node is active, the election loop, and what a
 * standby does with a request it must not run itself (forward it to the active node).
 *
 * States: `sealed` (not taking part: a sealed node serves nothing), `standby`, `active`. A node
 * joins as a standby when it unseals, takes part in the election every `POLL_MS`, and becomes
 * active when it takes the store's HA lock; it goes back to standby if it loses the lock.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { HaLock, LeaderInfo, Leadership, SharedStorage } from '../../storage/storage.js';
import { forwardRequest, type ForwardSigner } from './forward.js';
import type { HostRequest, HostResponse } from '../pipeline/types.js';
import { NotActiveError, UnavailableError, errorMessage } from '../errors.js';

export type HaState = 'sealed' | 'standby' | 'active';

/** How often a standby tries to take the lock (and refreshes who holds it). */
const POLL_MS = 500;
/**
 * After a step-down the node does not bid for ten seconds, as Vault's does
 * (https://developer.hashicorp.com/vault/api-docs/system/step-down), so that another node takes
 * the role even when its bids are slow; if none does, this node takes it back. The pause ends
 * early once another node holds the role: two nodes stepped down one after the other would
 * otherwise both sit out, and the second would race the first to take the role back.
 */
export const STEP_DOWN_PAUSE_MS = 10_000;

export interface HaDeps {
  /** The node won the election: finish loading with writes allowed, start periodic work. */
  promote(): Promise<void>;
  /** The node lost the lock (or gave it up). */
  demote(reason: string): void;
}

export interface HaOptions {
  readonly storage: SharedStorage;
  readonly lock: HaLock;
  /** Where clients (and the other nodes) reach this node: `https://10.0.0.5:8200`. */
  readonly apiAddr: string;
  readonly logger: Logger;
  readonly nodeId?: string;
}

export class HaManager {
  readonly nodeId: string;
  readonly apiAddr: string;
  private current: HaState = 'sealed';
  private leadership: Leadership | undefined;
  private activeSince: Date | undefined;
  private known: LeaderInfo | undefined;
  /** Why the last attempt to reach the store failed; cleared by the next success. */
  private storeProblem: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  /** Whether this node is in the middle of taking the active role (writes are allowed then). */
  private promoting = false;
  /** After a step-down, this node does not try to take the role again before this time (ms). */
  private pauseUntil = 0;
  private deps: HaDeps | undefined;
  private signer: ForwardSigner | undefined;
  private readonly lock: HaLock;
  private readonly logger: Logger;
  /** The active node last seen, to count changes of leader. */
  private lastLeaderId: string | undefined;
  /** Since start (read by sys/metrics). */
  readonly counts = { leaderChanges: 0, forwarded: 0, forwardFailures: 0 };

  constructor(options: HaOptions) {
    this.nodeId = options.nodeId ?? randomUUID();
    this.apiAddr = options.apiAddr;
    this.lock = options.lock;
    this.logger = options.logger;
    this.lock.onLeaderChange(() => void this.refreshLeader());
  }

  get state(): HaState {
    return this.current;
  }

  /**
   * Whether this node may write: the active node (also while it finishes taking the role), or a
   * sealed node (init writes before any node is active).
   */
  get mayWrite(): boolean {
    return this.current !== 'standby' || this.promoting;
  }


  /** Called by the host once it is built. */
  attach(deps: HaDeps, signer: ForwardSigner): void {
    this.deps = deps;
    this.signer = signer;
  }

  /** At unseal, before anything is loaded: a standby until elected, so nothing is written. */
  enterStandby(): void {
    if (this.current === 'sealed') this.current = 'standby';
  }

  /** After unseal and loading: take part in the election. */
  join(): void {
    this.enterStandby();
    if (this.timer) return;
    this.timer = setInterval(() => void this.tick(), POLL_MS);
    this.timer.unref();
    void this.tick();
  }

  /** Before seal or shutdown: stop taking part and give the lock up if held. */
  async leave(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.ticking?.catch(() => undefined);
    const held = this.leadership;
    this.leadership = undefined;
    this.activeSince = undefined;
    this.current = 'sealed';
    await held?.release().catch(() => undefined);
  }

  /**
   * Gives the active role up for a moment so another node takes it (`sys/step-down`); this node
   * stays a standby for at least two election rounds.
   */
  async stepDown(): Promise<void> {
    const held = this.leadership;
    if (!held) return;
    this.leadership = undefined;
    this.activeSince = undefined;
    this.current = 'standby';
    this.deps?.demote('stepped down');
    this.pauseUntil = Date.now() + STEP_DOWN_PAUSE_MS;
    await held.release();
  }

  /** Whether the active node known is another worker of this server (reached on its socket, core/cluster/). */
  get leaderIsSibling(): boolean {
    return this.known?.apiAddr.startsWith('unix:') === true;
  }

  /** `sys/leader`. */
  async leaderStatus(): Promise<{ isSelf: boolean; leaderAddress: string; activeTime: Date | undefined }> {
    if (this.current === 'active') return { isSelf: true, leaderAddress: this.apiAddr, activeTime: this.activeSince };
    const leader = this.known ?? (await this.refreshLeader());
    return { isSelf: false, leaderAddress: leader?.apiAddr ?? '', activeTime: leader?.since };
  }

  /**
   * `sys/ha-status`: the nodes this node knows of, itself and the active node. Standbys do not
   * report to the active node here (each reads the leader from the store), so an active node
   * lists only itself.
   */
  async knownNodes(): Promise<{ apiAddr: string; active: boolean; self: boolean }[]> {
    const nodes = [{ apiAddr: this.apiAddr, active: this.current === 'active', self: true }];
    if (this.current === 'active') return nodes;
    const leader = this.known ?? (await this.refreshLeader());
    if (leader && leader.nodeId !== this.nodeId) nodes.push({ apiAddr: leader.apiAddr, active: true, self: false });
    return nodes;
  }

  /** Sends a request this standby must not run to the active node, and relays the answer. */
  async forward(request: HostRequest): Promise<HostResponse> {
    if (this.storeProblem !== undefined) {
      throw new UnavailableError(`this standby node cannot reach the storage (${this.storeProblem}), so it does not forward writes; retry on another node`);
    }
    const leader = this.known ?? (await this.refreshLeader());
    if (!leader || leader.nodeId === this.nodeId) {
      throw new UnavailableError('no active node: the cluster is electing one; retry shortly');
    }
    // A streamed body (a snapshot restore, larger than memory may hold) is not kept, so the MAC
    // cannot cover it: it goes on only over a sibling worker's private socket (core/cluster/),
    // which nothing else can reach, and the snapshot's own seal vouches for its bytes
    // (docs/deployment.md, section 4). A client can choose the node it sends a restore to, but
    // not the worker its connection reaches.
    if (request.bodyStream && !leader.apiAddr.startsWith('unix:')) {
      throw new NotActiveError('this node is a standby: send this request to the active node (sys/leader names it)');
    }
    try {
      const response = await forwardRequest(leader.apiAddr, request, this.signer!);
      this.counts.forwarded++;
      return response;
    } catch (err) {
      this.counts.forwardFailures++;
      // The leader we knew may be gone: look again in the background (the store may be paused
      // too, and this answer must not wait on it), and tell the client to retry.
      this.known = undefined;
      void this.refreshLeader();
      throw new UnavailableError(
        `the active node could not be reached to forward this request (${errorMessage(err)}); retry shortly`,
      );
    }
  }

  /** Resolves once the election round under way, if any, has finished (this node may be active then). */
  async roundDone(): Promise<void> {
    await this.ticking?.catch(() => undefined);
  }

  private tick(): Promise<void> {
    this.ticking ??= this.electionRound().finally(() => (this.ticking = undefined));
    return this.ticking;
  }

  private async electionRound(): Promise<void> {
    if (this.current !== 'standby' || Date.now() < this.pauseUntil) {
      if (this.current === 'standby') await this.refreshLeader().catch(() => undefined);
      return;
    }
    let won: Leadership | undefined;
    try {
      won = await this.lock.tryAcquire({ nodeId: this.nodeId, apiAddr: this.apiAddr });
      this.storeProblem = undefined;
    } catch (err) {
      this.noteStoreProblem(err);
      return;
    }
    if (!won) {
      await this.refreshLeader().catch(() => undefined);
      return;
    }
    if (this.current !== 'standby') {
      // Sealed while we were acquiring.
      await won.release().catch(() => undefined);
      return;
    }
    this.leadership = won;
    this.promoting = true;
    try {
      await this.deps?.promote();
    } catch (err) {
      this.promoting = false;
      this.logger.error({ err: errorMessage(err) }, 'could not take the active role; giving the lock up');
      this.leadership = undefined;
      await won.release().catch(() => undefined);
      return;
    }
    this.promoting = false;
    if (this.leadership !== won) return;
    this.current = 'active';
    this.activeSince = new Date();
    this.known = { nodeId: this.nodeId, apiAddr: this.apiAddr, since: this.activeSince };
    this.noteLeader(this.known);
    this.logger.info({ node_id: this.nodeId, api_addr: this.apiAddr, epoch: won.epoch }, 'this node is now the active node');
    void won.lost.then((reason) => {
      if (this.leadership !== won) return;
      this.leadership = undefined;
      this.activeSince = undefined;
      this.known = undefined;
      if (this.current === 'active') this.current = 'standby';
      this.logger.warn({ reason }, 'this node lost the active role and is a standby again');
      this.deps?.demote(reason);
    });
  }

  private async refreshLeader(): Promise<LeaderInfo | undefined> {
    try {
      this.known = await this.lock.leader();
      this.storeProblem = undefined;
      // A step-down's pause is there so that another node takes the role; once one has, it has
      // done its work, and a step-down of that node must find this one ready to take the role back.
      if (this.known && this.known.nodeId !== this.nodeId) this.pauseUntil = 0;
      this.noteLeader(this.known);
    } catch (err) {
      this.known = undefined;
      this.noteStoreProblem(err);
    }
    return this.known;
  }

  /** Counts a change of active node; the first one seen is not a change. */
  private noteLeader(leader: LeaderInfo | undefined): void {
    if (!leader || leader.nodeId === this.lastLeaderId) return;
    if (this.lastLeaderId !== undefined) this.counts.leaderChanges++;
    this.lastLeaderId = leader.nodeId;
  }

  private noteStoreProblem(err: unknown): void {
    const reason = errorMessage(err);
    if (this.storeProblem !== reason) this.logger.warn({ err: reason }, 'HA: the storage cannot be reached');
    this.storeProblem = reason;
  }
}
