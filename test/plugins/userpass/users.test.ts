/**
 * userpass users over HTTP: created with a password (kept only as a bcrypt hash) or a bcrypt hash
 * made elsewhere, the token_* fields and their deprecated names, the password and policies paths.
 */
import { expect } from 'chai';
import bcrypt from 'bcryptjs';
import { startUnsealedServer } from '../../helpers/server.js';
import type { TestClient } from '../../helpers/http.js';
import type { RunningServer } from '../../../core/server.js';

describe('userpass users', function () {
  this.timeout(60_000);
  let server: RunningServer & { client: TestClient };
  let root: TestClient;

  before(async () => {
    server = await startUnsealedServer({ plugins: [] });
    root = server.client;
    expect((await root.post('sys/auth/people', { type: 'userpass' })).status).to.equal(204);
  });
  after(() => server.close());

  const login = (username: string, password: string) => root.post(`auth/people/login/${username}`, { password }, { token: '' });

  it('creates a user with a password, reads back its token settings and never the password', async () => {
    const created = await root.post('auth/people/users/Alice', { password: 'correct horse', token_policies: 'dev,ops', token_ttl: '1h', token_max_ttl: '2h' });
    expect(created.status, created.text).to.equal(204);
    const read = await root.get('auth/people/users/alice');
    expect(read.body.data).to.deep.equal({
      token_bound_cidrs: [],
      token_explicit_max_ttl: 0,
      token_max_ttl: 7200,
      token_no_default_policy: false,
      token_num_uses: 0,
      token_period: 0,
      token_policies: ['dev', 'ops'],
      token_ttl: 3600,
      token_type: 'default',
    });
    expect(read.text).to.not.contain('correct horse');
    expect((await root.list('auth/people/users')).body.data.keys).to.deep.equal(['alice']);
  });

  it('stores a bcrypt hash of the password, never the password', async () => {
    await root.post('auth/people/users/hashed', { password: 'stored-as-hash-only' });
    const mount = (await root.get('sys/auth/people')).body.data.uuid as string;
    const raw = await server.host.barrier.get(`auth/${mount}/user/hashed`);
    const stored = JSON.parse(Buffer.from(raw!).toString('utf8')) as Record<string, unknown>;
    expect(JSON.stringify(stored)).to.not.contain('stored-as-hash-only');
    expect(stored.password_hash).to.match(/^\$2[aby]\$10\$/);
    expect(await bcrypt.compare('stored-as-hash-only', stored.password_hash as string)).to.equal(true);
  });

  it('refuses a user without a password, and one with both a password and a hash', async () => {
    const none = await root.post('auth/people/users/nopass', { token_policies: 'dev' });
    expect(none.status).to.equal(400);
    expect(none.body.errors).to.deep.equal(['must provide either password or password_hash']);
    const both = await root.post('auth/people/users/both', { password: 'a', password_hash: await bcrypt.hash('a', 5) });
    expect(both.body.errors).to.deep.equal(['only one of password or password_hash may be provided']);
    expect((await root.get('auth/people/users/nopass')).status).to.equal(404);
  });

  it('takes a bcrypt hash made elsewhere within cost 5 to 12, and refuses others', async () => {
    const hash = await bcrypt.hash('imported secret', 5);
    expect((await root.post('auth/people/users/imported', { password_hash: hash })).status).to.equal(204);
    expect((await login('imported', 'imported secret')).status).to.equal(200);
    const weak = await root.post('auth/people/users/weak', { password_hash: await bcrypt.hash('x', 4) });
    expect(weak.body.errors).to.deep.equal(['bcrypt cost of 4 is too low, want 5 at minimum']);
    const slow = await root.post('auth/people/users/slow', { password_hash: '$2b$13$' + 'a'.repeat(53) });
    expect(slow.body.errors).to.deep.equal(['bcrypt cost of 13 exceeds maximum cost of 12']);
    const garbage = await root.post('auth/people/users/garbage', { password_hash: 'not-a-hash' });
    expect(garbage.body.errors).to.deep.equal(['password_hash is not a valid bcrypt hash']);
  });

  it('refuses a password longer than the 72 bytes bcrypt reads', async () => {
    const long = await root.post('auth/people/users/long', { password: 'x'.repeat(73) });
    expect(long.status).to.equal(400);
    expect(long.body.errors).to.deep.equal(['password is longer than 72 bytes, the most bcrypt uses']);
  });

  it('updates only the fields sent: the password stays when only policies change', async () => {
    await root.post('auth/people/users/bob', { password: 'bob-pass', token_policies: 'a' });
    await root.post('auth/people/users/bob', { token_policies: 'b' });
    expect((await root.get('auth/people/users/bob')).body.data.token_policies).to.deep.equal(['b']);
    expect((await login('bob', 'bob-pass')).status).to.equal(200);
  });

  it('users/:username/password replaces the password', async () => {
    await root.post('auth/people/users/carol', { password: 'old-pass' });
    expect((await root.post('auth/people/users/carol/password', { password: 'new-pass' })).status).to.equal(204);
    expect((await login('carol', 'old-pass')).status).to.equal(400);
    expect((await login('carol', 'new-pass')).status).to.equal(200);
    const missing = await root.post('auth/people/users/nobody/password', { password: 'x' });
    expect(missing.status).to.equal(400);
    expect(missing.body.errors).to.deep.equal(['username does not exist']);
  });

  it('users/:username/policies replaces the policies, and echoes the deprecated name only while it is written', async () => {
    await root.post('auth/people/users/dave', { password: 'dave-pass' });
    await root.post('auth/people/users/dave/policies', { policies: 'Ops, dev' });
    let read = (await root.get('auth/people/users/dave')).body.data;
    expect(read.token_policies).to.deep.equal(['dev', 'ops']);
    expect(read.policies).to.deep.equal(['dev', 'ops']);
    await root.post('auth/people/users/dave/policies', { token_policies: 'audit' });
    read = (await root.get('auth/people/users/dave')).body.data;
    expect(read.token_policies).to.deep.equal(['audit']);
    expect(read).to.not.have.property('policies');
  });

  it('accepts the deprecated ttl, max_ttl and bound_cidrs and shows them under their names', async () => {
    await root.post('auth/people/users/erin', { password: 'erin-pass', ttl: '10m', max_ttl: '20m', bound_cidrs: '127.0.0.1/32' });
    const read = (await root.get('auth/people/users/erin')).body.data;
    expect(read).to.include({ token_ttl: 600, token_max_ttl: 1200, ttl: 600, max_ttl: 1200 });
    expect(read.token_bound_cidrs).to.deep.equal(['127.0.0.1/32']);
    expect(read.bound_cidrs).to.deep.equal(['127.0.0.1/32']);
  });

  it('refuses token settings Vault refuses, naming the field', async () => {
    const cidr = await root.post('auth/people/users/frank', { password: 'p', token_bound_cidrs: 'not-a-cidr' });
    expect(cidr.body.errors).to.deep.equal(['invalid CIDR block "not-a-cidr" in token_bound_cidrs']);
    const ttl = await root.post('auth/people/users/frank', { password: 'p', token_ttl: '2h', token_max_ttl: '1h' });
    expect(ttl.body.errors).to.deep.equal(["'token_ttl' cannot be greater than 'token_max_ttl'"]);
  });

  it('deletes a user', async () => {
    await root.post('auth/people/users/gone', { password: 'p' });
    expect((await root.delete('auth/people/users/gone')).status).to.equal(204);
    expect((await root.get('auth/people/users/gone')).status).to.equal(404);
  });
});
