/**
 * `keywarden server` with `workers` > 1: this process serves no HTTP. It owns the physical store
 * (store-owner.ts), starts the workers with `node:cluster` (which shares the listeners' ports
 * among them), passes seal changes between them, restarts one that dies, and stops or reloads
 * them all on a signal (docs/architecture.md, "Workers").
 *
 * Start-up: the first worker starts alone (it initializes a dev server, or finds the store as it
 * is), then the others, each unsealed by a sibling. A worker that exits before it serves stops
 * the whole server with its own error: a restart would fail the same way (a port taken, a bad
 * plugin). A worker that dies once serving is restarted; the others keep serving meanwhile.
 */
import cluster, { type Worker } from 'node:cluster';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from 'pino';
import type { PhysicalStorage } from '../../storage/storage.js';
import { errorMessage } from '../errors.js';
import { IpcPeer } from './ipc-peer.js';
import { StoreOwner, type NodeIdentity } from './store-owner.js';
import { gatherReports } from './whole-server.js';
import { WORKER_ENV, type WorkerReady } from './worker-link.js';

export interface PrimaryOptions {
  readonly workers: number;
  /** The store the workers share; closed once they have all stopped. */
  readonly store: PhysicalStorage;
  /** PostgreSQL HA: this node among the others (store-owner.ts). */
  readonly node?: NodeIdentity;
  readonly logger: Logger;
  /** Every worker serves: `first` is the first worker's report (its addresses, dev mode's root token). */
  readonly serving: (first: WorkerReady) => Promise<void>;
}

/** Runs the workers until SIGINT or SIGTERM has stopped them all; the process's exit code. */
export async function runPrimary(options: PrimaryOptions): Promise<number> {
  const { logger, store } = options;
  const owner = new StoreOwner(store, logger, options.node);
  // Private to this user: the sockets take requests the workers forward with the client's token.
  const socketDir = mkdtempSync(path.join(os.tmpdir(), 'keywarden-workers-'));
  cluster.setupPrimary({ serialization: 'advanced' });
  const running = new Map<number, Worker>();
  /** The workers that said they serve, by number. */
  const servingWorkers = new Set<number>();
  let stopping = false;
  let failed: (code: number) => void = () => undefined;
  const startFailed = new Promise<number>((resolve) => (failed = resolve));

  const start = (index: number): Promise<WorkerReady> => {
    const worker = cluster.fork({ [WORKER_ENV.index]: String(index), [WORKER_ENV.socketDir]: socketDir });
    running.set(index, worker);
    logger.info({ worker_number: index, pid: worker.process.pid }, 'worker started');
    const peer = new IpcPeer(worker, `worker ${index}`);
    owner.attach(index, peer);
    gatherReports(peer, owner);
    let serving = false;
    peer.handle('unsealed', async ({ rootKey }) => {
      await owner.broadcast(index, 'unseal', { rootKey });
      // Every worker's first election round done: one is active, and a write right after the unseal is served.
      await owner.broadcast(undefined, 'elected');
    });
    peer.handle('sealed', () => owner.broadcast(index, 'seal'));
    // The shares of an unseal are collected by one worker, the lowest-numbered that serves, so
    // that shares sent over different connections add up whichever worker each one reached.
    peer.handle('unseal-step', (step) => owner.call(servingWorkers.size > 0 ? Math.min(...servingWorkers) : index, 'unseal-step', step));
    peer.handle('join', async () => (await owner.broadcast(index, 'rootKey')).find((key) => key instanceof Uint8Array) ?? null);
    const ready = new Promise<WorkerReady>((resolve) =>
      peer.handle('ready', async (info) => {
        serving = true;
        servingWorkers.add(index);
        resolve(info as unknown as WorkerReady);
      }),
    );
    // A send to a worker that is exiting fails; its exit is handled below.
    worker.on('error', (err) => logger.debug({ worker_number: index, err: errorMessage(err) }, 'the channel to a worker failed'));
    worker.on('exit', (code, signal) => {
      const reason = signal ? `killed by ${signal}` : `exited with code ${code}`;
      owner.detach(index, reason);
      servingWorkers.delete(index);
      if (running.get(index) === worker) running.delete(index);
      if (stopping) return;
      if (!serving) {
        // The worker wrote its own error when it could (exit code 1); say something otherwise.
        if (code !== 1) process.stderr.write(`Error starting the server: worker ${index} ${reason} before it served\n`);
        failed(1);
        return;
      }
      logger.error({ worker_number: index, reason }, 'a worker stopped; starting it again');
      start(index).then(
        () => logger.info({ worker_number: index }, 'the worker serves again'),
        (err: unknown) => logger.error({ worker_number: index, err: errorMessage(err) }, 'the worker could not be started again'),
      );
    });
    return ready;
  };

  const stopAll = async (signal: NodeJS.Signals | 'start failed'): Promise<void> => {
    stopping = true;
    const exits = [...running.values()].map((worker) => new Promise<void>((resolve) => (worker.isDead() ? resolve() : worker.once('exit', () => resolve()))));
    for (const worker of running.values()) {
      if (signal === 'start failed') worker.process.kill('SIGTERM');
      else tell(worker, { kw: 'stop', signal });
    }
    await Promise.all(exits);
  };

  const started = (async () => {
    const first = await start(1);
    await Promise.all(Array.from({ length: options.workers - 1 }, (_, i) => start(i + 2)));
    return first;
  })();
  const outcome = await Promise.race([started.then((first) => ({ first })), startFailed.then((code) => ({ code }))]);
  if ('code' in outcome) {
    await stopAll('start failed');
    await closeAll(store, socketDir, logger);
    return outcome.code;
  }
  logger.info({ workers: options.workers, pid: process.pid }, 'every worker serves');
  await options.serving(outcome.first);

  const onHangup = () => {
    logger.info({ signal: 'SIGHUP' }, 'reload: every worker reads the configuration again');
    for (const worker of running.values()) tell(worker, { kw: 'reload' });
  };
  process.on('SIGHUP', onHangup);
  const code = await new Promise<number>((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      // A second signal stops the workers at once, for an operator who will not wait.
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      process.once('SIGINT', () => running.forEach((worker) => worker.process.kill('SIGKILL')));
      process.once('SIGTERM', () => running.forEach((worker) => worker.process.kill('SIGKILL')));
      logger.info({ signal }, 'shutting down: every worker drains its requests');
      void stopAll(signal).then(() => resolve(0));
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  process.off('SIGHUP', onHangup);
  await closeAll(store, socketDir, logger);
  return code;
}

/** Sends a worker a signal's message; one whose channel just closed is exiting anyway. */
function tell(worker: Worker, message: { readonly kw: 'stop' | 'reload'; readonly signal?: NodeJS.Signals }): void {
  if (worker.isConnected()) worker.send(message, undefined, () => undefined);
}

async function closeAll(store: PhysicalStorage, socketDir: string, logger: Logger): Promise<void> {
  await store.close();
  rmSync(socketDir, { recursive: true, force: true });
  logger.info('shutdown: storage closed');
}
