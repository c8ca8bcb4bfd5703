/** Identity groups and group aliases over HTTP: membership, nesting, and the policies a member's tokens inherit. */
import { expect } from 'chai';
import { startUnsealedServer } from '../../../helpers/server.js';
import { TestClient } from '../../../helpers/http.js';
import { runCli } from '../../../helpers/cli.js';
import type { RunningServer } from '../../../../core/server.js';
import notesPlugin from '../../../fixtures/plugins/notes.js';
import greeterPlugin from '../../../fixtures/plugins/greeter-auth.js';

describe('identity groups', () => {
  let server: RunningServer & { client: TestClient; rootToken: string };
  let root: TestClient;
  let accessor: string;
  const as = (token: string) => new TestClient(server.address, token);
  const login = async (user: string, body: Record<string, unknown> = {}) => {
    const res = await new TestClient(server.address).post('auth/greeter/login', { user, ...body });
    expect(res.status, res.text).to.equal(200);
    return res.body.auth as { client_token: string; entity_id: string };
  };
  const group = async (body: Record<string, unknown>) => {
    const res = await root.post('identity/group', body);
    expect(res.status, res.text).to.equal(200);
    return res.body.data.id as string;
  };

  before(async () => {
    server = await startUnsealedServer({ plugins: [notesPlugin, greeterPlugin] });
    root = server.client;
    await root.post('sys/mounts/notes', { type: 'notes' });
    await root.post('notes/notes/app', { text: 'kept' });
    await root.put('sys/policy/notes-reader', { policy: 'path "notes/notes/*" { capabilities = ["read"] }' });
    await root.put('sys/policy/notes-writer', { policy: 'path "notes/notes/*" { capabilities = ["update"] }' });
    await root.post('sys/auth/greeter', { type: 'greeter' });
    accessor = (await root.get('sys/auth')).body.data['greeter/'].accessor;
  });
  after(() => server.close());

  it('creates an internal group, reads it by id and by name, lists it and deletes it', async () => {
    const entity = (await root.post('identity/entity', { name: 'g-member' })).body.data.id as string;
    const created = await root.post('identity/group', { name: 'ops', policies: 'notes-reader', metadata: { site: 'x' }, member_entity_ids: [entity] });
    expect(created.status, created.text).to.equal(200);
    const id = created.body.data.id as string;
    expect(created.body.data.name).to.equal('ops');
    const read = (await root.get(`identity/group/id/${id}`)).body.data;
    expect(read).to.include({ id, name: 'ops', type: 'internal' });
    expect(read.policies).to.deep.equal(['notes-reader']);
    expect(read.member_entity_ids).to.deep.equal([entity]);
    expect(read.metadata).to.deep.equal({ site: 'x' });
    expect(read.alias).to.deep.equal({});
    expect((await root.get('identity/group/name/OPS')).body.data.id).to.equal(id);
    const listed = (await root.list('identity/group/id')).body.data;
    expect(listed.key_info[id]).to.deep.equal({ name: 'ops', num_member_entities: 1, num_parent_groups: 0 });
    expect((await root.list('identity/group/name')).body.data.keys).to.include('ops');
    expect((await root.get(`identity/entity/id/${entity}`)).body.data.direct_group_ids).to.deep.equal([id]);
    expect((await root.post('identity/group/name/ops', { policies: 'notes-writer' })).status).to.equal(204);
    expect((await root.get(`identity/group/id/${id}`)).body.data.policies).to.deep.equal(['notes-writer']);
    expect((await root.delete('identity/group/name/ops')).status).to.equal(204);
    expect((await root.get(`identity/group/id/${id}`)).status).to.equal(404);
    expect((await root.get(`identity/entity/id/${entity}`)).body.data.direct_group_ids).to.deep.equal([]);
  });

  it('gives a member entity\'s tokens the group\'s policies at their next use, and takes them back', async () => {
    const user = await login('olga');
    const client = as(user.client_token);
    expect((await client.get('notes/notes/app')).status).to.equal(403);
    const id = await group({ name: 'readers', policies: 'notes-reader', member_entity_ids: user.entity_id });
    expect((await client.get('notes/notes/app')).status).to.equal(200);
    expect((await client.get('auth/token/lookup-self')).body.data.identity_policies).to.deep.equal(['notes-reader']);
    expect((await client.post('sys/capabilities-self', { paths: 'notes/notes/app' })).body.data.capabilities).to.deep.equal(['read']);
    expect((await root.post('sys/capabilities', { token: user.client_token, paths: 'notes/notes/app' })).body.data.capabilities).to.deep.equal(['read']);
    await root.post(`identity/group/id/${id}`, { member_entity_ids: [] });
    expect((await root.get(`identity/group/id/${id}`)).body.data.member_entity_ids).to.equal(null);
    expect((await client.get('notes/notes/app')).status).to.equal(403);
  });

  it('passes a parent group\'s policies down through member groups, and a deleted group\'s no longer', async () => {
    const user = await login('pete');
    const client = as(user.client_token);
    const child = await group({ name: 'child', member_entity_ids: user.entity_id });
    const middle = await group({ name: 'middle', member_group_ids: child });
    const top = await group({ name: 'top', policies: 'notes-reader', member_group_ids: middle });
    expect((await client.get('notes/notes/app')).status).to.equal(200);
    const entity = (await root.get(`identity/entity/id/${user.entity_id}`)).body.data;
    expect(entity.direct_group_ids).to.deep.equal([child]);
    expect(entity.inherited_group_ids).to.have.members([middle, top]);
    expect((await root.get(`identity/group/id/${child}`)).body.data.parent_group_ids).to.deep.equal([middle]);
    expect((await root.delete(`identity/group/id/${middle}`)).status).to.equal(204);
    expect((await client.get('notes/notes/app')).status).to.equal(403);
    expect((await root.get(`identity/group/id/${top}`)).body.data.member_group_ids).to.equal(null);
  });

  it('refuses a member group that would make a cycle, the group itself, and unknown members', async () => {
    const a = await group({ name: 'cycle-a' });
    const b = await group({ name: 'cycle-b', member_group_ids: a });
    const cycle = await root.post(`identity/group/id/${a}`, { member_group_ids: b });
    expect(cycle.status).to.equal(400);
    expect(cycle.body.errors[0]).to.equal(`cyclic relationship detected for member group ID "${b}"`);
    const self = await root.post(`identity/group/id/${a}`, { member_group_ids: a });
    expect(self.status).to.equal(400);
    const unknownEntity = await root.post('identity/group', { name: 'bad', member_entity_ids: '00000000-0000-4000-8000-000000000000' });
    expect(unknownEntity.status).to.equal(400);
    expect(unknownEntity.body.errors[0]).to.contain('invalid member entity ID');
    expect((await root.get('identity/group/name/bad')).status).to.equal(404);
    const taken = await root.post(`identity/group/id/${b}`, { name: 'cycle-a' });
    expect(taken.body.errors[0]).to.equal('group name is already in use');
    const retyped = await root.post(`identity/group/id/${b}`, { type: 'external' });
    expect(retyped.body.errors[0]).to.equal('group type cannot be changed');
  });

  it('renders identity.groups templates in policy paths from the entity\'s groups, nested ones too', async () => {
    const user = await login('sam', { policies: 'group-templated' });
    const client = as(user.client_token);
    const inner = await group({ name: 'tmpl-inner', member_entity_ids: user.entity_id, metadata: { team: 'blue' } });
    const outer = await group({ name: 'tmpl-outer', member_group_ids: inner });
    await root.put('sys/policy/group-templated', {
      policy: 'path "notes/notes/{{identity.groups.names.tmpl-outer.id}}" { capabilities = ["read"] }\n' +
        `path "notes/notes/team-{{identity.groups.ids.${inner}.metadata.team}}" { capabilities = ["read"] }`,
    });
    await root.post(`notes/notes/${outer}`, { text: 'outer' });
    await root.post('notes/notes/team-blue', { text: 'blue' });
    expect((await client.get(`notes/notes/${outer}`)).status).to.equal(200);
    expect((await client.get('notes/notes/team-blue')).status).to.equal(200);
    await root.post(`identity/group/id/${inner}`, { metadata: { team: 'red' } });
    expect((await client.get('notes/notes/team-blue')).status).to.equal(403);
  });

  it('takes group policies and entity disabling from the CLI as from HTTP', async () => {
    const cli = (args: string[]) => runCli(args, { PATH: process.env.PATH, HOME: '/nonexistent', KEYWARDEN_ADDR: server.address, VAULT_TOKEN: server.rootToken });
    const user = await login('tess');
    const client = as(user.client_token);
    expect((await client.get('notes/notes/app')).status).to.equal(403);
    const grouped = await cli(['write', 'identity/group', 'name=cli-readers', 'policies=notes-reader', `member_entity_ids=${user.entity_id}`]);
    expect(grouped.code, grouped.stderr).to.equal(0);
    expect((await client.get('notes/notes/app')).status).to.equal(200);
    const disabled = await cli(['write', `identity/entity/id/${user.entity_id}`, 'disabled=true']);
    expect(disabled.code, disabled.stderr).to.equal(0);
    expect((await client.get('notes/notes/app')).status).to.equal(403);
    const read = await cli(['read', '-format=json', `identity/entity/id/${user.entity_id}`]);
    expect(JSON.parse(read.stdout).data.disabled).to.equal(true);
  });

  describe('external groups', () => {
    it('makes a login\'s entity a member of the external groups its group names alias, and not once they are gone', async () => {
      const id = await group({ name: 'devs', type: 'external', policies: 'notes-reader' });
      const aliased = await root.post('identity/group-alias', { name: 'developers', mount_accessor: accessor, canonical_id: id });
      expect(aliased.status, aliased.text).to.equal(200);
      const aliasId = aliased.body.data.id as string;
      expect(aliased.body.data.canonical_id).to.equal(id);
      const user = await login('quinn', { groups: 'developers,others' });
      expect((await as(user.client_token).get('notes/notes/app')).status).to.equal(200);
      const read = (await root.get(`identity/group/id/${id}`)).body.data;
      expect(read.member_entity_ids).to.deep.equal([user.entity_id]);
      expect(read.alias).to.include({ id: aliasId, name: 'developers', mount_accessor: accessor, mount_path: 'auth/greeter/' });
      expect((await root.post('identity/lookup/group', { alias_name: 'developers', alias_mount_accessor: accessor })).body.data.id).to.equal(id);
      const again = await login('quinn', { groups: 'others' });
      expect((await root.get(`identity/group/id/${id}`)).body.data.member_entity_ids).to.equal(null);
      expect((await as(again.client_token).get('notes/notes/app')).status).to.equal(403);
      expect((await as(user.client_token).get('notes/notes/app')).status).to.equal(403);
    });

    it('reads, lists, updates and deletes group aliases, and refuses them on internal groups', async () => {
      const created = await root.post('identity/group-alias', { name: 'made-here', mount_accessor: accessor });
      expect(created.status, created.text).to.equal(200);
      const id = created.body.data.id as string;
      expect((await root.get(`identity/group/id/${created.body.data.canonical_id}`)).body.data.type).to.equal('external');
      expect((await root.get(`identity/group-alias/id/${id}`)).body.data).to.include({ name: 'made-here', mount_type: 'greeter' });
      expect((await root.list('identity/group-alias/id')).body.data.key_info[id]).to.include({ name: 'made-here', mount_accessor: accessor });
      expect((await root.post(`identity/group-alias/id/${id}`, { name: 'renamed-here' })).status).to.equal(200);
      expect((await root.get(`identity/group-alias/id/${id}`)).body.data.name).to.equal('renamed-here');
      const taken = await root.post('identity/group-alias', { name: 'renamed-here', mount_accessor: accessor });
      expect(taken.body.errors[0]).to.equal('combination of mount and group alias name is already in use');
      const internal = await group({ name: 'internal-one' });
      const refused = await root.post('identity/group-alias', { name: 'x', mount_accessor: accessor, canonical_id: internal });
      expect(refused.status).to.equal(400);
      expect(refused.body.errors[0]).to.equal("alias can't be set on an internal group");
      const members = await root.post('identity/group', { name: 'ext-members', type: 'external', member_entity_ids: (await login('rita')).entity_id });
      expect(members.body.errors[0]).to.equal("member entities can't be set manually for external groups");
      expect((await root.delete(`identity/group-alias/id/${id}`)).status).to.equal(204);
      expect((await root.get(`identity/group-alias/id/${id}`)).status).to.equal(404);
      expect((await root.get(`identity/group/id/${created.body.data.canonical_id}`)).body.data.alias).to.deep.equal({});
    });
  });
});
