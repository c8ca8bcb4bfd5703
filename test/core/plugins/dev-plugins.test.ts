import { expect } from 'chai';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PluginError, PluginRegistry } from '../../../core/plugins/registry.js';
import { loadPluginDirectory, loadPluginFile } from '../../../core/plugins/dev-plugins.js';

/** The compiled fixtures, next to this compiled test. */
const brokenDir = fileURLToPath(new URL('../../fixtures/broken-plugins/', import.meta.url));
const pluginsDir = fileURLToPath(new URL('../../fixtures/plugins/', import.meta.url));

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    return err as Error;
  }
  expect.fail('expected a rejection');
}

describe('dev-mode plugin loader (-dev-plugin-dir)', () => {
  describe('loadPluginFile', () => {
    it('imports a module and registers its default export', async () => {
      const registry = new PluginRegistry();
      const manifest = await loadPluginFile(registry, path.join(pluginsDir, 'notes.js'));
      expect(manifest.name).to.equal('notes');
      expect(registry.get('notes', 'secret')).to.equal(manifest);
    });

    it('reports a module that throws while it is imported, with the file and the reason', async () => {
      const file = path.join(brokenDir, 'throws-at-import.js');
      const err = await rejection(loadPluginFile(new PluginRegistry(), file));
      expect(err).to.be.instanceOf(PluginError);
      expect(err.message).to.equal(`plugin from ${file} is unusable: it failed to load: this plugin module cannot be imported`);
    });

    it('reports a file that does not exist', async () => {
      const file = path.join(brokenDir, 'no-such-plugin.js');
      const err = await rejection(loadPluginFile(new PluginRegistry(), file));
      expect(err).to.be.instanceOf(PluginError);
      expect(err.message).to.match(new RegExp(`^plugin from ${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} is unusable: it failed to load: `));
    });

    it('reports a manifest that fails its check, naming the file', async () => {
      const file = path.join(brokenDir, 'no-name.js');
      const err = await rejection(loadPluginFile(new PluginRegistry(), file));
      expect(err).to.be.instanceOf(PluginError);
      expect(err.message).to.equal(`plugin from ${file} is unusable: "name" must be lower-case letters, digits and "-"`);
    });
  });

  describe('loadPluginDirectory', () => {
    it('loads the usable modules and reports each broken one without stopping', async () => {
      const registry = new PluginRegistry();
      const report = await loadPluginDirectory(registry, brokenDir);
      // These pass the manifest check; they fail later, when a mount builds them.
      expect(report.loaded.map((m) => m.name)).to.deep.equal(['ambiguous-paths', 'factory-throws', 'init-fails', 'not-a-backend']);
      expect(report.failed.map((f) => path.basename(f.file))).to.deep.equal(['bad-kind.js', 'no-name.js', 'throws-at-import.js']);
      expect(registry.list().map((m) => m.name).sort()).to.deep.equal(['ambiguous-paths', 'factory-throws', 'init-fails', 'not-a-backend']);
    });

    it('says in each failure why the module was refused', async () => {
      const report = await loadPluginDirectory(new PluginRegistry(), brokenDir);
      const why = Object.fromEntries(report.failed.map((f) => [path.basename(f.file), f.error]));
      expect(why['bad-kind.js']).to.include('"kind" must be "secret" or "auth"');
      expect(why['no-name.js']).to.include('"name" must be lower-case letters');
      expect(why['throws-at-import.js']).to.include('it failed to load: this plugin module cannot be imported');
    });

    it('reads only .js files (not source maps)', async () => {
      const report = await loadPluginDirectory(new PluginRegistry(), brokenDir);
      const files = [...report.loaded.map((m) => m.name), ...report.failed.map((f) => f.file)];
      expect(files.filter((f) => f.endsWith('.map'))).to.deep.equal([]);
      expect(report.loaded.length + report.failed.length).to.equal(7);
    });

    it('reports a module whose plugin name is already registered and keeps the first', async () => {
      const registry = new PluginRegistry();
      const first = await loadPluginFile(registry, path.join(pluginsDir, 'notes.js'));
      const report = await loadPluginDirectory(registry, pluginsDir);
      const failure = report.failed.find((f) => path.basename(f.file) === 'notes.js');
      expect(failure?.error).to.equal('plugin "notes" is already registered');
      expect(registry.get('notes', 'secret')).to.equal(first);
    });

    it('fails as a whole when the directory does not exist', async () => {
      const err = await rejection(loadPluginDirectory(new PluginRegistry(), path.join(brokenDir, 'missing')));
      expect((err as NodeJS.ErrnoException).code).to.equal('ENOENT');
    });
  });
});
