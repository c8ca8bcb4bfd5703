/** Identity entities and entity aliases over HTTP: what an operator manages, and what a token of the entity gets at its next use. */
import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { API_AUDIT, startUnsealedServer, tempDir } from '../../../helpers/server.js';
import { TestClient } from '../../../helpers/http.js';
import type { RunningServer } from '../../../../core/server.js';
import notesPlugin from '../../../fixtures/plugins/notes.js';
import greeterPlugin from '../../../fixtures/plugins/greeter-auth.js';

describe('identity entities and aliases', () => {
  let server: RunningServer & { client: TestClient; rootToken: string };
  let root: TestClient;
  let accessor: string;
  let otherAccessor: string;
  const as = (token: string) => new TestClient(server.address, token);
  const login = async (user: string, mount = 'greeter', body: Record<string, unknown> = {}) => {
    const res = await new TestClient(server.address).post(`auth/${mount}/login`, { user, ...body });
    expect(res.status, res.text).to.equal(200);
    return res.body.auth as { client_token: string; entity_id: string };
  };

  before(async () => {
    server = await startUnsealedServer({ plugins: [notesPlugin, greeterPlugin] });
    root = server.client;
    await root.post('sys/mounts/notes', { type: 'notes' });
    await root.post('notes/notes/app', { text: 'kept' });
    await root.put('sys/policy/notes-reader', { policy: 'path "notes/notes/*" { capabilities = ["read"] }' });
    await root.post('sys/auth/greeter', { type: 'greeter' });
    await root.post('sys/auth/other', { type: 'greeter' });
    const auths = (await root.get('sys/auth')).body.data;
    accessor = auths['greeter/'].accessor;
    otherAccessor = auths['other/'].accessor;
  });
  after(() => server.close());

  describe('entities', () => {
    it('creates an entity by name, reads it by id and by name, and answers an update with 204', async () => {
      const created = await root.post('identity/entity', { name: 'alice', metadata: { team: 'blue' }, policies: ['Notes-Reader', 'notes-reader'] });
      expect(created.status, created.text).to.equal(200);
      const id = created.body.data.id as string;
      expect(created.body.data).to.include({ name: 'alice' });
      const byId = (await root.get(`identity/entity/id/${id}`)).body.data;
      expect(byId).to.include({ id, name: 'alice', disabled: false });
      expect(byId.metadata).to.deep.equal({ team: 'blue' });
      expect(byId.policies).to.deep.equal(['notes-reader']);
      expect(byId.aliases).to.deep.equal([]);
      expect((await root.get('identity/entity/name/ALICE')).body.data.id).to.equal(id);
      const updated = await root.post('identity/entity', { name: 'alice', metadata: { team: 'red' } });
      expect(updated.status).to.equal(204);
      expect((await root.get(`identity/entity/id/${id}`)).body.data.metadata).to.deep.equal({ team: 'red' });
    });

    it('creates and updates an entity at entity/name/:name and renames one by id', async () => {
      const created = await root.post('identity/entity/name/bob', { policies: 'a,b' });
      expect(created.status).to.equal(200);
      const id = created.body.data.id as string;
      expect((await root.post('identity/entity/name/bob', { policies: 'c' })).status).to.equal(204);
      expect((await root.get('identity/entity/name/bob')).body.data.policies).to.deep.equal(['c']);
      expect((await root.post(`identity/entity/id/${id}`, { name: 'robert' })).status).to.equal(204);
      expect((await root.get('identity/entity/name/robert')).body.data.id).to.equal(id);
      expect((await root.get('identity/entity/name/bob')).status).to.equal(404);
    });

    it('refuses a name in use, an unknown id and the root policy, naming the problem', async () => {
      await root.post('identity/entity', { name: 'carol' });
      const other = (await root.post('identity/entity', { name: 'carol-2' })).body.data.id as string;
      const taken = await root.post(`identity/entity/id/${other}`, { name: 'Carol' });
      expect(taken.status).to.equal(400);
      expect(taken.body.errors[0]).to.equal('entity name is already in use');
      const unknown = await root.post('identity/entity/id/00000000-0000-4000-8000-000000000000', { name: 'x' });
      expect(unknown.status).to.equal(400);
      expect(unknown.body.errors[0]).to.equal('entity not found from id');
      const rooted = await root.post('identity/entity', { name: 'dan', policies: ['root'] });
      expect(rooted.status).to.equal(400);
      expect(rooted.body.errors[0]).to.equal('policies cannot contain root');
      const badMetadata = await root.post('identity/entity', { name: 'dan', metadata: { n: 1 } });
      expect(badMetadata.status).to.equal(400);
      expect(badMetadata.body.errors[0]).to.contain('metadata');
      expect((await root.get('identity/entity/name/dan')).status).to.equal(404);
    });

    it('lists entities by id with names in key_info, and by name', async () => {
      const id = (await root.post('identity/entity', { name: 'listed' })).body.data.id as string;
      const byId = (await root.list('identity/entity/id')).body.data;
      expect(byId.keys).to.include(id);
      expect(byId.key_info[id]).to.deep.equal({ name: 'listed' });
      expect((await root.list('identity/entity/name')).body.data.keys).to.include('listed');
    });

    it('deletes by id, by name and in a batch, with the entities\' aliases', async () => {
      const ids: string[] = [];
      for (const name of ['del-1', 'del-2', 'del-3', 'del-4']) ids.push((await root.post('identity/entity', { name })).body.data.id);
      const alias = (await root.post('identity/entity-alias', { name: 'del-alias', mount_accessor: accessor, canonical_id: ids[0] })).body.data.id as string;
      expect((await root.delete(`identity/entity/id/${ids[0]}`)).status).to.equal(204);
      expect((await root.get(`identity/entity/id/${ids[0]}`)).status).to.equal(404);
      expect((await root.get(`identity/entity-alias/id/${alias}`)).status).to.equal(404);
      expect((await root.delete('identity/entity/name/del-2')).status).to.equal(204);
      expect((await root.get(`identity/entity/id/${ids[1]}`)).status).to.equal(404);
      expect((await root.post('identity/entity/batch-delete', { entity_ids: [ids[2], ids[3]] })).status).to.equal(204);
      const left = (await root.list('identity/entity/id')).body.data.keys as string[];
      expect(left).to.not.include.members([ids[2], ids[3]]);
      // A new entity may take a deleted one's name.
      expect((await root.post('identity/entity', { name: 'del-1' })).status).to.equal(200);
    });
  });

  describe('entity aliases', () => {
    it('creates an alias for an entity, reads, lists, updates and deletes it', async () => {
      const entity = (await root.post('identity/entity', { name: 'erin' })).body.data.id as string;
      const created = await root.post('identity/entity-alias', { name: 'erin-login', mount_accessor: accessor, canonical_id: entity, custom_metadata: { k: 'v' } });
      expect(created.status, created.text).to.equal(200);
      expect(created.body.data.canonical_id).to.equal(entity);
      const id = created.body.data.id as string;
      const read = (await root.get(`identity/entity-alias/id/${id}`)).body.data;
      expect(read).to.include({ name: 'erin-login', mount_accessor: accessor, mount_type: 'greeter', mount_path: 'auth/greeter/', canonical_id: entity });
      expect(read.custom_metadata).to.deep.equal({ k: 'v' });
      expect((await root.get(`identity/entity/id/${entity}`)).body.data.aliases.map((a: { id: string }) => a.id)).to.deep.equal([id]);
      const listed = (await root.list('identity/entity-alias/id')).body.data;
      expect(listed.key_info[id]).to.include({ canonical_id: entity, name: 'erin-login', mount_accessor: accessor });
      expect((await root.post(`identity/entity-alias/id/${id}`, { name: 'erin-renamed' })).status).to.equal(200);
      expect((await root.get(`identity/entity-alias/id/${id}`)).body.data.name).to.equal('erin-renamed');
      expect((await root.delete(`identity/entity-alias/id/${id}`)).status).to.equal(204);
      expect((await root.get(`identity/entity-alias/id/${id}`)).status).to.equal(404);
      expect((await root.get(`identity/entity/id/${entity}`)).body.data.aliases).to.deep.equal([]);
    });

    it('makes a new entity for an alias without canonical_id, and a login with that name becomes it', async () => {
      const created = (await root.post('identity/entity-alias', { name: 'frank', mount_accessor: accessor })).body.data;
      expect(created.canonical_id).to.match(/^[0-9a-f-]{36}$/);
      expect((await login('frank')).entity_id).to.equal(created.canonical_id);
    });

    it('refuses a second alias on one mount for an entity, an unknown accessor and a taken name', async () => {
      const entity = (await root.post('identity/entity', { name: 'gina' })).body.data.id as string;
      expect((await root.post('identity/entity-alias', { name: 'gina-1', mount_accessor: accessor, canonical_id: entity })).status).to.equal(200);
      const second = await root.post('identity/entity-alias', { name: 'gina-2', mount_accessor: accessor, canonical_id: entity });
      expect(second.status).to.equal(400);
      expect(second.body.errors[0]).to.equal('Alias already exists for requested entity and mount accessor');
      const unknown = await root.post('identity/entity-alias', { name: 'x', mount_accessor: 'auth_nothing_123' });
      expect(unknown.status).to.equal(400);
      expect(unknown.body.errors[0]).to.equal('invalid mount accessor "auth_nothing_123"');
      const other = (await root.post('identity/entity-alias', { name: 'gina-other', mount_accessor: otherAccessor })).body.data.id as string;
      const taken = await root.post(`identity/entity-alias/id/${other}`, { name: 'gina-1', mount_accessor: accessor });
      expect(taken.status).to.equal(400);
      expect(taken.body.errors[0]).to.equal('alias with combination of mount accessor and name already exists');
      const neither = await root.post('identity/entity-alias', { name: 'only-a-name' });
      expect(neither.status).to.equal(400);
      expect(neither.body.errors[0]).to.equal("'id' or 'mount_accessor' and 'name' must be provided");
    });

    it('serves the older alias and persona paths, persona taking entity_id', async () => {
      const entity = (await root.post('identity/entity', { name: 'hank' })).body.data.id as string;
      const viaAlias = await root.post('identity/alias', { name: 'hank-a', mount_accessor: accessor, canonical_id: entity });
      expect(viaAlias.status, viaAlias.text).to.equal(200);
      const viaPersona = await root.post('identity/persona', { name: 'hank-p', mount_accessor: otherAccessor, entity_id: entity });
      expect(viaPersona.status, viaPersona.text).to.equal(200);
      expect(viaPersona.body.data.canonical_id).to.equal(entity);
      expect((await root.get(`identity/persona/id/${viaAlias.body.data.id}`)).body.data.name).to.equal('hank-a');
      expect((await root.list('identity/alias/id')).body.data.keys).to.include(viaPersona.body.data.id);
    });
  });

  describe('merge', () => {
    it('moves the aliases and tokens of the merged entities to the one kept', async () => {
      const first = await login('ivy-1');
      const second = await login('ivy-2', 'other');
      await root.post(`identity/entity/id/${first.entity_id}`, { policies: ['notes-reader'] });
      expect((await as(second.client_token).get('notes/notes/app')).status).to.equal(403);
      const merged = await root.post('identity/entity/merge', { from_entity_ids: [second.entity_id], to_entity_id: first.entity_id });
      expect(merged.status, merged.text).to.equal(204);
      expect((await root.get(`identity/entity/id/${second.entity_id}`)).status).to.equal(404);
      const kept = (await root.get(`identity/entity/id/${first.entity_id}`)).body.data;
      expect(kept.aliases.map((a: { name: string }) => a.name).sort()).to.deep.equal(['ivy-1', 'ivy-2']);
      expect(kept.merged_entity_ids).to.deep.equal([second.entity_id]);
      // The merged entity's token acts as the kept entity from its next use, and so does its next login.
      expect((await as(second.client_token).get('notes/notes/app')).status).to.equal(200);
      expect((await login('ivy-2', 'other')).entity_id).to.equal(first.entity_id);
    });

    it('refuses aliases on one mount unless conflicting_alias_ids_to_keep names the one to keep', async () => {
      const to = await login('jay-to');
      const from = await login('jay-from');
      const toAlias = (await root.get(`identity/entity/id/${to.entity_id}`)).body.data.aliases[0].id as string;
      const fromAlias = (await root.get(`identity/entity/id/${from.entity_id}`)).body.data.aliases[0].id as string;
      const clash = await root.post('identity/entity/merge', { from_entity_ids: from.entity_id, to_entity_id: to.entity_id });
      expect(clash.status).to.equal(400);
      expect(clash.body.errors[0]).to.contain('toEntity and at least one fromEntity have aliases with the same mount accessor');
      expect(clash.body.errors[0]).to.contain(fromAlias);
      expect((await root.get(`identity/entity/id/${from.entity_id}`)).status).to.equal(200);
      const kept = await root.post('identity/entity/merge', { from_entity_ids: from.entity_id, to_entity_id: to.entity_id, conflicting_alias_ids_to_keep: fromAlias });
      expect(kept.status, kept.text).to.equal(204);
      const aliases = (await root.get(`identity/entity/id/${to.entity_id}`)).body.data.aliases as { id: string }[];
      expect(aliases.map((a) => a.id)).to.deep.equal([fromAlias]);
      expect((await root.get(`identity/entity-alias/id/${toAlias}`)).status).to.equal(404);
    });

    it('refuses to merge an entity into itself or from one that does not exist', async () => {
      const id = (await root.post('identity/entity', { name: 'kim' })).body.data.id as string;
      const self = await root.post('identity/entity/merge', { from_entity_ids: id, to_entity_id: id });
      expect(self.status).to.equal(400);
      expect(self.body.errors[0]).to.equal('to_entity_id should not be present in from_entity_ids');
      const missing = await root.post('identity/entity/merge', { from_entity_ids: '00000000-0000-4000-8000-000000000000', to_entity_id: id });
      expect(missing.status).to.equal(400);
      expect(missing.body.errors[0]).to.equal('entity id to merge from is invalid');
    });
  });

  describe('lookup/entity', () => {
    it('finds an entity by id, name, alias id and alias name with accessor, and 204 when none', async () => {
      const user = await login('lou');
      const entity = (await root.get(`identity/entity/id/${user.entity_id}`)).body.data;
      const aliasId = entity.aliases[0].id as string;
      for (const query of [{ id: entity.id }, { name: entity.name }, { alias_id: aliasId }, { alias_name: 'lou', alias_mount_accessor: accessor }]) {
        const found = await root.post('identity/lookup/entity', query);
        expect(found.status, JSON.stringify(query)).to.equal(200);
        expect(found.body.data.id).to.equal(entity.id);
      }
      expect((await root.post('identity/lookup/entity', { name: 'nobody' })).status).to.equal(204);
      const none = await root.post('identity/lookup/entity', {});
      expect(none.status).to.equal(400);
      expect(none.body.errors[0]).to.equal('query parameter not supplied');
      const half = await root.post('identity/lookup/entity', { alias_name: 'lou' });
      expect(half.body.errors[0]).to.equal("both 'alias_name' and 'alias_mount_accessor' needs to be set");
      const both = await root.post('identity/lookup/entity', { id: entity.id, name: entity.name });
      expect(both.body.errors[0]).to.equal('query parameter conflict; please supply distinct set of query parameters');
    });
  });

  describe('what a token of the entity gets', () => {
    it('refuses every request of a token whose entity is disabled, until it is enabled again', async () => {
      const user = await login('mia', 'greeter', { policies: 'notes-reader' });
      const client = as(user.client_token);
      expect((await client.get('notes/notes/app')).status).to.equal(200);
      expect((await root.post(`identity/entity/id/${user.entity_id}`, { disabled: true })).status).to.equal(204);
      expect((await client.get('notes/notes/app')).status).to.equal(403);
      expect((await client.get('auth/token/lookup-self')).status).to.equal(403);
      expect((await root.post(`identity/entity/id/${user.entity_id}`, { disabled: false })).status).to.equal(204);
      expect((await client.get('notes/notes/app')).status).to.equal(200);
    });

    it('adds the entity\'s policies to its tokens at their next use, in capabilities and in lookup', async () => {
      const user = await login('ned');
      const client = as(user.client_token);
      expect((await client.get('notes/notes/app')).status).to.equal(403);
      await root.post(`identity/entity/id/${user.entity_id}`, { policies: 'notes-reader' });
      expect((await client.get('notes/notes/app')).status).to.equal(200);
      const caps = await client.post('sys/capabilities-self', { paths: ['notes/notes/app'] });
      expect(caps.body.data.capabilities).to.deep.equal(['read']);
      const lookup = (await client.get('auth/token/lookup-self')).body.data;
      expect(lookup.identity_policies).to.deep.equal(['notes-reader']);
      expect(lookup.policies).to.deep.equal(['default']);
      await root.post(`identity/entity/id/${user.entity_id}`, { policies: [] });
      expect((await client.get('notes/notes/app')).status).to.equal(403);
    });
  });

  describe('audit', () => {
    it('records the refusal of a disabled entity\'s token in the audit log', async () => {
      const dir = await tempDir();
      const audited = await startUnsealedServer({ plugins: [greeterPlugin], audit: API_AUDIT });
      try {
        const file = path.join(dir.path, 'audit.log');
        await audited.client.put('sys/audit/file', { type: 'file', options: { file_path: file } });
        await audited.client.post('sys/auth/greeter', { type: 'greeter' });
        const user = (await new TestClient(audited.address).post('auth/greeter/login', { user: 'olive' })).body.auth;
        await audited.client.post(`identity/entity/id/${user.entity_id}`, { disabled: true });
        expect((await new TestClient(audited.address, user.client_token).get('auth/token/lookup-self')).status).to.equal(403);
        const entries = (await readFile(file, 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as { type: string; error?: string; request?: { path?: string } });
        // The error is HMAC'd like every string of an entry; that the refusal has one is what counts.
        const refused = entries.filter((e) => e.type === 'response' && e.request?.path === 'auth/token/lookup-self' && e.error);
        expect(refused, JSON.stringify(entries.slice(-2))).to.have.length.greaterThan(0);
      } finally {
        await audited.close();
        await dir.remove();
      }
    });
  });
});
