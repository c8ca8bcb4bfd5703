/**
 * A worker's connection to the primary process (docs/architecture.md, "Workers"): its physical
 * store (storage/ipc.ts), its private forwarding socket, and the seal it shares with the other
 * workers. A worker that unseals sends the root key through the primary to the others, which
 * unseal with it, and the unseal answers once every worker's first election round is over (one
 * of them is active then); a seal goes the same way. A worker that starts while
 * the others are unsealed takes the root key from one of them, so a restarted worker serves at once.
 *
 * The root key crosses the IPC channel, a pipe between processes of the same user that nothing
 * else can open; the primary passes it on and keeps no copy.
 */
import cluster from 'node:cluster';
import path from 'node:path';
import { rmSync } from 'node:fs';
import { IpcStorage } from '../../storage/ipc.js';
import type { Host } from '../host.js';
import { zeroize } from '../../storage/aead.js';
import { IpcPeer, type Channel } from './ipc-peer.js';
import { InternalError, KeywardenError, UnavailableError, errorClassOf, publicMessageOf } from '../errors.js';
import type { SealStatus, UnsealStep } from '../seal/seal-api.js';
import { workerReports } from './whole-server.js';
import type { WholeServer } from '../system/whole-server.js';

/** The environment the primary starts each worker with. */
export const WORKER_ENV = {
  /** The worker's number, 1 to N; a restarted worker keeps its number. */
  index: 'KEYWARDEN_WORKER',
  /** The primary's private directory of forwarding sockets. */
  socketDir: 'KEYWARDEN_WORKER_SOCKETS',
} as const;

/** What a worker tells the primary once it serves. */
export interface WorkerReady {
  readonly addresses: readonly string[];
  /** Dev mode: the root token, which the primary prints once. */
  readonly rootToken?: string;
}

export class WorkerLink {
  readonly peer: IpcPeer;
  /** Resolves with the reason when the channel to the primary closes. */
  readonly lost: Promise<string>;
  /** sys/metrics and sys/in-flight-req of every worker. */
  readonly wholeServer: WholeServer;
  private host: Host | undefined;

  private constructor(
    readonly index: number,
    private readonly socketDir: string,
  ) {
    this.peer = new IpcPeer(process as unknown as Channel, 'the primary process');
    this.lost = new Promise((resolve) => process.once('disconnect', () => resolve('the primary process is gone')));
    void this.lost.then((reason) => this.peer.close(reason));
    this.peer.handle('rootKey', async () => (this.host && !this.host.barrier.sealed ? this.host.barrier.copyRootKey() : null));
    this.peer.handle('unseal', async ({ rootKey }) => {
      const key = Buffer.from(rootKey as Uint8Array);
      try {
        await this.host?.seal.followUnseal(key);
      } finally {
        zeroize(key);
      }
    });
    this.peer.handle('seal', async () => this.host?.seal.seal({ localOnly: true }));
    // This worker collects the shares of an unseal (the primary's choice); an error goes back by its catalogue code, keeping its status.
    this.peer.handle('unseal-step', async (step) => {
      if (!this.host) throw new UnavailableError('the worker collecting unseal shares is starting; retry');
      try {
        return { status: await this.host.seal.runUnsealStep(step as unknown as UnsealStep) };
      } catch (err) {
        return { error: { code: err instanceof KeywardenError ? err.code : InternalError.code, message: publicMessageOf(err) } };
      }
    });
    this.peer.handle('elected', async () => this.host?.ha?.roundDone());
    // Nothing is cached before the store is built, so there is nothing to invalidate yet.
    this.peer.handle('changed', async () => undefined);
    this.peer.handle('leader', async () => undefined);
    this.wholeServer = workerReports(this.peer, index, () => this.host);
    void this.peer.call('hello').catch(() => undefined);
  }

  /** This process's link when it is a worker started by the primary; undefined otherwise. */
  static ofThisProcess(): WorkerLink | undefined {
    const index = Number(process.env[WORKER_ENV.index]);
    const socketDir = process.env[WORKER_ENV.socketDir];
    if (!cluster.isWorker || !Number.isSafeInteger(index) || !socketDir) return undefined;
    return new WorkerLink(index, socketDir);
  }

  /** The physical store the primary owns. */
  storage(kind: string): IpcStorage {
    return new IpcStorage(this.peer, kind, this.lost);
  }

  /** Where the other workers forward writes to this one (when it is the active worker). */
  get forwardingSocket(): string {
    const file = path.join(this.socketDir, `worker-${this.index}.sock`);
    // A worker restarted in this slot finds its predecessor's socket file.
    rmSync(file, { force: true });
    return file;
  }

  /** What this worker's seal manager tells the others. */
  readonly siblings = {
    unsealed: async (): Promise<void> => {
      if (!this.host || this.host.barrier.sealed) return;
      const rootKey = this.host.barrier.copyRootKey();
      try {
        await this.peer.call('unsealed', { rootKey });
      } finally {
        zeroize(rootKey);
      }
    },
    sealed: async (): Promise<void> => {
      await this.peer.call('sealed');
    },
    unsealStep: async (step: UnsealStep): Promise<SealStatus> => {
      const answer = await this.peer.call<{ status?: SealStatus; error?: { code: string; message: string } }>('unseal-step', { ...step });
      if (answer.error) {
        const Kind = errorClassOf(answer.error.code) ?? InternalError;
        throw new Kind(answer.error.message);
      }
      return answer.status!;
    },
  };

  /**
   * The host is built: it answers the others' seal changes from now on, and unseals at once
   * when another worker is unsealed already.
   */
  async attach(host: Host): Promise<void> {
    this.host = host;
    const rootKey = await this.peer.call<Uint8Array | null>('join');
    if (!rootKey) return;
    const key = Buffer.from(rootKey);
    try {
      await host.seal.followUnseal(key);
    } finally {
      zeroize(key);
    }
  }

  /**
   * The primary's stop (a SIGINT or SIGTERM it received: drain, seal, stop) and reload (SIGHUP),
   * handled as this process's own signals.
   */
  onPrimarySignal(handler: (signal: NodeJS.Signals) => void): void {
    process.on('message', (message: { kw?: string; signal?: NodeJS.Signals }) => {
      if (message?.kw === 'stop') handler(message.signal ?? 'SIGTERM');
      else if (message?.kw === 'reload') handler('SIGHUP');
    });
  }

  /** Serving: the primary may start the next worker. */
  ready(info: WorkerReady): Promise<void> {
    return this.peer.call('ready', { ...info });
  }
}
