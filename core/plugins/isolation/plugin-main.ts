/**
 * The entry of an isolated plugin's process (started by plugin-process.ts). It checks that Node's
 * permission model confines it, takes from the plugin what would reach other processes, waits for
 * the host's start message, imports the verified module, checks its manifest against the catalog
 * entry, builds the backend for its one mount, and then answers the host's calls. Storage goes back
 * to the host, which serves it from this mount's view of the barrier; the process holds no key, no
 * host object and no other mount's data. When the host goes away, so does the process.
 */
import os from 'node:os';
import v8 from 'node:v8';
import { syncBuiltinESMExports } from 'node:module';
import { pino } from 'pino';
import { systemClock } from '../../clock.js';
import type { Backend } from '../../framework/backend.js';
import type { LogicalRequest, LogicalResponse, RequestTarget, SecretRenewal } from '../../framework/request.js';
import type { BatchOp, Storage } from '../../../storage/storage.js';
import { WasmCrypto } from '../../../wasm/index.js';
import { checkBackend, checkManifest, PluginError } from '../registry.js';
import { createPluginContext } from '../context.js';
import { pluginServicesContainer } from '../services.js';
import type { SystemView } from '../plugin.js';
import { installModuleHooks } from './module-hooks.js';
import { fromWireValue, toWireValue } from './wire-values.js';
import { CRASH_EXIT_CODE, UNCONFINED_EXIT_CODE, fromWire, toWire, type CallResult, type FromPlugin, type HostCall, type PluginStart, type StorageOp, type SystemValues, type ToPlugin, type WireRequest, type WireTarget } from './protocol.js';
import { errorMessage } from '../../errors.js';

const send = (message: FromPlugin): void => {
  if (process.connected) process.send!(message);
};

/**
 * Whether Node's permission model is on, with no grant to write files, start processes or workers,
 * or load native code. The host starts this process so; a process that finds itself otherwise
 * (a changed start-up, a Node that ignored a flag) refuses to load anything.
 */
function confined(): boolean {
  const permission = (process as { permission?: { has(scope: string, reference?: string): boolean } }).permission;
  if (!permission) return false;
  const granted = (scope: string): boolean => {
    try {
      return permission.has(scope);
    } catch {
      // A scope this Node does not know is one it does not gate either; nothing to refuse.
      return false;
    }
  };
  return !['fs.write', 'child', 'worker', 'addon', 'wasi'].some(granted);
}

/**
 * Takes from the plugin the ways out that Node's permission model leaves open, replaced before the
 * plugin is loaded and frozen in place. The process runs as the server's OS user, so `process.kill`
 * could end the host (a zero or negative pid: its process group), `process._debugProcess` would
 * open the host's inspector, and lowering the host's priority would starve it; V8 flags set at run
 * time (`--allow-natives-syntax`) reach below JavaScript. These are the ways known and tested
 * (test/core/plugins/isolation/hostile-plugin.test.ts), not a proof that there are no others.
 */
function closeKnownEscapes(): void {
  const own = process.pid;
  const ownOnly = (pid: unknown, what: string): void => {
    if (Number(pid) !== own) throw new Error(`a plugin may ${what} only its own process (${own}), not ${String(pid)}`);
  };
  const kill = process.kill.bind(process);
  const internals = process as unknown as Record<string, unknown>;
  const internalKill = internals._kill as (pid: number, signal: number) => number;
  const freeze = (target: object, name: string, value: unknown): void => {
    Object.defineProperty(target, name, { value, writable: false, configurable: false, enumerable: false });
  };
  freeze(process, 'kill', (pid: number, signal?: string | number) => {
    ownOnly(pid, 'signal');
    return kill(own, signal);
  });
  freeze(process, '_kill', (pid: number, signal: number) => {
    ownOnly(pid, 'signal');
    return internalKill.call(process, own, signal);
  });
  freeze(process, '_debugProcess', (pid: unknown) => {
    throw new Error(`a plugin may not open the inspector of a process (${String(pid)})`);
  });
  const setPriority = os.setPriority.bind(os);
  freeze(os, 'setPriority', (pid: number | undefined, priority?: number) => {
    if (priority === undefined) return setPriority(pid as number);
    if (pid !== 0) ownOnly(pid, 'change the priority of');
    return setPriority(own, priority);
  });
  freeze(v8, 'setFlagsFromString', (flags: string) => {
    throw new Error(`a plugin may not set V8 flags (${flags})`);
  });
  // `import { setPriority } from 'node:os'` in the plugin sees the replacements too.
  syncBuiltinESMExports();
}

if (!confined()) {
  process.stderr.write('plugin process: refused to start without Node\'s permission model confining it\n');
  process.exit(UNCONFINED_EXIT_CODE);
}
closeKnownEscapes();

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
const logger = pino({ level: 'info', base: undefined }, { write: (line: string) => send({ t: 'log', line }) });

