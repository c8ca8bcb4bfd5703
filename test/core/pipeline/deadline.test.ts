/**
 * max_request_duration: a handler that never settles, or settles too late, answers 504 naming the
 * deadline; what it would still write after the deadline is refused; an isolated plugin that
 * ignores the deadline is restarted, and other requests go on being served.
 */
import { expect } from 'chai';
import { FrameworkBackend, definePath, type PluginManifest } from '../../../sdk/index.js';
import { startUnsealedServer, tempDir } from '../../helpers/server.js';
import { echoSource, installModule } from '../../helpers/external-plugins.js';

/** How long a request may run in these tests: long enough for sys/init on a loaded machine. */
const DEADLINE_MS = 3000;

/** A plugin whose handlers hold on until the test lets them go. */
function stallPlugin(): { manifest: PluginManifest; release: () => void; secondWrite: Promise<string> } {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let reportSecond!: (outcome: string) => void;
  const secondWrite = new Promise<string>((resolve) => (reportSecond = resolve));
  const hang = definePath({
    pattern: 'hang',
    fields: {},
    operations: { read: { summary: 'Never answers.', handler: () => new Promise(() => undefined) } },
    synopsis: 'Hangs.',
    description: 'A handler whose promise never settles.',
  });
  const twoWrites = definePath({
    pattern: 'two-writes/:name',
    fields: { name: { type: 'string', description: 'Key.', required: true } },
    operations: {
      update: {
        summary: 'Writes, waits for the test, writes again.',
        handler: async (req, input) => {
          await req.storage.put(`first/${input.name}`, Buffer.from('1'));
          await released;
          try {
            await req.storage.put(`second/${input.name}`, Buffer.from('2'));
            reportSecond('written');
          } catch (err) {
            reportSecond((err as Error).message);
          }
          return null;
        },
      },
    },
    synopsis: 'Two writes.',
    description: 'A handler part way through its writes when its deadline passes.',
  });
  const list = definePath({
    pattern: 'keys/:folder',
    fields: { folder: { type: 'string', description: 'Folder.', required: true } },
    operations: { read: { summary: 'Stored keys.', handler: async (req, input) => ({ data: { keys: await req.storage.list(`${input.folder}/`) } }) } },
    synopsis: 'Keys.',
    description: 'What was stored.',
  });
  const manifest: PluginManifest = {
    name: 'stall',
    kind: 'secret',
    version: '1.0.0',
    description: 'Slow handlers (test plugin).',
    factory: () => new FrameworkBackend({ description: 'Slow handlers (test plugin).', paths: [hang, twoWrites, list] }),
  };
  return { manifest, release, secondWrite };
}

describe('request deadline (max_request_duration)', function () {
  this.timeout(60_000);

  describe('in-process handlers', () => {
    const stall = stallPlugin();
    let server: Awaited<ReturnType<typeof startUnsealedServer>>;

    before(async () => {
      server = await startUnsealedServer({ plugins: [stall.manifest], maxRequestDurationMs: DEADLINE_MS });
      expect((await server.client.post('sys/mounts/stall', { type: 'stall' })).status).to.equal(204);
    });

    after(async () => {
      stall.release();
      await server?.close();
    });

    it('answers a handler that never settles with 504 naming the deadline, and serves other requests meanwhile', async () => {
      const hung = server.client.get('stall/hang');
      expect((await server.client.get('sys/health')).status).to.equal(200);
      const answer = await hung;
      expect(answer.status).to.equal(504);
      expect(answer.body.errors[0]).to.equal("context deadline exceeded: the request ran longer than 3 s, the listener's max_request_duration");
    });

    it('refuses the writes a handler makes after its deadline, keeping those made before it', async () => {
      const answer = await server.client.post('stall/two-writes/a', {});
      expect(answer.status).to.equal(504);
      stall.release();
      expect(await stall.secondWrite).to.match(/^context deadline exceeded/);
      expect((await server.client.get('stall/keys/first')).body.data.keys).to.deep.equal(['a']);
      expect((await server.client.get('stall/keys/second')).body.data.keys).to.deep.equal([]);
    });
  });

  describe('isolated plugins', () => {
    let dir: { path: string; remove: () => Promise<void> };
    let server: Awaited<ReturnType<typeof startUnsealedServer>>;

    before(async () => {
      dir = await tempDir('keywarden-deadline-');
      server = await startUnsealedServer({ pluginDirectory: dir.path, maxRequestDurationMs: DEADLINE_MS });
      const sha256 = await installModule(dir.path, 'echo.mjs', echoSource());
      expect((await server.client.post('sys/plugins/catalog/secret/echo', { sha256, command: 'echo.mjs', version: 'v1.0.0' })).status).to.equal(204);
      expect((await server.client.post('sys/mounts/echo', { type: 'echo' })).status).to.equal(204);
    });

    after(async () => {
      await server?.close();
      await dir?.remove();
    });

    it('answers a handler that never settles with 504 and restarts the process that ignored the deadline', async () => {
      const before = (await server.client.get('echo/info')).body.data.pid as number;
      const answer = await server.client.get('echo/fail/hang');
      expect(answer.status).to.equal(504);
      expect(answer.body.errors[0]).to.match(/^context deadline exceeded: .*max_request_duration$/);
      const after = await server.client.get('echo/info');
      expect(after.status).to.equal(200);
      expect(after.body.data.pid).to.be.a('number').and.not.equal(before);
    });
  });
});
