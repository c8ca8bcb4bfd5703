import { expect } from 'chai';
import { pino } from 'pino';
import { createRootContainer } from '../../../core/di/container.js';
import { systemClock } from '../../../core/clock.js';
import {
  BadRequestError,
  ConflictError,
  UnavailableError,
  httpStatusOf,
} from '../../../core/errors.js';
import type { LogicalResponse, Operation } from '../../../core/framework/request.js';
import { MountTable, normalizeMountPath, type LiveMount } from '../../../core/mounts/mount-table.js';
import type { MountTableName } from '../../../core/mounts/mount-entry.js';
import { PluginError, PluginRegistry } from '../../../core/plugins/registry.js';
import type { PluginManifest } from '../../../core/plugins/plugin.js';
import { MemoryStorage } from '../../../storage/memory.js';
import type { BatchOp, Storage } from '../../../storage/storage.js';
import notes from '../../fixtures/plugins/notes.js';
import initFails from '../../fixtures/broken-plugins/init-fails.js';
import { sendDirect } from '../../helpers/backend.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Counts what the host does to the backends of the plugins below. */
const counters = { built: 0, cleanups: 0, flakyBroken: false };

/** The notes plugin, counting constructions and clean-ups. */
const probe: PluginManifest = {
  ...notes,
  name: 'probe',
  factory: async (context) => {
    counters.built++;
    const backend = await notes.factory(context);
    return Object.assign(backend, {
      cleanup: async () => {
        counters.cleanups++;
      },
    });
  },
};

/** The notes plugin, except that its factory throws while `counters.flakyBroken` is set. */
const flaky: PluginManifest = {
  ...notes,
  name: 'flaky',
  factory: (context) => {
    if (counters.flakyBroken) throw new Error('the flaky plugin is broken today');
    return notes.factory(context);
  },
};

/** The notes plugin as an auth method. */
const notesAuth: PluginManifest = { ...notes, name: 'notes-auth', kind: 'auth' };

function registryWith(...manifests: PluginManifest[]): PluginRegistry {
  const registry = new PluginRegistry();
  for (const manifest of manifests) registry.register(manifest);
  return registry;
}

const allPlugins = () => registryWith(notes, probe, flaky, notesAuth, initFails as PluginManifest);

function tableOver(storage: Storage, registry = allPlugins()): MountTable {
  return new MountTable({
    root: createRootContainer(),
    storage,
    registry,
    logger: pino({ level: 'silent' }),
    clock: systemClock,
    defaults: { defaultLeaseTtl: 3600, maxLeaseTtl: 7200 },
  });
}

/** Sends one request the way the host does: resolve, hold the backend, prepare, execute, release. */
async function send(table: MountTable, path: string, operation: Operation, data: Record<string, unknown> = {}): Promise<LogicalResponse | null> {
  const found = table.resolve(path);
  if (!found) throw new Error(`no mount for ${path}`);
  const { mount, relative } = found;
  const { backend, release } = mount.acquire();
  try {
    const sent = await sendDirect(backend, {
      id: 'req',
      operation,
      path: relative,
      data,
      storage: mount.storage,
      mount: { path: mount.routePrefix, type: mount.entry.type, accessor: mount.entry.accessor, uuid: mount.entry.uuid },
    });
    return sent.response;
  } finally {
    release();
  }
}

const instanceOf = async (table: MountTable, mountPath: string): Promise<unknown> =>
  (await send(table, `${mountPath}state`, 'read'))?.data?.instance;

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    return err as Error;
  }
  expect.fail('expected a rejection');
}

