/** sys/internal/specs/openapi: every path of every mounted plugin, every field described. */
import { expect } from 'chai';
import { startUnsealedServer } from '../../helpers/server.js';
import { TestClient } from '../../helpers/http.js';
import type { RunningServer } from '../../../core/server.js';
import type { PathHelp } from '../../../core/framework/help.js';
import notesPlugin from '../../fixtures/plugins/notes.js';
import greeterPlugin from '../../fixtures/plugins/greeter-auth.js';

describe('OpenAPI document', () => {
  let server: RunningServer & { client: TestClient; rootToken: string };

  before(async () => {
    server = await startUnsealedServer({ plugins: [notesPlugin, greeterPlugin] });
    await server.client.post('sys/mounts/crypto/eu', { type: 'transit' });
    await server.client.post('sys/mounts/notes', { type: 'notes' });
    await server.client.post('sys/auth/greet', { type: 'greeter' });
  });
  after(() => server.close());

  it('lists every path of every mount, with every field described and typed', async () => {
    const res = await server.client.get('sys/internal/specs/openapi');
    expect(res.status).to.equal(200);
    expect(res.body.openapi).to.equal('3.0.2');
    const paths = res.body.paths as Record<string, any>;  
    const table = server.host.mounts!;
    let checked = 0;
    for (const entry of [...table.entries('secret'), ...table.entries('auth')]) {
      const live = table.live(entry.table, entry.path);
      const described: readonly PathHelp[] = entry.path === 'sys/' ? [] : (live.backend?.describePaths() ?? []);
      for (const path of described) {
        const item = paths[`/${live.routePrefix}${path.openApiPath}`];
        expect(item, `${live.routePrefix}${path.openApiPath}`).to.be.an('object');
        for (const [name, field] of Object.entries(path.fields)) {
          expect(field.description, `${path.pattern} ${name}`).to.be.a('string').and.not.equal('');
          const inDoc = field.inPath
            ? item.parameters.find((p: { name: string }) => p.name === name)
            : (item.post?.requestBody?.content['application/json'].schema.properties[name] ??
              (item.get?.parameters ?? []).find((p: { name: string }) => p.name === name) ??
              (item.delete?.parameters ?? []).find((p: { name: string }) => p.name === name));
          expect(inDoc, `${path.pattern} field ${name}`).to.not.equal(undefined);
          checked++;
        }
      }
    }
    expect(checked).to.be.greaterThan(50);
    expect(paths['/transit/encrypt/{name}'] ?? paths['/crypto/eu/keys/{name}']).to.be.an('object');
    expect(paths['/sys/mounts/{path}']).to.be.an('object');
    expect(paths['/auth/token/create'].post.summary).to.be.a('string');
  });

  it('lists only unauthenticated paths without a token', async () => {
    const res = await new TestClient(server.address).get('sys/internal/specs/openapi');
    const keys = Object.keys(res.body.paths);
    expect(keys).to.include('/sys/health');
    expect(keys).to.include('/auth/greet/login');
    expect(keys).to.not.include('/sys/mounts');
    for (const key of keys) expect(res.body.paths[key]['x-vault-unauthenticated'], key).to.equal(true);
  });

  it('answers ?help=1 on any path with its help', async () => {
    const res = await server.client.get('crypto/eu/keys/anything?help=1');
    expect(res.body.help).to.contain('## keys/:name');
    expect(res.body.help).to.contain('auto_rotate_period');
  });
});
