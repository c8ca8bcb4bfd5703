/**
 * What a caller may ask of auth/token/create, create-orphan and create/:role, field by field, as
 * Vault's token store decides it; and the reserved policy names. All over HTTP.
 */
import { expect } from 'chai';
import { startUnsealedServer } from '../../helpers/server.js';
import { TestClient, createToken, type TestResponse } from '../../helpers/http.js';
import type { RunningServer } from '../../../core/server.js';
import notesPlugin from '../../fixtures/plugins/notes.js';
import greeterPlugin from '../../fixtures/plugins/greeter-auth.js';

describe('token creation rules', () => {
  let server: RunningServer & { client: TestClient; rootToken: string };
  let root: TestClient;

  const as = (token: string) => new TestClient(server.address, token);
  const created = (res: TestResponse): string => {
    expect(res.status, res.text).to.equal(200);
    return res.body.auth.client_token as string;
  };
  const tokenWith = (body: Record<string, unknown>): Promise<string> => createToken(root, body);
  const lookup = async (token: string): Promise<Record<string, any>> => {  
    const res = await root.post('auth/token/lookup', { token });
    expect(res.status, res.text).to.equal(200);
    return res.body.data;
  };
  const refusal = (res: TestResponse, status = 400): string => {
    expect(res.status, res.text).to.equal(status);
    return res.body.errors[0] as string;
  };
  const role = async (name: string, body: Record<string, unknown>) => {
    const res = await root.post(`auth/token/roles/${name}`, body);
    expect(res.status, res.text).to.equal(204);
  };

  before(async () => {
    server = await startUnsealedServer({ plugins: [notesPlugin, greeterPlugin] });
    root = server.client;
    const policies: Record<string, string> = {
      creator: 'path "auth/token/create*" { capabilities = ["update"] }',
      'sudo-creator': 'path "auth/token/create*" { capabilities = ["update", "sudo"] }',
      'r1-only': 'path "auth/token/create/r1" { capabilities = ["update"] }',
      'role-user': 'path "auth/token/create/*" { capabilities = ["update"] }',
      other: 'path "notes/*" { capabilities = ["read"] }',
    };
    for (const [name, text] of Object.entries(policies)) expect((await root.put(`sys/policy/${name}`, { policy: text })).status).to.equal(204);
  });
  after(() => server.close());

  describe('a role cannot lift what needs sudo (finding: orphan periodic tokens through a role)', () => {
    let parent: string;
    before(async () => {
      await role('r1', { token_max_ttl: '60s', orphan: false });
      parent = await tokenWith({ policies: ['r1-only'], ttl: '1h' });
    });

    it('refuses period on a role path to a caller without sudo, with Vault\'s message', async () => {
      const res = await as(parent).post('auth/token/create/r1', { period: '24h', no_parent: true });
      expect(refusal(res)).to.equal('root or sudo privileges required to create periodic token');
    });

    it('ignores no_parent on a role path: the role\'s orphan flag decides, and the child dies with its parent', async () => {
      const child = created(await as(parent).post('auth/token/create/r1', { no_parent: true }));
      const data = await lookup(child);
      expect(data.orphan).to.equal(false);
      expect(data.ttl).to.be.at.most(60);
      expect((await root.post('auth/token/revoke', { token: parent })).status).to.equal(204);
      expect((await as(child).get('auth/token/lookup-self')).status).to.equal(403);
    });

    it('applies a role\'s token_period without sudo, and the lesser of it and a sudo caller\'s period', async () => {
      await role('periodic', { token_period: '1h' });
      const user = await tokenWith({ policies: ['role-user'] });
      expect((await lookup(created(await as(user).post('auth/token/create/periodic', {})))).period).to.equal(3600);
      const both = await root.post('auth/token/create/periodic', { period: '30m' });
      expect((await lookup(created(both))).period).to.equal(1800);
      expect(both.body.warnings).to.include('Period specified both during creation call and in role; using the lesser value of 1800 seconds');
    });

    it('makes an orphan through a role only when the role says orphan', async () => {
      await role('orphans', { orphan: true });
      const user = await tokenWith({ policies: ['role-user'], ttl: '1h' });
      const child = created(await as(user).post('auth/token/create/orphans', {}));
      expect((await lookup(child)).orphan).to.equal(true);
    });
  });

  describe('lifetimes', () => {
    it('caps explicit_max_ttl by the role\'s token_explicit_max_ttl, with Vault\'s warning', async () => {
      await role('capped', { token_explicit_max_ttl: '2h' });
      const res = await root.post('auth/token/create/capped', { explicit_max_ttl: '3h' });
      expect((await lookup(created(res))).explicit_max_ttl).to.equal(7200);
      expect(res.body.warnings).to.include('Explicit max TTL specified both during creation call and in role; using the lesser value of 7200 seconds');
      expect((await lookup(await tokenWith({ explicit_max_ttl: '1h', policies: ['other'] }))).explicit_max_ttl).to.equal(3600);
    });

    it('caps ttl by the role\'s token_max_ttl and by the parent\'s remaining life', async () => {
      await role('short', { token_max_ttl: '60s' });
      expect((await root.post('auth/token/create/short', { ttl: '2h' })).body.auth.lease_duration).to.equal(60);
      const parent = await tokenWith({ policies: ['creator'], ttl: '1h' });
      const res = await as(parent).post('auth/token/create', { ttl: '5h' });
      expect(res.body.auth.lease_duration).to.be.within(3590, 3600);
    });

    it('caps ttl by the token mount\'s max_lease_ttl', async () => {
      expect((await root.post('sys/auth/token/tune', { max_lease_ttl: '2h' })).status).to.equal(204);
      try {
        expect((await root.post('auth/token/create', { policies: ['other'], ttl: '5h' })).body.auth.lease_duration).to.equal(7200);
      } finally {
        await root.post('sys/auth/token/tune', { max_lease_ttl: 0 });
      }
    });

    it('refuses period on auth/token/create without sudo (400) and grants it with sudo', async () => {
      const plain = await tokenWith({ policies: ['creator'] });
      expect(refusal(await as(plain).post('auth/token/create', { period: '1h' }))).to.equal('root or sudo privileges required to create periodic token');
      const sudo = await tokenWith({ policies: ['sudo-creator'] });
      expect((await lookup(created(await as(sudo).post('auth/token/create', { period: '1h' })))).period).to.equal(3600);
    });

    it('refuses a non-expiring root token from an expiring root token', async () => {
      const expiring = await tokenWith({ policies: ['root'], ttl: '1h' });
      expect(refusal(await as(expiring).post('auth/token/create', { policies: ['root'] }))).to.equal(
        'expiring root tokens cannot create non-expiring root tokens',
      );
      expect((await as(expiring).post('auth/token/create', { policies: ['root'], ttl: '10m' })).status).to.equal(200);
    });
  });

  describe('orphans and custom ids', () => {
    it('refuses no_parent on auth/token/create without sudo (400, Vault\'s message) and honours it with sudo', async () => {
      const plain = await tokenWith({ policies: ['creator'] });
      expect(refusal(await as(plain).post('auth/token/create', { no_parent: true }))).to.equal('root or sudo privileges required to create orphan token');
      const sudo = await tokenWith({ policies: ['sudo-creator'] });
      expect((await lookup(created(await as(sudo).post('auth/token/create', { no_parent: true })))).orphan).to.equal(true);
    });

    it('makes an orphan on create-orphan with update alone, but still wants sudo for no_parent there', async () => {
      const plain = await tokenWith({ policies: ['creator'] });
      expect((await lookup(created(await as(plain).post('auth/token/create-orphan', {})))).orphan).to.equal(true);
      expect(refusal(await as(plain).post('auth/token/create-orphan', { no_parent: true }))).to.equal('root or sudo privileges required to create orphan token');
    });

    it('lets only root or sudo choose the id (400 otherwise), never with a "." and never twice', async () => {
      const plain = await tokenWith({ policies: ['creator'] });
      expect(refusal(await as(plain).post('auth/token/create', { id: 'chosen-by-plain' }))).to.equal('root or sudo privileges required to specify token id');
      const sudo = await tokenWith({ policies: ['sudo-creator'] });
      expect(created(await as(sudo).post('auth/token/create', { id: 'chosen-by-sudo' }))).to.equal('chosen-by-sudo');
      expect(refusal(await as(sudo).post('auth/token/create', { id: 'chosen-by-sudo' }))).to.equal('cannot create a token with a duplicate ID');
      expect(refusal(await root.post('auth/token/create', { id: 'hvs.chosen' }))).to.equal("custom token ID cannot have a '.' in the value");
    });
  });

  describe('policies', () => {
    it('keeps a child without sudo inside its parent\'s policies, default included', async () => {
      const noDefault = await tokenWith({ policies: ['creator'], no_default_policy: true });
      const inherited = await as(noDefault).post('auth/token/create', {});
      expect(inherited.body.auth.policies).to.deep.equal(['creator']);
      expect((await as(noDefault).post('auth/token/create', { policies: ['creator'] })).body.auth.policies).to.deep.equal(['creator']);
      expect(refusal(await as(noDefault).post('auth/token/create', { policies: ['default'] }))).to.equal('child policies must be subset of parent');
      expect(refusal(await as(noDefault).post('auth/token/create', { policies: ['other'] }))).to.equal('child policies must be subset of parent');
      const withDefault = await tokenWith({ policies: ['creator'] });
      expect((await as(withDefault).post('auth/token/create', { policies: ['creator'] })).body.auth.policies).to.deep.equal(['creator', 'default']);
    });

    it('lets sudo give any policies, and no_default_policy removes default even when asked for', async () => {
      const sudo = await tokenWith({ policies: ['sudo-creator'] });
      expect((await as(sudo).post('auth/token/create', { policies: ['other'] })).body.auth.policies).to.deep.equal(['default', 'other']);
      const stripped = await as(sudo).post('auth/token/create', { policies: ['other', 'default'], no_default_policy: true });
      expect(stripped.body.auth.policies).to.deep.equal(['other']);
    });

    it('gives the root policy only from a root parent (400, also to sudo)', async () => {
      const sudo = await tokenWith({ policies: ['sudo-creator'] });
      expect(refusal(await as(sudo).post('auth/token/create', { policies: ['root'] }))).to.equal('root tokens may not be created without parent token being root');
    });

    it('checks a role\'s allowed_policies and allowed_policies_glob instead of the caller\'s policies', async () => {
      await role('allowing', { allowed_policies: ['other'], allowed_policies_glob: ['team-*'] });
      const user = await tokenWith({ policies: ['role-user'] });
      expect((await as(user).post('auth/token/create/allowing', {})).body.auth.policies).to.deep.equal(['default', 'other']);
      expect((await as(user).post('auth/token/create/allowing', { policies: ['team-blue'] })).body.auth.policies).to.deep.equal(['default', 'team-blue']);
      expect(refusal(await as(user).post('auth/token/create/allowing', { policies: ['creator'] }))).to.equal(
        'token policies (["creator" "default"]) must be subset of the role\'s allowed policies (["default" "other"]) or glob policies (["team-*"])',
      );
    });

    it('refuses a role\'s disallowed_policies and disallowed_policies_glob, default included', async () => {
      await role('disallowing', { allowed_policies: ['other', 'admin-1', 'secret-x'], disallowed_policies: ['secret-x'], disallowed_policies_glob: ['admin-*'] });
      expect(refusal(await root.post('auth/token/create/disallowing', { policies: ['admin-1'] }))).to.equal('token policy "admin-1" is disallowed by this role');
      expect(refusal(await root.post('auth/token/create/disallowing', { policies: ['secret-x'] }))).to.equal('token policy "secret-x" is disallowed by this role');
      await role('no-default', { allowed_policies: ['other'], disallowed_policies: ['default'] });
      expect((await root.post('auth/token/create/no-default', {})).body.auth.policies).to.deep.equal(['other']);
    });

    it('lets a role with only disallowed policies grant others the caller lacks, as Vault does', async () => {
      await role('deny-list', { disallowed_policies: ['sudo-creator'] });
      const user = await tokenWith({ policies: ['role-user'] });
      expect((await as(user).post('auth/token/create/deny-list', { policies: ['other'] })).body.auth.policies).to.deep.equal(['default', 'other']);
      expect(refusal(await as(user).post('auth/token/create/deny-list', { policies: ['sudo-creator'] }))).to.equal(
        'token policy "sudo-creator" is disallowed by this role',
      );
    });

    it('keeps the subset rule on a role without policy rules, and honours its token_no_default_policy', async () => {
      await role('plain', { token_no_default_policy: true });
      const user = await tokenWith({ policies: ['role-user'] });
      expect(refusal(await as(user).post('auth/token/create/plain', { policies: ['other'] }))).to.equal('child policies must be subset of parent');
      expect((await as(user).post('auth/token/create/plain', {})).body.auth.policies).to.deep.equal(['role-user']);
    });
  });

  describe('reserved policies', () => {
    it('assigns response-wrapping or control-group to no token, not even from root or through a role', async () => {
      expect(refusal(await root.post('auth/token/create', { policies: ['response-wrapping'] }))).to.equal('cannot assign policy "response-wrapping"');
      expect(refusal(await root.post('auth/token/create', { policies: ['Control-Group'] }))).to.equal('cannot assign policy "control-group"');
      await role('wrapping', { allowed_policies: ['response-wrapping'] });
      expect(refusal(await root.post('auth/token/create/wrapping', {}))).to.equal('cannot assign policy "response-wrapping"');
    });

    it('lets no login carry a reserved policy or the root policy', async () => {
      await root.post('sys/auth/greeter', { type: 'greeter' });
      const anon = new TestClient(server.address);
      expect(refusal(await anon.post('auth/greeter/login', { user: 'mallory', policies: 'response-wrapping' }))).to.equal('cannot assign policy "response-wrapping"');
      expect(refusal(await anon.post('auth/greeter/login', { user: 'mallory', policies: 'root' }))).to.equal('auth methods cannot create root tokens');
    });

    for (const prefix of ['sys/policy', 'sys/policies/acl']) {
      it(`refuses writing or deleting a reserved name through ${prefix}`, async () => {
        const text = { policy: 'path "sys/*" { capabilities = ["sudo", "update"] }' };
        expect(refusal(await root.put(`${prefix}/response-wrapping`, text))).to.equal('cannot update "response-wrapping" policy');
        expect(refusal(await root.put(`${prefix}/Control-Group`, text))).to.equal('cannot update "control-group" policy');
        expect(refusal(await root.delete(`${prefix}/response-wrapping`))).to.equal('cannot delete "response-wrapping" policy');
        expect(refusal(await root.delete(`${prefix}/control-group`))).to.equal('cannot delete "control-group" policy');
      });
    }

    it('reads response-wrapping as its fixed text and never lists it', async () => {
      const read = await root.get('sys/policy/response-wrapping');
      expect(read.status).to.equal(200);
      expect(read.body.data.rules).to.contain('cubbyhole/response');
      expect((await root.get('sys/policy')).body.data.policies).to.not.include('response-wrapping');
    });
  });

  describe('uses, type, CIDRs, entity, display name', () => {
    it('refuses children of a token with a use count, with Vault\'s message', async () => {
      const limited = await tokenWith({ policies: ['creator'], num_uses: 5 });
      expect(refusal(await as(limited).post('auth/token/create', {}))).to.equal('restricted use token cannot generate child tokens');
    });

    it('caps num_uses by the role\'s token_num_uses, and uses it when none is asked for', async () => {
      await role('uses', { token_num_uses: 5 });
      expect((await root.post('auth/token/create/uses', { num_uses: 3 })).body.auth.num_uses).to.equal(3);
      expect((await root.post('auth/token/create/uses', { num_uses: 9 })).body.auth.num_uses).to.equal(5);
      expect((await root.post('auth/token/create/uses', {})).body.auth.num_uses).to.equal(5);
    });

    it('refuses explicit_max_ttl, num_uses and period on a batch token, with Vault\'s message', async () => {
      expect(refusal(await root.post('auth/token/create', { type: 'batch', policies: ['other'], explicit_max_ttl: '1h' }))).to.equal('batch tokens cannot have "explicit_max_ttl" set');
      expect(refusal(await root.post('auth/token/create', { type: 'batch', policies: ['other'], num_uses: 2 }))).to.equal('batch tokens cannot have "num_uses" set');
      expect(refusal(await root.post('auth/token/create', { type: 'batch', policies: ['other'], period: '1h' }))).to.equal('batch tokens cannot have "period" set');
    });

    it('takes the token type from the role, and refuses batch roles that are not orphan and non-renewable', async () => {
      await role('services', { token_type: 'service' });
      expect((await root.post('auth/token/create/services', { type: 'batch', policies: ['other'] })).body.auth.token_type).to.equal('service');
      expect(refusal(await root.post('auth/token/roles/batches', { token_type: 'batch' }))).to.equal(
        "'token_type' cannot be 'batch' when role is set to generate non-orphan tokens",
      );
      expect(refusal(await root.post('auth/token/roles/batches', { token_type: 'batch', orphan: true }))).to.equal(
        "'token_type' cannot be 'batch' when role is set to generate renewable tokens",
      );
      await role('batches', { token_type: 'batch', orphan: true, renewable: false });
      const batch = await root.post('auth/token/create/batches', { policies: ['other'] });
      expect(batch.body.auth).to.include({ token_type: 'batch', orphan: true, renewable: false });
    });

    it('keeps renewable false when the role says so', async () => {
      await role('fixed', { renewable: false });
      expect((await root.post('auth/token/create/fixed', { policies: ['other'], renewable: true })).body.auth.renewable).to.equal(false);
    });

    it('binds a child to its parent\'s CIDRs, and a role\'s token to the role\'s', async () => {
      await role('bound', { token_bound_cidrs: ['127.0.0.1/32'] });
      const parent = created(await root.post('auth/token/create/bound', { policies: ['creator'] }));
      expect((await lookup(parent)).bound_cidrs).to.deep.equal(['127.0.0.1/32']);
      const child = created(await as(parent).post('auth/token/create', {}));
      expect((await lookup(child)).bound_cidrs).to.deep.equal(['127.0.0.1/32']);
      await role('elsewhere', { token_bound_cidrs: ['10.0.0.0/8'] });
      const far = created(await root.post('auth/token/create/elsewhere', { policies: ['other'] }));
      expect((await as(far).get('auth/token/lookup-self')).status).to.equal(403);
    });

    it('accepts entity_alias only with a role that allows it (names or globs), tying the token to one entity', async () => {
      expect(refusal(await root.post('auth/token/create', { entity_alias: 'svc-web' }))).to.equal("'entity_alias' is only allowed in combination with token role");
      await role('aliased', { allowed_entity_aliases: ['svc-*', 'Bob'] });
      const first = await root.post('auth/token/create/aliased', { entity_alias: 'svc-web', policies: ['creator'] });
      const entityId = first.body.auth.entity_id as string;
      expect(entityId).to.match(/^[0-9a-f-]{36}$/);
      const entity = await root.get(`identity/entity/id/${entityId}`);
      expect(entity.body.data.aliases[0]).to.include({ name: 'svc-web', mount_path: 'auth/token/', mount_type: 'token' });
      expect((await root.post('auth/token/create/aliased', { entity_alias: 'svc-web' })).body.auth.entity_id).to.equal(entityId);
      expect((await root.post('auth/token/create/aliased', { entity_alias: 'BOB' })).status).to.equal(200);
      expect(refusal(await root.post('auth/token/create/aliased', { entity_alias: 'eve' }))).to.equal("invalid 'entity_alias' value");
      expect((await root.get('auth/token/roles/aliased')).body.data.allowed_entity_aliases).to.deep.equal(['bob', 'svc-*']);
    });

    it('gives a child its parent\'s entity, and an orphan none', async () => {
      await role('aliased-parent', { allowed_entity_aliases: ['parent-svc'] });
      const parent = await root.post('auth/token/create/aliased-parent', { entity_alias: 'parent-svc', policies: ['creator'] });
      const entityId = parent.body.auth.entity_id as string;
      const client = as(created(parent));
      expect((await client.post('auth/token/create', {})).body.auth.entity_id).to.equal(entityId);
      expect((await client.post('auth/token/create-orphan', {})).body.auth.entity_id).to.equal('');
    });

    it('stores display_name as token-<name>, sanitized, without a trailing dash', async () => {
      const token = await tokenWith({ display_name: 'ci job!', policies: ['other'] });
      expect((await lookup(token)).display_name).to.equal('token-ci-job');
    });
  });
});
