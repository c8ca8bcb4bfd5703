import { expect } from 'chai';
import { pino } from 'pino';
import { BadRequestError, httpStatusOf } from '../../../core/errors.js';
import { createPluginContext } from '../../../core/plugins/context.js';
import { pluginServicesContainer } from '../../../core/plugins/services.js';
import { systemClock } from '../../../core/clock.js';
import { defaultMountConfig, type MountEntry } from '../../../core/mounts/mount-entry.js';
import { PluginError, PluginRegistry, checkBackend, checkManifest } from '../../../core/plugins/registry.js';
import type { PluginContext, PluginManifest } from '../../../core/plugins/plugin.js';
import { MemoryStorage } from '../../../storage/memory.js';
import notes from '../../fixtures/plugins/notes.js';
import noName from '../../fixtures/broken-plugins/no-name.js';
import badKind from '../../fixtures/broken-plugins/bad-kind.js';
import factoryThrows from '../../fixtures/broken-plugins/factory-throws.js';
import notABackend from '../../fixtures/broken-plugins/not-a-backend.js';
import ambiguousPaths from '../../fixtures/broken-plugins/ambiguous-paths.js';
import initFails from '../../fixtures/broken-plugins/init-fails.js';

const entry: MountEntry = {
  table: 'secret',
  path: 'notes/',
  type: 'notes',
  description: '',
  uuid: '11111111-1111-1111-1111-111111111111',
  accessor: 'notes_0a1b2c3d',
  local: false,
  seal_wrap: false,
  external_entropy_access: false,
  options: null,
  config: defaultMountConfig(),
  plugin_version: '',
};

function context(): PluginContext {
  return createPluginContext({
    services: pluginServicesContainer({}),
    mount: entry,
    storage: new MemoryStorage(),
    logger: pino({ level: 'silent' }),
    clock: systemClock,
    system: { defaultLeaseTtl: () => 3600, maxLeaseTtl: () => 7200 },
    config: {},
  }).context;
}

async function buildError(manifest: unknown): Promise<Error> {
  const registry = new PluginRegistry();
  const registered = registry.register(manifest, 'the test');
  try {
    await registry.build(registered, context());
  } catch (err) {
    return err as Error;
  }
  expect.fail('expected build to fail');
}

const manifestWith = (changes: Record<string, unknown>): Record<string, unknown> => ({ ...notes, ...changes });

