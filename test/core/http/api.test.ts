/** The HTTP conventions Vault clients rely on, over a real listener. */
import { expect } from 'chai';
import { startTestServer, startUnsealedServer } from '../../helpers/server.js';
import { request, TestClient } from '../../helpers/http.js';
import type { RunningServer } from '../../../core/server.js';
import { SealedError } from '../../../core/errors.js';

describe('HTTP API', () => {
  let server: RunningServer & { client: TestClient; rootToken: string };
  let client: TestClient;

  before(async () => {
    server = await startUnsealedServer();
    client = server.client;
    const enabled = await client.post('sys/mounts/notes', { type: 'notes' });
    expect(enabled.status).to.equal(204);
  });
  after(() => server.close());

  describe('envelope', () => {
    it('answers a read in the Vault envelope with exactly application/json and no-store', async () => {
      await client.post('notes/notes/a', { text: 'hello', count: '3', pinned: 'true', ttl: '1h', tags: 'x, y' });
      const res = await client.get('notes/notes/a');
      expect(res.status).to.equal(200);
      expect(res.headers['content-type']).to.equal('application/json');
      expect(res.headers['cache-control']).to.equal('no-store');
      expect(res.headers['x-content-type-options']).to.equal('nosniff');
      expect(res.body).to.include.keys('request_id', 'lease_id', 'renewable', 'lease_duration', 'data', 'wrap_info', 'warnings', 'auth');
      expect(res.body.request_id).to.match(/^[0-9a-f-]{36}$/);
      expect(res.body.data).to.deep.equal({ text: 'hello', count: 3, pinned: true, ttl: 3600, tags: ['x', 'y'], created: true });
    });

    it('answers 204 with no body for a write that returns nothing', async () => {
      const res = await client.post('notes/notes/empty', { text: 'x' });
      expect(res.status).to.equal(204);
      expect(res.text).to.equal('');
    });

    it('uses create for a new resource and update for an existing one (existence check)', async () => {
      const first = await client.post('notes/notes/ex', { text: '1' });
      expect(first.status).to.equal(204);
      const second = await client.post('notes/notes/ex', { text: '2' });
      expect(second.status).to.equal(200);
      expect(second.body.data).to.deep.equal({ updated: true });
      expect((await client.get('notes/notes/ex')).body.data.created).to.equal(false);
    });

    it('answers 404 with an empty error list for a read that finds nothing', async () => {
      const res = await client.get('notes/notes/missing');
      expect(res.status).to.equal(404);
      expect(res.body).to.deep.equal({ errors: [] });
      expect(res.headers['content-type']).to.equal('application/json');
    });

    it('warns about unrecognized parameters and then answers 200 instead of 204', async () => {
      const res = await client.post('notes/notes/w', { text: 'x', bogus: 1, other: 'y' });
      expect(res.status).to.equal(200);
      expect(res.body.warnings).to.deep.equal(['Endpoint ignored these unrecognized parameters: [bogus other]']);
    });

    it('copies data to the top level for sys/mounts, as clients expect', async () => {
      const res = await client.get('sys/mounts');
      expect(res.body.data['notes/'].type).to.equal('notes');
      expect(res.body['notes/'].type).to.equal('notes');
    });
  });

  describe('methods', () => {
    before(async () => {
      await client.post('notes/notes/dir/one', { text: '1' });
      await client.post('notes/notes/two', { text: '2' });
    });

    it('lists with the LIST verb, folders ending in a slash', async () => {
      const res = await client.list('notes/notes');
      expect(res.status).to.equal(200);
      expect(res.body.data.keys).to.include.members(['dir/', 'two']);
    });

    it('refuses the internal X-Keywarden-Method header from a client rather than take a GET for a LIST', async () => {
      await client.post('notes/notes/m', { text: 'm' });
      for (const value of ['LIST', 'list', 'LIST 00000000000000000000000000000000']) {
        const res = await client.get('notes/notes/', { headers: { 'X-Keywarden-Method': value } });
        expect(res.status, value).to.equal(400);
        expect(res.body.errors[0]).to.contain('X-Keywarden-Method');
      }
      const listed = await client.list('notes/notes/', { headers: { 'X-Keywarden-Method': 'LIST' } });
      expect(listed.status).to.equal(400);
      expect((await client.list('notes/notes/')).body.data.keys).to.include('m');
    });

    it('answers every error with nosniff too', async () => {
      const res = await client.get('nothing/here');
      expect(res.status).to.equal(404);
      expect(res.headers['x-content-type-options']).to.equal('nosniff');
    });

    it('lists with GET ?list=true, ?list=1 and ?list=True', async () => {
      for (const flag of ['true', '1', 'True']) {
        const res = await client.get(`notes/notes/?list=${flag}`);
        expect(res.status, flag).to.equal(200);
        expect(res.body.data.keys).to.include('two');
      }
    });

    it('refuses a list flag that is not a boolean', async () => {
      const res = await client.get('notes/notes/?list=maybe');
      expect(res.status).to.equal(400);
    });

    it('answers 404 with an empty error list for an empty LIST', async () => {
      const other = await client.post('sys/mounts/empty-notes', { type: 'notes' });
      expect(other.status).to.equal(204);
      const res = await client.list('empty-notes/notes');
      expect(res.status).to.equal(404);
      expect(res.body).to.deep.equal({ errors: [] });
    });

    it('keeps LIST working on a keep-alive connection after other requests', async () => {
      const http = await import('node:http');
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      const send = (method: string, path: string) =>
        new Promise<number>((resolve, reject) => {
          const req = http.request(new URL(`/v1/${path}`, server.address), { method, agent, headers: { 'X-Vault-Token': server.rootToken } }, (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          });
          req.on('error', reject);
          req.end();
        });
      const statuses = [];
      for (const [method, path] of [['GET', 'notes/notes/two'], ['LIST', 'notes/notes'], ['GET', 'notes/notes/two'], ['LIST', 'notes/notes']] as const) {
        statuses.push(await send(method, path));
      }
      agent.destroy();
      expect(statuses).to.deep.equal([200, 200, 200, 200]);
    });

    it('treats PUT like POST', async () => {
      expect((await client.put('notes/notes/put', { text: 'p' })).status).to.equal(204);
      expect((await client.get('notes/notes/put')).body.data.text).to.equal('p');
    });

    it('deletes with DELETE', async () => {
      await client.post('notes/notes/gone', { text: 'x' });
      expect((await client.delete('notes/notes/gone')).status).to.equal(204);
      expect((await client.get('notes/notes/gone')).status).to.equal(404);
    });

    it('answers 405 for an operation the path does not support', async () => {
      const res = await client.delete('notes/state');
      expect(res.status).to.equal(405);
      expect(res.body.errors).to.have.length(1);
    });

    it('answers 405 for an unknown HTTP method', async () => {
      const res = await client.send('OPTIONS', 'notes/state');
      expect(res.status).to.equal(405);
      expect(res.headers['content-type']).to.equal('application/json');
    });

    it('answers 415 for PATCH without a merge-patch content type', async () => {
      const res = await client.send('PATCH', 'notes/notes/two', { body: { text: 'x' }, headers: { 'Content-Type': 'application/json' } });
      expect(res.status).to.equal(415);
    });
  });

  describe('bodies', () => {
    it('accepts form-encoded bodies', async () => {
      const res = await client.post('notes/notes/form', undefined, {
        rawBody: 'text=from+a+form&count=7&pinned=1',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      });
      expect(res.status).to.equal(204);
      const read = await client.get('notes/notes/form');
      expect(read.body.data).to.include({ text: 'from a form', count: 7, pinned: true });
    });

    it('parses JSON whatever the Content-Type says', async () => {
      const res = await client.post('notes/notes/typed', undefined, { rawBody: '{"text":"json"}', headers: { 'Content-Type': 'text/plain' } });
      expect(res.status).to.equal(204);
      expect((await client.get('notes/notes/typed')).body.data.text).to.equal('json');
    });

    it('treats null and empty strings as unset, so defaults apply', async () => {
      await client.post('notes/notes/nulls', { text: null, count: '', pinned: null });
      const read = await client.get('notes/notes/nulls');
      expect(read.body.data).to.include({ text: '', count: 0, pinned: false });
    });

    it('refuses malformed JSON with 400 saying so', async () => {
      const res = await client.post('notes/notes/bad', undefined, { rawBody: '{"text": ' });
      expect(res.status).to.equal(400);
      expect(res.body.errors[0]).to.match(/failed to parse JSON input/);
    });

    it('refuses a body that is not an object', async () => {
      const res = await client.post('notes/notes/bad', undefined, { rawBody: '[1,2]' });
      expect(res.status).to.equal(400);
    });

    it('refuses a wrongly typed field with 400 naming it', async () => {
      const res = await client.post('notes/notes/bad', { count: 'many' });
      expect(res.status).to.equal(400);
      expect(res.body.errors[0]).to.match(/count/);
    });

    it('refuses a path with a parent reference', async () => {
      for (const path of ['notes/notes/../state', 'notes/notes/%2E%2E/state']) {
        const res = await client.get(path);
        expect(res.status, path).to.equal(400);
        expect(res.body.errors).to.deep.equal(['path cannot contain parent references']);
      }
    });
  });

  describe('size limit', () => {
    let small: RunningServer & { client: TestClient; rootToken: string };
    before(async () => {
      small = await startUnsealedServer({ maxRequestSize: 1024 });
      await small.client.post('sys/mounts/notes', { type: 'notes' });
    });
    after(() => small.close());

    it('answers 413 for a body over max_request_size', async () => {
      const res = await small.client.post('notes/notes/big', { text: 'x'.repeat(2048) });
      expect(res.status).to.equal(413);
      expect(res.body.errors).to.have.length(1);
    });

    it('accepts a body under the limit', async () => {
      expect((await small.client.post('notes/notes/ok', { text: 'x'.repeat(100) })).status).to.equal(204);
    });
  });

  describe('tokens', () => {
    it('accepts the token in X-Vault-Token, X-Service-Token and Authorization: Bearer', async () => {
      const anon = new TestClient(server.address);
      const variants: Record<string, string>[] = [
        { 'X-Vault-Token': server.rootToken },
        { 'X-Service-Token': server.rootToken },
        { Authorization: `Bearer ${server.rootToken}` },
      ];
      for (const headers of variants) {
        const res = await anon.get('notes/state', { headers });
        expect(res.status, JSON.stringify(Object.keys(headers))).to.equal(200);
      }
    });

    it('answers 403 without a token and with an unknown token', async () => {
      const anon = new TestClient(server.address);
      expect((await anon.get('notes/state')).status).to.equal(403);
      const bad = await anon.get('notes/state', { token: 'hvs.notatokenatallreally1' });
      expect(bad.status).to.equal(403);
      expect(bad.body.errors).to.deep.equal(['permission denied']);
    });

    it('lets an unauthenticated path through without a token, and ignores a bad one there', async () => {
      const anon = new TestClient(server.address);
      expect((await anon.get('notes/open')).status).to.equal(200);
      expect((await anon.get('notes/open', { token: 'nonsense' })).status).to.equal(200);
    });
  });

  describe('routing and help', () => {
    it('answers 404 for a path no mount serves', async () => {
      const res = await client.get('nowhere/at/all');
      expect(res.status).to.equal(404);
      expect(res.body.errors[0]).to.match(/no handler for route/);
    });

    it('answers 404 for a path outside /v1/', async () => {
      const res = await request(server.address, 'GET', '/v2/sys/health');
      expect(res.status).to.equal(404);
      expect(res.headers['content-type']).to.equal('application/json');
    });

    it('answers 404 for an unknown path inside a mount', async () => {
      expect((await client.get('notes/nothing-here')).status).to.equal(404);
    });

    it('returns help for ?help=1', async () => {
      const res = await client.get('notes/notes/a?help=1');
      expect(res.status).to.equal(200);
      expect(res.body.help).to.contain('The note text.');
      expect(res.body.openapi).to.be.an('object');
    });
  });
});

