/** `keywarden secrets move` and `auth move`, run as a user runs them, against a real server. */
import { expect } from 'chai';
import { runCli } from '../../../helpers/cli.js';
import { startUnsealedServer, tempDir } from '../../../helpers/server.js';
import type { TestClient } from '../../../helpers/http.js';
import type { RunningServer } from '../../../../core/server.js';
import notesPlugin from '../../../fixtures/plugins/notes.js';
import greeterPlugin from '../../../fixtures/plugins/greeter-auth.js';

describe('keywarden secrets move and auth move', function () {
  this.timeout(60_000);
  let server: RunningServer & { client: TestClient; rootToken: string };
  let home: { path: string; remove: () => Promise<void> };
  const cli = (args: string[]) => runCli(args, { PATH: process.env.PATH, HOME: home.path, KEYWARDEN_ADDR: server.address, VAULT_TOKEN: server.rootToken });
  const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';

  before(async () => {
    server = await startUnsealedServer({ plugins: [notesPlugin, greeterPlugin] });
    home = await tempDir();
  });
  after(async () => {
    await server.close();
    await home.remove();
  });

  it('secrets move moves the engine with its data and prints vault\'s two lines', async () => {
    await server.client.post('sys/mounts/old-notes', { type: 'notes' });
    await server.client.post('old-notes/notes/a', { text: 'kept' });
    const run = await cli(['secrets', 'move', 'old-notes', 'new-notes/']);
    expect(run.code, run.stderr).to.equal(0);
    expect(run.stdout).to.match(
      new RegExp(
        `^Started moving secrets engine old-notes/ to new-notes/, with migration ID (${UUID})\\n` +
          `Success! Finished moving secrets engine old-notes/ to new-notes/, with migration ID \\1\\n$`,
      ),
    );
    expect((await server.client.get('new-notes/notes/a')).body.data.text).to.equal('kept');
    expect((await server.client.get('old-notes/notes/a')).status).to.equal(404);
  });

  it('auth move takes paths with or without auth/, and tokens minted before keep working', async () => {
    await server.client.post('sys/auth/greet', { type: 'greeter' });
    const token = (await server.client.post('auth/greet/login', { user: 'ada' }, { token: '' })).body.auth.client_token as string;
    const run = await cli(['auth', 'move', 'greet', 'auth/greeters/']);
    expect(run.code, run.stderr).to.equal(0);
    expect(run.stdout).to.match(new RegExp(`^Started moving auth method auth/greet/ to auth/greeters/, with migration ID ${UUID}\\n`));
    expect(run.stdout).to.match(/Success! Finished moving auth method auth\/greet\/ to auth\/greeters\/, with migration ID /);
    expect((await server.client.get('sys/auth')).body.data).to.have.property('greeters/');
    const self = await server.client.get('auth/token/lookup-self', { token });
    expect(self.body.data.path).to.equal('auth/greeters/login');
  });

  it('a refused move exits 2 with the server\'s reason; a missing argument exits 1', async () => {
    await server.client.post('sys/mounts/stay', { type: 'notes' });
    await server.client.post('sys/mounts/occupied', { type: 'notes' });
    const run = await cli(['secrets', 'move', 'stay', 'occupied']);
    expect(run.code).to.equal(2);
    expect(run.stderr).to.match(/^Error moving secrets engine stay\/ to occupied\/: /);
    expect(run.stderr).to.contain('path is already in use at occupied/');
    expect(run.stdout).to.equal('');
    expect((await cli(['auth', 'move', 'only-one'])).code).to.equal(1);
  });
});