describe('plugin registry', () => {
  describe('checkManifest', () => {
    it('accepts a well-formed manifest and returns it', () => {
      expect(checkManifest(notes, 'notes.js')).to.equal(notes);
    });

    it('refuses a manifest without a name, saying where it came from', () => {
      expect(() => checkManifest(noName, 'no-name.js')).to.throw(
        PluginError, 'plugin from no-name.js is unusable: "name" must be lower-case letters, digits and "-"',
      );
    });

    it('refuses a kind other than secret or auth', () => {
      expect(() => checkManifest(badKind, 'bad-kind.js')).to.throw(PluginError, 'plugin from bad-kind.js is unusable: "kind" must be "secret" or "auth"');
    });

    it('refuses something that is not an object', () => {
      for (const candidate of [undefined, null, 'notes', 42]) {
        expect(() => checkManifest(candidate, 'x.js')).to.throw(PluginError, 'its manifest is not an object');
      }
    });

    it('refuses names with capitals, underscores, a leading digit or dash, or more than 63 characters', () => {
      for (const name of ['Notes', 'my_notes', '1notes', '-notes', '', 'a'.repeat(64), 42]) {
        expect(() => checkManifest(manifestWith({ name }), 'x.js'), String(name)).to.throw(PluginError, '"name" must be');
      }
      expect(checkManifest(manifestWith({ name: 'a'.repeat(63) }), 'x.js').name).to.have.length(63);
      expect(checkManifest(manifestWith({ name: 'cloud-kms2' }), 'x.js').name).to.equal('cloud-kms2');
    });

    it('refuses the names of the host\'s own mount types', () => {
      for (const name of ['system', 'token', 'cubbyhole', 'identity', 'plugin']) {
        expect(() => checkManifest(manifestWith({ name }), 'x.js')).to.throw(PluginError, `"name" "${name}" is reserved`);
      }
    });

    it('refuses a version that is not semantic', () => {
      for (const version of ['1.0', 'v1.0.0', '1.0.0.0', 'latest', 1]) {
        expect(() => checkManifest(manifestWith({ version }), 'x.js'), String(version)).to.throw(PluginError, '"version" must be a semantic version');
      }
      expect(checkManifest(manifestWith({ version: '2.1.0-rc.1' }), 'x.js').version).to.equal('2.1.0-rc.1');
    });

    it('refuses a missing description or factory', () => {
      expect(() => checkManifest(manifestWith({ description: undefined }), 'x.js')).to.throw(PluginError, '"description" must be a string');
      expect(() => checkManifest(manifestWith({ factory: 'new Backend()' }), 'x.js')).to.throw(PluginError, '"factory" must be a function');
    });

    it('makes every refusal a 400 Bad Request', () => {
      const err = (() => {
        try {
          checkManifest(badKind, 'x.js');
        } catch (e) {
          return e;
        }
      })();
      expect(err).to.be.instanceOf(BadRequestError);
      expect(httpStatusOf(err)).to.equal(400);
    });
  });

  describe('checkBackend', () => {
    it('refuses a value that is not an object', () => {
      expect(() => checkBackend(null, notes)).to.throw(PluginError, 'plugin "notes" is unusable: its factory did not return a backend');
    });

    it('names the first backend method that is missing', () => {
      const partial = { prepare: () => undefined, execute: () => undefined, isUnauthenticated: () => false, help: () => undefined };
      expect(() => checkBackend(partial, notes)).to.throw(PluginError, 'its backend has no "describePaths" method');
    });
  });

  describe('register and get', () => {
    it('registers a plugin once, under its name', () => {
      const registry = new PluginRegistry();
      registry.register(notes);
      expect(registry.has('notes')).to.equal(true);
      expect(registry.get('notes', 'secret')).to.equal(notes);
      expect(registry.list()).to.deep.equal([notes]);
    });

    it('refuses a second plugin with a name already registered', () => {
      const registry = new PluginRegistry();
      registry.register(notes);
      expect(() => registry.register(manifestWith({ version: '9.9.9' }))).to.throw(PluginError, 'plugin "notes" is already registered');
      expect(registry.get('notes', 'secret').version).to.equal('1.2.3');
    });

    it('does not register a manifest it refuses', () => {
      const registry = new PluginRegistry();
      expect(() => registry.register(badKind, 'bad-kind.js')).to.throw(PluginError);
      expect(registry.has('bad-kind')).to.equal(false);
    });

    it('answers Vault\'s messages for an unknown type, by table', () => {
      const registry = new PluginRegistry();
      expect(() => registry.get('nope', 'secret')).to.throw(BadRequestError, 'unknown secrets engine type: nope');
      expect(() => registry.get('nope', 'auth')).to.throw(BadRequestError, 'unknown auth method type: nope');
    });

    it('does not hand out a secrets plugin as an auth method', () => {
      const registry = new PluginRegistry();
      registry.register(notes);
      expect(() => registry.get('notes', 'auth')).to.throw(BadRequestError, 'unknown auth method type: notes');
    });
  });

  describe('build', () => {
    it('builds and initializes a working plugin\'s backend', async () => {
      const registry = new PluginRegistry();
      const backend = await registry.build(registry.register(notes), context());
      expect(backend.describePaths().map((p) => p.pattern)).to.include('notes/:name+');
    });

    it('accepts a factory that returns a promise', async () => {
      const registry = new PluginRegistry();
      const lazy = manifestWith({ name: 'lazy', factory: async (ctx: PluginContext) => (notes as PluginManifest).factory(ctx) });
      const backend = await registry.build(registry.register(lazy), context());
      expect(typeof backend.prepare).to.equal('function');
    });

    it('reports a factory that throws, with the plugin\'s own message', async () => {
      const err = await buildError(factoryThrows);
      expect(err).to.be.instanceOf(PluginError);
      expect(err.message).to.equal('plugin "factory-throws" failed to start: cannot connect to the moon');
    });

    it('reports a factory whose result is not a backend', async () => {
      const err = await buildError(notABackend);
      expect(err).to.be.instanceOf(PluginError);
      expect(err.message).to.equal('plugin "not-a-backend" is unusable: its backend has no "prepare" method');
    });

    it('reports a backend whose paths are ambiguous', async () => {
      const err = await buildError(ambiguousPaths);
      expect(err).to.be.instanceOf(PluginError);
      expect(err.message).to.equal(
        'plugin "ambiguous-paths" failed to start: paths "items/:a" and "items/:b" are ambiguous (both match "items/x")',
      );
    });

    it('reports a backend whose initialize hook fails', async () => {
      const err = await buildError(initFails);
      expect(err).to.be.instanceOf(PluginError);
      expect(err.message).to.equal('plugin "init-fails" failed to initialize: storage schema is too new');
    });

    it('reports a factory that throws something that is not an Error', async () => {
      // eslint-disable-next-line @typescript-eslint/only-throw-error -- the case under test: a factory that throws something that is not an Error
      const err = await buildError(manifestWith({ name: 'odd', factory: () => { throw 'a string'; } }));
      expect(err.message).to.equal('plugin "odd" failed to start: a string');
    });
  });
});
