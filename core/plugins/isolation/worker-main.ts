/**
 * The entry of an isolated plugin's worker thread. It imports the verified module, checks its
 * manifest against the catalog entry, builds the backend for its one mount, and then answers the
 * host's calls. Storage goes back to the host, which serves it from this mount's view of the
 * barrier; the worker holds no key, no host object and no other mount's data.
 */
import { register } from 'node:module';
import { parentPort, workerData } from 'node:worker_threads';
import { pino } from 'pino';
import { createRootContainer, registerValue } from '../../di/container.js';
import { TOKENS } from '../../di/tokens.js';
import { systemClock } from '../../clock.js';
import type { Backend, PreparedRequest } from '../../framework/backend.js';
import type { LogicalRequest } from '../../framework/request.js';
import type { BatchOp, Storage } from '../../../storage/storage.js';
import { checkBackend, checkManifest, PluginError } from '../registry.js';
import type { SystemView } from '../plugin.js';
import { fromWire, toWire, type CallResult, type FromWorker, type HostCall, type StorageOp, type SystemValues, type ToWorker, type WireRequest, type WorkerStart } from './protocol.js';

/**
 * Prepared requests the host never executed (refused by authorization) are dropped after this long,
 * and the oldest beyond this many, so a caller refused again and again cannot grow the worker.
 */
const PREPARED_TTL_MS = 5 * 60_000;
const PREPARED_MAX = 10_000;

const start = workerData as WorkerStart;
const port = parentPort!;
const send = (message: FromWorker): void => port.postMessage(message);

let system: SystemValues = start.system;
const systemView: SystemView = { defaultLeaseTtl: () => system.defaultLeaseTtl, maxLeaseTtl: () => system.maxLeaseTtl };

/** The mount's storage, served by the host. */
class RemoteStorage implements Storage {
  private next = 0;
  readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();

  private call<T>(request: StorageOp): Promise<T> {
    const id = this.next++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      send({ t: 'storage', id, request });
    });
  }

  get(key: string): Promise<Uint8Array | undefined> {
    return this.call({ op: 'get', key });
  }
  put(key: string, value: Uint8Array): Promise<void> {
    return this.call({ op: 'put', key, value });
  }
  delete(key: string): Promise<void> {
    return this.call({ op: 'delete', key });
  }
  list(prefix: string): Promise<string[]> {
    return this.call({ op: 'list', prefix });
  }
  batch(ops: readonly BatchOp[]): Promise<void> {
    return this.call({ op: 'batch', ops: ops.map((o) => ({ ...o })) });
  }
}

const storage = new RemoteStorage();
// Log lines go to the host, which writes them to its own log tagged with the mount.
const logger = pino({ level: start.logLevel, base: undefined }, { write: (line: string) => send({ t: 'log', line }) });
const prepared = new Map<number, { prepared: PreparedRequest; at: number }>();
let nextHandle = 0;
let backend: Backend | undefined;
// Calls that arrive while the backend is still being built wait for it.
let ready: Promise<Backend>;

function requestOf(wire: WireRequest): LogicalRequest {
  return { ...wire, storage };
}

async function handle(call: HostCall): Promise<CallResult> {
  const b = await ready;
  switch (call.method) {
    case 'prepare': {
      system = call.system;
      const now = Date.now();
      for (const [h, p] of prepared) if (now - p.at > PREPARED_TTL_MS) prepared.delete(h);
      const req = requestOf(call.request);
      const p = await b.prepare(req);
      const handleId = nextHandle++;
      prepared.set(handleId, { prepared: p, at: now });
      if (prepared.size > PREPARED_MAX) prepared.delete(prepared.keys().next().value!);
      return { method: 'prepare', handle: handleId, operation: p.operation, pattern: p.pattern, sudo: p.sudo };
    }
    case 'execute': {
      const p = prepared.get(call.handle);
      if (!p) throw new Error('the prepared request is gone');
      prepared.delete(call.handle);
      return { method: 'execute', response: await p.prepared.execute() };
    }
    case 'renew':
      system = call.system;
      if (!b.renew) throw new Error('the backend has no renew hook');
      return { method: 'renew', auth: await b.renew(requestOf(call.request), call.auth) };
    case 'periodic':
      system = call.system;
      await b.periodic?.();
      return { method: 'periodic' };
    case 'cleanup':
      await b.cleanup?.();
      return { method: 'cleanup' };
  }
}

port.on('message', (message: ToWorker) => {
  switch (message.t) {
    case 'ping':
      send({ t: 'pong', seq: message.seq });
      return;
    case 'invalidate':
      backend?.invalidate?.(message.key);
      return;
    case 'storage-result': {
      const waiter = storage.pending.get(message.id);
      if (!waiter) return;
      storage.pending.delete(message.id);
      if (message.ok) waiter.resolve(message.value);
      else waiter.reject(fromWire(message.error, ''));
      return;
    }
    case 'call':
      handle(message.call).then(
        (value) => send({ t: 'result', id: message.id, ok: true, value }),
        (err: unknown) => send({ t: 'result', id: message.id, ok: false, error: toWire(err) }),
      );
      return;
  }
});

async function build(): Promise<Backend> {
  register(new URL('./module-hooks.js', import.meta.url), { data: { entryUrl: start.entryUrl, source: start.source, sdkUrl: start.sdkUrl } });
  const origin = start.expected.name;
  let mod: { default?: unknown };
  try {
    mod = (await import(start.entryUrl)) as { default?: unknown };
  } catch (err) {
    throw new PluginError(`plugin "${origin}" is unusable: it failed to load: ${err instanceof Error ? err.message : String(err)}`);
  }
  const manifest = checkManifest(mod.default, `the module of "${origin}"`);
  const { expected } = start;
  if (manifest.name !== expected.name || manifest.kind !== expected.kind) {
    throw new PluginError(`plugin "${origin}" is unusable: its module declares the ${manifest.kind} plugin "${manifest.name}", not the ${expected.kind} plugin "${expected.name}" it is registered as`);
  }
  if (expected.version && `v${manifest.version}` !== expected.version) {
    throw new PluginError(`plugin "${origin}" is unusable: its module declares version v${manifest.version}, but it is registered as ${expected.version}`);
  }
  const container = createRootContainer();
  registerValue(container, TOKENS.MountContext, start.mount);
  registerValue(container, TOKENS.MountStorage, storage);
  registerValue(container, TOKENS.Logger, logger);
  registerValue(container, TOKENS.SystemView, systemView);
  let built: unknown;
  try {
    built = await manifest.factory({ container, mount: start.mount, storage, logger, clock: systemClock, system: systemView });
  } catch (err) {
    throw new PluginError(`plugin "${origin}" failed to start: ${err instanceof Error ? err.message : String(err)}`);
  }
  const checked = checkBackend(built, manifest);
  if (checked.initialize) {
    try {
      await checked.initialize();
    } catch (err) {
      throw new PluginError(`plugin "${origin}" failed to initialize: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return checked;
}

ready = build();
ready.then(
  (b) => {
    backend = b;
    send({
      t: 'ready',
      info: {
        description: b.description,
        paths: b.describePaths(),
        hooks: { periodic: Boolean(b.periodic), renew: Boolean(b.renew), invalidate: Boolean(b.invalidate), cleanup: Boolean(b.cleanup) },
      },
    });
  },
  (err: unknown) => send({ t: 'start-failed', error: toWire(err) }),
);