/** Fails (instead of hanging the suite) when a promise does not settle soon. */
async function within<T>(promise: Promise<T>, what: string, ms = 1000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Lets pending promise callbacks and I/O run until `done()` holds, or gives up. */
async function until(done: () => boolean, rounds = 200): Promise<boolean> {
  for (let i = 0; i < rounds && !done(); i++) await new Promise((resolve) => setImmediate(resolve));
  return done();
}

/** A storage whose writes can be made to fail. */
class BrittleStorage implements Storage {
  failWrites = false;
  constructor(readonly inner = new MemoryStorage()) {}
  get(key: string) {
    return this.inner.get(key);
  }
  list(prefix: string) {
    return this.inner.list(prefix);
  }
  async put(key: string, value: Uint8Array) {
    if (this.failWrites) throw new Error('disk full');
    return this.inner.put(key, value);
  }
  async delete(key: string) {
    if (this.failWrites) throw new Error('disk full');
    return this.inner.delete(key);
  }
  async batch(ops: readonly BatchOp[]) {
    if (this.failWrites) throw new Error('disk full');
    return this.inner.batch(ops);
  }
}

/** A storage whose next write waits until the test lets it fail. */
class GatedStorage extends BrittleStorage {
  private waiting: (() => void) | undefined;
  private held: ((err: Error) => void) | undefined;
  writeArrived: Promise<void> = Promise.resolve();

  holdWrites(): void {
    this.writeArrived = new Promise((resolve) => (this.waiting = resolve));
  }

  failHeldWrite(err: Error): void {
    this.held?.(err);
  }

  override async put(key: string, value: Uint8Array) {
    const arrived = this.waiting;
    if (!arrived) return super.put(key, value);
    this.waiting = undefined;
    await new Promise<void>((_, reject) => {
      this.held = reject;
      arrived();
    });
  }
}

describe('MountTable', () => {
  let storage: MemoryStorage;
  let table: MountTable;

  beforeEach(async () => {
    counters.built = 0;
    counters.cleanups = 0;
    counters.flakyBroken = false;
    storage = new MemoryStorage();
    table = tableOver(storage);
    await table.load();
  });

  describe('enable', () => {
    it('creates an entry with a fresh UUID, a typed accessor, the running plugin version and default config', async () => {
      const entry = await table.enable('secret', 'notes', { type: 'notes', description: 'my notes' });
      // No version asked for: the built-in runs, and the entry pins nothing.
      expect(entry).to.include({ table: 'secret', path: 'notes/', type: 'notes', description: 'my notes', plugin_version: '', local: false });
      expect(table.live('secret', 'notes/').running).to.deep.equal({ version: 'v1.2.3+builtin', sha256: '' });
      expect(entry.uuid).to.match(UUID);
      expect(entry.accessor).to.match(/^notes_[0-9a-f]{8}$/);
      expect(entry.config).to.include({ default_lease_ttl: 0, max_lease_ttl: 0, force_no_cache: false, listing_visibility: '' });
      expect(entry.options).to.equal(null);
    });

    it('prefixes an auth method\'s accessor with auth_ and routes it under auth/', async () => {
      const entry = await table.enable('auth', 'people', { type: 'notes-auth' });
      expect(entry.accessor).to.match(/^auth_notes-auth_[0-9a-f]{8}$/);
      expect(table.resolve('auth/people/state')?.mount.entry.uuid).to.equal(entry.uuid);
      expect(table.resolve('people/state')).to.equal(undefined);
    });

    it('gives two mounts of one plugin different UUIDs and accessors', async () => {
      const a = await table.enable('secret', 'a', { type: 'notes' });
      const b = await table.enable('secret', 'b', { type: 'notes' });
      expect(a.uuid).not.to.equal(b.uuid);
      expect(a.accessor).not.to.equal(b.accessor);
    });

    it('keeps the given config and fills in the rest', async () => {
      const entry = await table.enable('secret', 'notes', { type: 'notes', config: { default_lease_ttl: 60 }, options: { version: '2' } });
      expect(entry.config).to.include({ default_lease_ttl: 60, max_lease_ttl: 0 });
      expect(entry.options).to.deep.equal({ version: '2' });
    });

    it('normalizes the path: leading and trailing slashes do not matter', async () => {
      const entry = await table.enable('secret', '/crypto/eu/', { type: 'notes' });
      expect(entry.path).to.equal('crypto/eu/');
    });

    it('serves requests on the new mount at once', async () => {
      await table.enable('secret', 'notes', { type: 'notes' });
      await send(table, 'notes/notes/a', 'update', { text: 'hi' });
      expect((await send(table, 'notes/notes/a', 'read'))?.data).to.include({ text: 'hi', created: true });
    });

    it('answers 409 for a path already in use', async () => {
      await table.enable('secret', 'notes', { type: 'notes' });
      const err = await rejection(table.enable('secret', 'notes/', { type: 'probe' }));
      expect(err).to.be.instanceOf(ConflictError);
      expect(err.message).to.equal('path is already in use at notes/');
      expect(httpStatusOf(err)).to.equal(409);
    });

    it('answers 409 for a path inside or around an existing mount', async () => {
      await table.enable('secret', 'crypto/eu', { type: 'notes' });
      const inside = await rejection(table.enable('secret', 'crypto/eu/de', { type: 'notes' }));
      const around = await rejection(table.enable('secret', 'crypto', { type: 'notes' }));
      expect(inside).to.be.instanceOf(ConflictError);
      expect(inside.message).to.equal('cannot mount at "crypto/eu/de/": existing mount at crypto/eu/');
      expect(around).to.be.instanceOf(ConflictError);
      expect(around.message).to.equal('cannot mount at "crypto/": existing mount at crypto/eu/');
    });

    it('accepts a sibling whose name merely starts like an existing mount', async () => {
      await table.enable('secret', 'crypto', { type: 'notes' });
      await table.enable('secret', 'crypto2', { type: 'notes' });
      expect(table.entries('secret').map((e) => e.path)).to.deep.equal(['crypto/', 'crypto2/']);
    });

    it('lets a secrets engine and an auth method share a name', async () => {
      await table.enable('secret', 'people', { type: 'notes' });
      await table.enable('auth', 'people', { type: 'notes-auth' });
      expect([table.entries('secret').length, table.entries('auth').length]).to.deep.equal([1, 1]);
    });

    it('refuses a secrets engine at or under a path the host owns, naming the reserved prefix', async () => {
      const cases: [string, string][] = [['sys', 'sys/'], ['sys/extra', 'sys/'], ['auth/x', 'auth/'], ['audit', 'audit/'], ['cubbyhole', 'cubbyhole/'], ['identity/x', 'identity/']];
      for (const [path, reserved] of cases) {
        const err = await rejection(table.enable('secret', path, { type: 'notes' }));
        expect(err, path).to.be.instanceOf(BadRequestError);
        expect(err.message, path).to.equal(`cannot mount under "${reserved}": the path is reserved`);
      }
      expect(table.entries('secret')).to.deep.equal([]);
    });

    it('accepts a secrets engine whose name only starts like a reserved one', async () => {
      await table.enable('secret', 'system-notes', { type: 'notes' });
      await table.enable('secret', 'authors', { type: 'notes' });
      expect(table.entries('secret').map((e) => e.path)).to.deep.equal(['authors/', 'system-notes/']);
    });

    it('refuses an unknown type, and a plugin of the other kind, with Vault\'s message', async () => {
      expect((await rejection(table.enable('secret', 'x', { type: 'nope' }))).message).to.equal('unknown secrets engine type: nope');
      expect((await rejection(table.enable('secret', 'x', { type: 'notes-auth' }))).message).to.equal('unknown secrets engine type: notes-auth');
      expect((await rejection(table.enable('auth', 'x', { type: 'notes' }))).message).to.equal('unknown auth method type: notes');
    });

    it('refuses a plugin that fails to start, and leaves neither an entry nor a stored row behind', async () => {
      const err = await rejection(table.enable('secret', 'broken', { type: 'init-fails' }));
      expect(err).to.be.instanceOf(PluginError);
      expect(err.message).to.equal('plugin "init-fails" failed to initialize: storage schema is too new');
      expect(table.resolve('broken/x')).to.equal(undefined);
      const reloaded = tableOver(storage);
      await reloaded.load();
      expect(reloaded.entries('secret')).to.deep.equal([]);
      await table.enable('secret', 'broken', { type: 'notes' });
    });

    it('takes the mount back out when the table cannot be saved', async () => {
      const brittle = new BrittleStorage();
      const t = tableOver(brittle);
      await t.load();
      brittle.failWrites = true;
      expect((await rejection(t.enable('secret', 'x', { type: 'probe' }))).message).to.equal('disk full');
      expect(t.resolve('x/state')).to.equal(undefined);
      expect(counters.cleanups).to.equal(1);
    });

    it('lets only one of two concurrent enables of a path win', async () => {
      const results = await Promise.allSettled([
        table.enable('secret', 'race', { type: 'notes' }),
        table.enable('secret', 'race', { type: 'notes' }),
      ]);
      expect(results.map((r) => r.status).sort()).to.deep.equal(['fulfilled', 'rejected']);
      const rejected = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
      expect(rejected.reason).to.be.instanceOf(ConflictError);
    });
  });

  describe('resolve', () => {
    beforeEach(async () => {
      await table.enable('secret', 'crypto/eu', { type: 'notes' });
      await table.enable('auth', 'people', { type: 'notes-auth' });
    });

    it('finds the mount by prefix and gives the path relative to it', () => {
      const found = table.resolve('crypto/eu/notes/a/b');
      expect(found?.mount.entry.path).to.equal('crypto/eu/');
      expect(found?.relative).to.equal('notes/a/b');
    });

    it('finds the mount from its own path, with or without the slash', () => {
      expect(table.resolve('crypto/eu')?.relative).to.equal('');
      expect(table.resolve('crypto/eu/')?.relative).to.equal('');
    });

    it('finds nothing for a path that only shares a prefix of characters, or a parent path', () => {
      expect(table.resolve('crypto/europe/x')).to.equal(undefined);
      expect(table.resolve('crypto')).to.equal(undefined);
      expect(table.resolve('other/x')).to.equal(undefined);
    });

    it('routes auth methods under auth/', () => {
      expect(table.resolve('auth/people/login')?.relative).to.equal('login');
      expect(table.resolve('auth/people/login')?.mount.routePrefix).to.equal('auth/people/');
    });

    it('tells apart mounts whose names start with the same letters', async () => {
      await table.ensureBuiltin('secret', 'cubbyhole/', 'cubbyhole', 'per-token storage');
      await table.enable('secret', 'cubby', { type: 'notes' });
      expect(table.resolve('cubbyhole/x')?.mount.entry.path).to.equal('cubbyhole/');
      expect(table.resolve('cubby/x')?.mount.entry.path).to.equal('cubby/');
    });
  });

  describe('disable', () => {
    it('removes the mount from routing and from the table', async () => {
      await table.enable('secret', 'notes', { type: 'notes' });
      await table.disable('secret', 'notes/');
      expect(table.resolve('notes/state')).to.equal(undefined);
      expect(table.entries('secret')).to.deep.equal([]);
    });

    it('deletes every key under the mount\'s logical/<uuid>/ and nothing else', async () => {
      const gone = await table.enable('secret', 'gone', { type: 'notes' });
      const kept = await table.enable('secret', 'kept', { type: 'notes' });
      await send(table, 'gone/notes/a/b', 'update', { text: '1' });
      await send(table, 'gone/notes/c', 'update', { text: '2' });
      await send(table, 'kept/notes/a', 'update', { text: '3' });
      await storage.put('logical/unrelated', new Uint8Array([1]));
      expect(await storage.list(`logical/${gone.uuid}/notes/`)).to.deep.equal(['a/', 'c']);

      await table.disable('secret', 'gone');
      expect(await storage.list(`logical/${gone.uuid}/`)).to.deep.equal([]);
      expect(await storage.list(`logical/${kept.uuid}/notes/`)).to.deep.equal(['a']);
      expect(await storage.get('logical/unrelated')).not.to.equal(undefined);
    });

    it('deletes an auth method\'s keys under auth/<uuid>/', async () => {
      const entry = await table.enable('auth', 'people', { type: 'notes-auth' });
      await send(table, 'auth/people/notes/x', 'update', { text: 'y' });
      expect(await storage.list(`auth/${entry.uuid}/notes/`)).to.deep.equal(['x']);
      await table.disable('auth', 'people');
      expect(await storage.list(`auth/${entry.uuid}/`)).to.deep.equal([]);
    });

    it('cleans the backend up', async () => {
      await table.enable('secret', 'p', { type: 'probe' });
      await table.disable('secret', 'p');
      expect(counters.cleanups).to.equal(1);
    });

    it('frees the path for a new mount with a new UUID and empty storage', async () => {
      const first = await table.enable('secret', 'notes', { type: 'notes' });
      await send(table, 'notes/notes/a', 'update', { text: 'old' });
      await table.disable('secret', 'notes');
      const second = await table.enable('secret', 'notes', { type: 'notes' });
      expect(second.uuid).not.to.equal(first.uuid);
      expect(await send(table, 'notes/notes/a', 'read')).to.equal(null);
    });

    it('does nothing for a path with no mount', async () => {
      await table.disable('secret', 'never-mounted');
    });

    it('refuses to disable a built-in mount', async () => {
      await table.ensureBuiltin('auth', 'token/', 'token', 'token based credentials');
      const err = await rejection(table.disable('auth', 'token'));
      expect(err).to.be.instanceOf(BadRequestError);
      expect(err.message).to.equal('cannot disable the built-in mount "auth/token/"');
      expect(table.entries('auth').map((e) => e.path)).to.deep.equal(['token/']);
    });
  });

  describe('remount', () => {
    it('moves the entry with its UUID, accessor and config, and serves the stored data at the new path only', async () => {
      const before = await table.enable('secret', 'old', { type: 'notes', config: { default_lease_ttl: 30 } });
      await send(table, 'old/notes/kept', 'update', { text: 'still here' });
      const moved = await table.remount('secret', 'old', 'new/place');
      expect(moved).to.deep.equal({ ...before, path: 'new/place/' });
      expect(table.resolve('old/notes/kept')).to.equal(undefined);
      expect((await send(table, 'new/place/notes/kept', 'read'))?.data).to.include({ text: 'still here' });
    });

    it('builds a backend for the new path and cleans the old one up', async () => {
      await table.enable('secret', 'p', { type: 'probe' });
      const first = await instanceOf(table, 'p/');
      await table.remount('secret', 'p', 'q');
      expect(counters.built).to.equal(2);
      expect(counters.cleanups).to.equal(1);
      expect(await instanceOf(table, 'q/')).to.not.equal(first);
    });

    it('stores the move: a new table over the same storage finds the mount at the new path', async () => {
      await table.enable('auth', 'people', { type: 'notes-auth' });
      await table.remount('auth', 'people', 'staff');
      const reloaded = tableOver(storage);
      await reloaded.load();
      expect(reloaded.entries('auth')).to.deep.equal(table.entries('auth'));
      expect(reloaded.entries('auth').map((e) => e.path)).to.deep.equal(['staff/']);
    });

    it('calls onRemount with the entry and both route prefixes once the move is stored', async () => {
      const calls: string[] = [];
      const t = new MountTable({
        root: createRootContainer(),
        storage,
        registry: allPlugins(),
        logger: pino({ level: 'silent' }),
        clock: systemClock,
        defaults: { defaultLeaseTtl: 3600, maxLeaseTtl: 7200 },
        onRemount: async (entry, from, to) => {
          calls.push(`${entry.path} ${from} ${to}`);
        },
      });
      await t.load();
      await t.enable('auth', 'people', { type: 'notes-auth' });
      await t.remount('auth', 'people', 'staff');
      expect(calls).to.deep.equal(['staff/ auth/people/ auth/staff/']);
    });

    it('keeps the mount where it was when the move cannot be stored', async () => {
      const brittle = new BrittleStorage();
      const t = tableOver(brittle);
      await t.load();
      await t.enable('secret', 'stay', { type: 'probe' });
      brittle.failWrites = true;
      expect((await rejection(t.remount('secret', 'stay', 'go'))).message).to.equal('disk full');
      expect(t.resolve('go/state')).to.equal(undefined);
      expect(t.resolve('stay/state')?.mount.entry.path).to.equal('stay/');
      expect(await instanceOf(t, 'stay/')).to.be.a('string');
      expect(counters.cleanups, 'the backend built for the new path').to.equal(1);
    });

    it('refuses a missing source, a built-in mount, a taken or nested target, and a reserved one', async () => {
      await table.enable('secret', 'a', { type: 'notes' });
      await table.enable('secret', 'b', { type: 'notes' });
      await table.ensureBuiltin('secret', 'sys/', 'system', 'system');
      expect(await rejection(table.remount('secret', 'none', 'x'))).to.be.instanceOf(BadRequestError);
      expect(await rejection(table.remount('secret', 'sys', 'x'))).to.be.instanceOf(BadRequestError);
      expect(await rejection(table.remount('secret', 'a', 'b'))).to.be.instanceOf(ConflictError);
      expect(await rejection(table.remount('secret', 'a', 'a/inner'))).to.be.instanceOf(ConflictError);
      expect(await rejection(table.remount('secret', 'a', 'cubbyhole/x'))).to.be.instanceOf(BadRequestError);
      expect(table.entries('secret').map((e) => e.path)).to.deep.equal(['a/', 'b/', 'sys/']);
    });

    it('another table over the same storage (an HA standby) follows the move on sync', async () => {
      await table.enable('secret', 'from', { type: 'notes' });
      await send(table, 'from/notes/n', 'update', { text: 'seen' });
      const standby = tableOver(storage);
      await standby.load();
      await table.remount('secret', 'from', 'to');
      await standby.sync();
      expect(standby.resolve('from/notes/n')).to.equal(undefined);
      expect((await send(standby, 'to/notes/n', 'read'))?.data).to.include({ text: 'seen' });
    });
  });

  describe('tune', () => {
    it('applies the change and saves it', async () => {
      await table.enable('secret', 'notes', { type: 'notes' });
      await table.tune('secret', 'notes', (entry) => ({ ...entry, description: 'tuned', config: { ...entry.config, max_lease_ttl: 600 } }));
      const reloaded = tableOver(storage);
      await reloaded.load();
      expect(reloaded.entries('secret')[0]).to.deep.include({ description: 'tuned' });
      expect(reloaded.entries('secret')[0]!.config.max_lease_ttl).to.equal(600);
    });

    it('changes the TTLs a backend sees without a reload; 0 means the system default', async () => {
      await table.enable('secret', 'notes', { type: 'notes' });
      const live = table.live('secret', 'notes');
      const view = table.systemViewFor(live);
      expect([view.defaultLeaseTtl(), view.maxLeaseTtl()]).to.deep.equal([3600, 7200]);
      await table.tune('secret', 'notes', (entry) => ({ ...entry, config: { ...entry.config, default_lease_ttl: 60 } }));
      expect([view.defaultLeaseTtl(), view.maxLeaseTtl()]).to.deep.equal([60, 7200]);
    });

    it('refuses a path with no mount', async () => {
      const err = await rejection(table.tune('secret', 'nothing', (entry) => entry));
      expect(err).to.be.instanceOf(BadRequestError);
      expect(err.message).to.equal('no mount at "nothing/"');
    });

    it('leaves the entry as it was when the change cannot be saved', async () => {
      const brittle = new BrittleStorage();
      const t = tableOver(brittle);
      await t.load();
      await t.enable('secret', 'notes', { type: 'notes', description: 'before' });
      brittle.failWrites = true;
      await rejection(t.tune('secret', 'notes', (entry) => ({ ...entry, description: 'after' })));
      expect(t.entries('secret')[0]!.description).to.equal('before');
    });

    it('shows no reader a change before it is stored, so a change that fails to store was never seen', async () => {
      const gated = new GatedStorage();
      const t = tableOver(gated);
      await t.load();
      await t.enable('secret', 'notes', { type: 'notes', description: 'before' });
      gated.holdWrites();
      const tuning = t.tune('secret', 'notes', (entry) => ({ ...entry, description: 'after' }));
      await gated.writeArrived;
      expect(t.entries('secret')[0]!.description).to.equal('before');
      expect(t.live('secret', 'notes').entry.description).to.equal('before');
      gated.failHeldWrite(new Error('disk full'));
      await rejection(tuning);
      expect(t.live('secret', 'notes').entry.description).to.equal('before');
    });

    it('builds a fresh backend when the options change (a plugin reads them when built), and cleans the old one up', async () => {
      await table.enable('secret', 'probe', { type: 'probe' });
      const before = await instanceOf(table, 'probe/');
      await table.tune('secret', 'probe', (entry) => ({ ...entry, description: 'same options' }));
      expect(await instanceOf(table, 'probe/')).to.equal(before);
      await table.tune('secret', 'probe', (entry) => ({ ...entry, options: { version: '2' } }));
      expect(await instanceOf(table, 'probe/')).to.not.equal(before);
      expect(counters.cleanups).to.equal(1);
      expect(table.entries('secret')[0]!.options).to.deep.equal({ version: '2' });
    });

    it('refuses options the plugin cannot start with: the entry, the stored table and the backend stay as they were', async () => {
      await table.enable('secret', 'flaky', { type: 'flaky', options: { mode: 'a' } });
      const before = await instanceOf(table, 'flaky/');
      counters.flakyBroken = true;
      const err = await rejection(table.tune('secret', 'flaky', (entry) => ({ ...entry, options: { mode: 'b' } })));
      expect(err).to.be.instanceOf(PluginError);
      expect(table.entries('secret')[0]!.options).to.deep.equal({ mode: 'a' });
      expect(await instanceOf(table, 'flaky/')).to.equal(before);
      const reloaded = tableOver(storage);
      counters.flakyBroken = false;
      await reloaded.load();
      expect(reloaded.entries('secret')[0]!.options).to.deep.equal({ mode: 'a' });
    });

    it('another node that syncs the tuned table rebuilds its backend with the new options', async () => {
      await table.enable('secret', 'probe', { type: 'probe' });
      const other = tableOver(storage);
      await other.load();
      const before = await instanceOf(other, 'probe/');
      await table.tune('secret', 'probe', (entry) => ({ ...entry, options: { version: '2' } }));
      await other.sync();
      expect(other.entries('secret')[0]!.options).to.deep.equal({ version: '2' });
      expect(await instanceOf(other, 'probe/')).to.not.equal(before);
    });
  });

  describe('persistence', () => {
    it('stores each table under its own key', async () => {
      await table.enable('secret', 'notes', { type: 'notes' });
      await table.enable('auth', 'people', { type: 'notes-auth' });
      const read = async (key: string) => JSON.parse(Buffer.from((await storage.get(key))!).toString('utf8')) as { entries: { path: string }[] };
      expect((await read('core/mounts')).entries.map((e) => e.path)).to.deep.equal(['notes/']);
      expect((await read('core/auth')).entries.map((e) => e.path)).to.deep.equal(['people/']);
    });

    it('loads the same entries, UUIDs and accessors into a new table over the same storage', async () => {
      await table.enable('secret', 'notes', { type: 'notes', description: 'd', config: { default_lease_ttl: 30 } });
      await table.enable('secret', 'crypto/eu', { type: 'probe' });
      await table.enable('auth', 'people', { type: 'notes-auth' });
      await table.ensureBuiltin('auth', 'token/', 'token', 'token based credentials');

      const reloaded = tableOver(storage);
      await reloaded.load();
      for (const name of ['secret', 'auth'] as MountTableName[]) {
        expect(reloaded.entries(name), name).to.deep.equal(table.entries(name));
      }
    });

    it('serves the stored data through the reloaded mounts', async () => {
      await table.enable('secret', 'notes', { type: 'notes' });
      await send(table, 'notes/notes/kept', 'update', { text: 'still here', count: '4' });
      const reloaded = tableOver(storage);
      await reloaded.load();
      expect((await send(reloaded, 'notes/notes/kept', 'read'))?.data).to.include({ text: 'still here', count: 4 });
    });

    it('marks only the mount whose plugin fails on load as failed; the others serve', async () => {
      await table.enable('secret', 'good', { type: 'notes' });
      await table.enable('secret', 'bad', { type: 'flaky' });
      counters.flakyBroken = true;

      const reloaded = tableOver(storage);
      await reloaded.load();
      expect(await instanceOf(reloaded, 'good/')).to.be.a('string');
      const bad = reloaded.live('secret', 'bad');
      expect(bad.failure).to.equal('plugin "flaky" failed to start: the flaky plugin is broken today');
      expect(() => bad.acquire()).to.throw(UnavailableError, 'mount "bad/" is unavailable: plugin "flaky" failed to start');
      expect(reloaded.entries('secret').map((e) => e.path)).to.deep.equal(['bad/', 'good/']);
    });

    it('marks a mount failed when its plugin is no longer registered', async () => {
      await table.enable('secret', 'good', { type: 'notes' });
      await table.enable('secret', 'orphan', { type: 'probe' });
      const reloaded = tableOver(storage, registryWith(notes));
      await reloaded.load();
      expect(reloaded.live('secret', 'orphan').failure).to.equal('unknown secrets engine type: probe');
      expect(await instanceOf(reloaded, 'good/')).to.be.a('string');
    });

    it('keeps a failed mount\'s entry when the table is saved again', async () => {
      await table.enable('secret', 'bad', { type: 'flaky' });
      counters.flakyBroken = true;
      const reloaded = tableOver(storage);
      await reloaded.load();
      await reloaded.enable('secret', 'other', { type: 'notes' });
      const again = tableOver(storage);
      await again.load();
      expect(again.entries('secret').map((e) => e.path)).to.deep.equal(['bad/', 'other/']);
    });
  });

  describe('reload', () => {
    let live: LiveMount;

    beforeEach(async () => {
      await table.enable('secret', 'p', { type: 'probe' });
      live = table.live('secret', 'p');
    });

    it('builds a fresh backend: in-memory state starts afresh', async () => {
      const before = await instanceOf(table, 'p/');
      await table.reload([live]);
      const after = await instanceOf(table, 'p/');
      expect(after).to.be.a('string');
      expect(after).not.to.equal(before);
      expect(counters.built).to.equal(2);
    });

    it('keeps the stored data and the mount entry', async () => {
      const entry = structuredClone(live.entry);
      await send(table, 'p/notes/a', 'update', { text: 'kept' });
      await table.reload([live]);
      expect((await send(table, 'p/notes/a', 'read'))?.data).to.include({ text: 'kept' });
      expect(live.entry).to.deep.equal(entry);
      expect((await send(table, 'p/state', 'read'))?.data).to.include({ uuid: entry.uuid, initialized: true });
    });

    it('cleans the old backend up', async () => {
      await table.reload([live]);
      expect(counters.cleanups).to.equal(1);
    });

    it('does not clean the old backend up while a request still holds it', async () => {
      const held = live.acquire();
      const reloading = table.reload([live]);
      try {
        expect(await until(() => counters.built === 2), 'the new backend is built').to.equal(true);
        await until(() => false, 20);
        expect(counters.cleanups).to.equal(0);
      } finally {
        held.release();
      }
      await within(reloading, 'the reload');
      expect(counters.cleanups).to.equal(1);
    });

    it('sends requests that arrive while the old backend drains to the new one', async () => {
      const before = await instanceOf(table, 'p/');
      const held = live.acquire();
      let reloaded = false;
      const reloading = table.reload([live]).then(() => {
        reloaded = true;
      });
      try {
        expect(await until(() => live.backend !== held.backend), 'the new backend is in place').to.equal(true);
        const after = await instanceOf(table, 'p/');
        expect(after).not.to.equal(before);
        expect(reloaded).to.equal(false);
      } finally {
        held.release();
      }
      await within(reloading, 'the reload');
    });

    it('skips built-in mounts', async () => {
      await table.ensureBuiltin('auth', 'token/', 'token', 'token based credentials');
      const token = table.live('auth', 'token');
      await table.reload([token]);
      expect(token.backend).to.equal(undefined);
      expect(token.failure).to.equal(undefined);
    });

    it('brings a failed mount back once its plugin works again', async () => {
      await table.enable('secret', 'f', { type: 'flaky' });
      counters.flakyBroken = true;
      const reloaded = tableOver(storage);
      await reloaded.load();
      const failed = reloaded.live('secret', 'f');
      expect(failed.failure).to.be.a('string');
      counters.flakyBroken = false;
      await reloaded.reload([failed]);
      expect(failed.failure).to.equal(undefined);
      expect(await instanceOf(reloaded, 'f/')).to.be.a('string');
    });

    it('keeps the old backend serving when the new one fails to build', async () => {
      await table.enable('secret', 'f', { type: 'flaky' });
      const before = await instanceOf(table, 'f/');
      counters.flakyBroken = true;
      const err = await rejection(table.reload([table.live('secret', 'f')]));
      expect(err.message).to.equal('plugin "flaky" failed to start: the flaky plugin is broken today');
      expect(await instanceOf(table, 'f/')).to.equal(before);
    });

    it('lists the mounts of a plugin type, built-ins aside', async () => {
      await table.enable('secret', 'p2', { type: 'probe' });
      await table.enable('secret', 'n', { type: 'notes' });
      expect(table.byType('probe').map((m) => m.entry.path).sort()).to.deep.equal(['p/', 'p2/']);
    });
  });

  describe('in-flight requests', () => {
    it('lets several waiters wait for the same requests to end', async () => {
      await table.enable('secret', 'p', { type: 'probe' });
      const live = table.live('secret', 'p');
      const held = live.acquire();
      const first = live.waitIdle();
      const second = live.waitIdle();
      held.release();
      await within(Promise.all([first, second]), 'both waiters resolving');
    });

    it('counts a release only once', async () => {
      await table.enable('secret', 'p', { type: 'probe' });
      const live = table.live('secret', 'p');
      const a = live.acquire();
      const b = live.acquire();
      a.release();
      a.release();
      let idle = false;
      const waiting = live.waitIdle().then(() => {
        idle = true;
      });
      await until(() => idle, 20);
      expect(idle).to.equal(false);
      b.release();
      await within(waiting, 'idle after the last release');
    });
  });

  it('runs every backend\'s periodic hook, even when one of them fails', async () => {
    await table.enable('secret', 'a', { type: 'notes' });
    await table.enable('secret', 'b', { type: 'notes' });
    const a = table.live('secret', 'a');
    a.backend!.periodic = async () => {
      throw new Error('periodic failure');
    };
    await table.runPeriodic();
    expect((await send(table, 'b/state', 'read'))?.data?.periodic_runs).to.equal(1);
  });

  it('tears every backend down on unload', async () => {
    await table.enable('secret', 'p1', { type: 'probe' });
    await table.enable('secret', 'p2', { type: 'probe' });
    await table.unload();
    expect(counters.cleanups).to.equal(2);
    expect(table.resolve('p1/state')).to.equal(undefined);
  });
});

describe('normalizeMountPath', () => {
  it('adds a trailing slash and drops leading and trailing ones', () => {
    expect(['a', 'a/', '/a', '//a//', 'a/b', '/a/b/', 'v1.2/x_y-z'].map(normalizeMountPath)).to.deep.equal([
      'a/', 'a/', 'a/', 'a/', 'a/b/', 'a/b/', 'v1.2/x_y-z/',
    ]);
  });

  it('refuses an empty path', () => {
    for (const raw of ['', '/', '///']) expect(() => normalizeMountPath(raw), raw).to.throw(BadRequestError, 'mount path must not be empty');
  });

  it('refuses empty, relative and odd segments', () => {
    for (const raw of ['a//b', '.', '..', 'a/../b', 'a/./b', 'a b', 'a?b', 'ключ']) {
      expect(() => normalizeMountPath(raw), raw).to.throw(BadRequestError, 'invalid mount path');
    }
  });
});