describe('HTTP API while sealed', () => {
  let server: RunningServer & { client: TestClient };
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.close());

  it('reports not initialized through sys/init and sys/health (501)', async () => {
    expect((await server.client.get('sys/init')).body).to.deep.equal({ initialized: false });
    const health = await server.client.get('sys/health');
    expect(health.status).to.equal(501);
    expect(health.body.initialized).to.equal(false);
  });

  it('answers 503 "Vault is sealed" for everything but the seal endpoints', async () => {
    const init = await server.client.put('sys/init', { secret_shares: 1, secret_threshold: 1 });
    expect(init.status).to.equal(200);
    for (const path of ['sys/mounts', 'notes/state', 'sys/key-status']) {
      const res = await server.client.get(path, { token: init.body.root_token });
      expect(res.status, path).to.equal(503);
      expect(res.body).to.deep.equal({ errors: [new SealedError().message] });
    }
    expect((await server.client.get('sys/seal-status')).body.sealed).to.equal(true);
    expect((await server.client.get('sys/leader')).status).to.equal(200);
    const health = await server.client.get('sys/health');
    expect(health.status).to.equal(503);
    const head = await server.client.send('HEAD', 'sys/health');
    expect(head.status).to.equal(503);
    expect(head.text).to.equal('');
  });

  it('honours health code overrides', async () => {
    const res = await server.client.get('sys/health?sealedcode=299');
    expect(res.status).to.equal(299);
  });
});