// The host's channel closing means the host is gone (or has let this process go): nothing is left
// to serve, and a plugin process must not outlive its host.
process.on('disconnect', () => process.exit(0));
// An uncaught error ends the process as it would end a Node program, with an exit code the host
// reads as a crash; the error itself goes to the host's log.
// (Written to stderr, which the host logs: a message on the channel could be lost at the exit.)
process.on('uncaughtException', (err) => {
  process.stderr.write(`uncaught error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(CRASH_EXIT_CODE);
});
let system: SystemValues = { defaultLeaseTtl: 0, maxLeaseTtl: 0 };
const systemView: SystemView = { defaultLeaseTtl: () => system.defaultLeaseTtl, maxLeaseTtl: () => system.maxLeaseTtl };
let backend: Backend | undefined;
// Calls that arrive while the backend is still being built wait for it.
let ready: Promise<Backend> | undefined;

/** A request as the backend sees it in-process: with the mount's (remote) storage, frozen. */
function requestOf(wire: WireRequest): LogicalRequest {
  return Object.freeze({ ...wire, data: fromWireValue(wire.data) as Record<string, unknown>, storage });
}

function targetOf(wire: WireTarget): RequestTarget {
  return Object.freeze({ ...wire, data: fromWireValue(wire.data) as Record<string, unknown>, storage });
}

async function handle(call: HostCall): Promise<CallResult> {
  if (!ready) throw new Error('the plugin was not started');
  const b = await ready;
  switch (call.method) {
    case 'prepare':
      system = call.system;
      return { method: 'prepare', prepared: await b.prepare(targetOf(call.target)) };
    case 'execute':
      // Authorization ran on the host between prepare and execute; the request carries its decision.
      system = call.system;
      return { method: 'execute', response: toWireValue(await b.execute(requestOf(call.request), call.prepared)) as LogicalResponse | null };
    case 'renew':
      system = call.system;
      if (!b.renew) throw new Error('the backend has no renew hook');
      return { method: 'renew', auth: await b.renew(requestOf(call.request), call.auth) };
    case 'renew-secret':
      system = call.system;
      if (!b.renewSecret) throw new Error('the backend has no renewSecret hook');
      return { method: 'renew-secret', renewal: toWireValue(await b.renewSecret({ ...call.request, storage }, call.secret)) as SecretRenewal };
    case 'revoke-secret':
      system = call.system;
      if (!b.revokeSecret) throw new Error('the backend has no revokeSecret hook');
      await b.revokeSecret({ ...call.request, storage }, call.secret);
      return { method: 'revoke-secret' };
    case 'periodic':
      system = call.system;
      await b.periodic?.();
      return { method: 'periodic' };
    case 'cleanup':
      await b.cleanup?.();
      return { method: 'cleanup' };
  }
}

process.on('message', (message: ToPlugin) => {
  switch (message.t) {
    case 'start':
      if (ready) return;
      ready = build(message.start);
      ready.then(
        (b) => {
          backend = b;
          send({
            t: 'ready',
            info: {
              description: b.description,
              paths: b.describePaths(),
              hooks: {
                periodic: b.periodic !== undefined,
                renew: b.renew !== undefined,
                renewSecret: b.renewSecret !== undefined,
                revokeSecret: b.revokeSecret !== undefined,
                invalidate: b.invalidate !== undefined,
                cleanup: b.cleanup !== undefined,
              },
            },
          });
        },
        (err: unknown) => send({ t: 'start-failed', error: toWire(err) }),
      );
      return;
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

async function build(start: PluginStart): Promise<Backend> {
  logger.level = start.logLevel;
  system = start.system;
  installModuleHooks(start.entryUrl, start.source);
  const origin = start.expected.name;
  let mod: { default?: unknown };
  try {
    mod = (await import(start.entryUrl)) as { default?: unknown };
  } catch (err) {
    throw new PluginError(`plugin "${origin}" is unusable: it failed to load: ${errorMessage(err)}`);
  }
  const manifest = checkManifest(mod.default, `the module of "${origin}"`);
  const { expected } = start;
  if (manifest.name !== expected.name || manifest.kind !== expected.kind) {
    throw new PluginError(`plugin "${origin}" is unusable: its module declares the ${manifest.kind} plugin "${manifest.name}", not the ${expected.kind} plugin "${expected.name}" it is registered as`);
  }
  if (expected.version && `v${manifest.version}` !== expected.version) {
    throw new PluginError(`plugin "${origin}" is unusable: its module declares version v${manifest.version}, but it is registered as ${expected.version}`);
  }
  // The plugin services, by the host's one registration list; metrics are left out, as their
  // counts would stay in this process. The WASM core is loaded cold: every process pays for it
  // whether its plugin uses it or not, and warming it up would multiply that price; a plugin that
  // uses it gets its kernels tiered up by use.
  const services = pluginServicesContainer({ WasmCrypto: await WasmCrypto.load({ warmUp: false }) });
  const { context } = createPluginContext({ services, mount: start.mount, storage, logger, clock: systemClock, system: systemView, config: start.config });
  let built: unknown;
  try {
    built = await manifest.factory(context);
  } catch (err) {
    throw new PluginError(`plugin "${origin}" failed to start: ${errorMessage(err)}`);
  }
  const checked = checkBackend(built, manifest);
  if (checked.initialize) {
    try {
      await checked.initialize();
    } catch (err) {
      throw new PluginError(`plugin "${origin}" failed to initialize: ${errorMessage(err)}`);
    }
  }
  return checked;
}
