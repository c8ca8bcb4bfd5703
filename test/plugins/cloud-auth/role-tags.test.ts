/**
 * Role tags over HTTP (docs/cloud-auth.md, "Role tags"): creating them, logging in with one on the
 * instance (it narrows policies, max TTL and reauthentication), forged and misplaced tags, the deny
 * list under its current and deprecated names, and rewritten spellings of a tag (which parse to the
 * same fields, so carry a valid HMAC): refused, and unable to slip past the deny list.
 */
import { expect } from 'chai';
import { startCloudHarness, MAIN_ACCOUNT, type CloudHarness } from './harness.js';
import { TestClient, type TestResponse } from '../../helpers/http.js';
import type { Instance } from '../../fixtures/cloud/world.js';
import { parseRoleTag } from '../../../plugins/cloud-auth/role-tag.js';
import { STORAGE_KEYS } from '../../../plugins/cloud-auth/storage.js';

describe('cloud auth role tags', () => {
  let h: CloudHarness;
  const region = 'us-east-1';
  const AMI = 'ami-0aaaaaaaaaaaaaaaa';
  const TAG_KEY = 'VaultRole';

  const expectError = (res: TestResponse, status: number, message: string | RegExp) => {
    expect(res.status, res.text).to.equal(status);
    if (typeof message === 'string') expect(res.body.errors).to.deep.equal([message]);
    else expect(res.body.errors[0]).to.match(message);
  };
  const createTag = async (role: string, body: Record<string, unknown> = {}) => {
    const res = await h.root.post(`auth/cloud/role/${role}/tag`, body);
    expect(res.status, res.text).to.equal(200);
    return res.body as { data: { tag_key: string; tag_value: string }; warnings: string[] | null };
  };
  const tagged = (value: string, fields: Partial<Instance> = {}) =>
    h.world.addInstance({ accountId: MAIN_ACCOUNT, region, imageId: AMI, tags: { [TAG_KEY]: value }, ...fields });
  const login = async (instance: Instance, role = 'tagged') => h.ec2Login(instance, { role });
  const denyListed = async () => ((await h.root.list('auth/cloud/roletag-denylist')).body.data?.keys ?? []) as string[];

  before(async () => {
    h = await startCloudHarness();
    await h.configure();
    await h.registerTestCertificates();
    await h.writeRole('tagged', { auth_type: 'ec2', bound_ami_id: AMI, role_tag: TAG_KEY, token_policies: 'web,api,db', token_max_ttl: '10h' });
  });
  after(() => h.close());

  describe('creation', () => {
    it('answers the tag key and a value in the exact format, at most 255 characters', async () => {
      const { data, warnings } = await createTag('Tagged', { policies: 'Web,api', max_ttl: '1h', instance_id: 'i-0ABC0000000000000', disallow_reauthentication: true });
      expect(data.tag_key).to.equal(TAG_KEY);
      expect(data.tag_value).to.match(/^v1:[A-Za-z0-9+/]{11}=:r=tagged:d=true:m=false:p=api,web:i=i-0abc0000000000000:t=3600:[A-Za-z0-9+/]{43}=$/);
      expect(warnings).to.equal(null);
      const plain = (await createTag('tagged')).data.tag_value;
      expect(plain).to.match(/^v1:[^:]+:r=tagged:d=false:m=false:[^:]+$/);
      expect(parseRoleTag((await createTag('tagged', { policies: [] })).data.tag_value).policies).to.deep.equal(['default']);
      const long = await h.root.post('auth/cloud/role/tagged/tag', { policies: Array.from({ length: 30 }, (_, i) => `policy-number-${i}`) });
      expectError(long, 400, /^role tag 'value' exceeding the limit of 255 characters/);
    });

    it('warns about what login will refuse or cap, and refuses what cannot work', async () => {
      const { warnings } = await createTag('tagged', { policies: 'admin', max_ttl: '20h', allow_instance_migration: true });
      expect(warnings).to.deep.equal([
        'Policies on the tag are not a subset of the policies set on the role. Login will not be allowed with this tag unless the role policies are updated.',
        'Role does not allow instance migration. Login will not be allowed with this tag unless the role value is updated.',
        'Given max TTL of 72000 is greater than the role maximum of 36000 seconds, and will be capped at login time.',
      ]);
      expectError(await h.root.post('auth/cloud/role/nope/tag', {}), 400, 'entry not found for role nope');
      await h.writeRole('untagged', { auth_type: 'ec2', bound_ami_id: AMI });
      expectError(await h.root.post('auth/cloud/role/untagged/tag', {}), 400, 'tag creation is not enabled for this role');
      expectError(await h.root.post('auth/cloud/role/tagged/tag', { allow_instance_migration: true, disallow_reauthentication: true }), 400, 'cannot set both disallow_reauthentication and allow_instance_migration');
      expectError(await h.root.post('auth/cloud/role/tagged/tag', { max_ttl: '-1h' }), 400, /max_ttl/);
    });

    it('refuses a max_ttl too long for a date, naming it, so no tag can make deny-listing it fail', async () => {
      expectError(await h.root.post('auth/cloud/role/tagged/tag', { max_ttl: '8760000000h' }), 400, /^invalid value for field "max_ttl": .*out of range/);
      const longest = (await createTag('tagged', { max_ttl: '2562047h47m16s' })).data.tag_value;
      expect((await h.root.post(`auth/cloud/roletag-denylist/${longest}`)).status).to.equal(204);
      expect(new Date((await h.root.get(`auth/cloud/roletag-denylist/${longest}`)).body.data.expiration_time).getUTCFullYear()).to.be.below(2400);
      expect((await h.root.delete(`auth/cloud/roletag-denylist/${longest}`)).status).to.equal(204);
    });
  });

  describe('login', () => {
    it("narrows the token to the tag's policies and max TTL, and says so in the metadata", async () => {
      const value = (await createTag('tagged', { policies: 'web', max_ttl: '2h' })).data.tag_value;
      const res = await login(tagged(value));
      expect(res.status, res.text).to.equal(200);
      expect(res.body.auth.policies).to.deep.equal(['default', 'web']);
      expect(res.body.auth.metadata.role_tag_max_ttl).to.equal('2h0m0s');
      expect(res.body.auth.lease_duration).to.equal(7200);
    });

    it("keeps the role's policies for a tag without policies, and gives only default for a tag made with an empty list", async () => {
      const roles = await login(tagged((await createTag('tagged')).data.tag_value));
      expect(roles.body.auth.policies).to.deep.equal(['api', 'db', 'default', 'web']);
      expect(roles.body.auth.lease_duration).to.equal(36000);
      const onlyDefault = await login(tagged((await createTag('tagged', { policies: '' })).data.tag_value));
      expect(onlyDefault.status, onlyDefault.text).to.equal(200);
      expect(onlyDefault.body.auth.policies).to.deep.equal(['default']);
    });

    it('makes disallow_reauthentication from the tag stick to the instance', async () => {
      const instance = tagged((await createTag('tagged', { disallow_reauthentication: true })).data.tag_value);
      const first = await login(instance);
      expect(first.status, first.text).to.equal(200);
      expect(first.body.auth.metadata).not.to.have.property('nonce');
      expectError(await login(instance), 400, 'reauthentication is disabled');
    });

    it('refuses migration a role allows when the tag does not', async () => {
      await h.writeRole('mobile-tagged', { auth_type: 'ec2', bound_ami_id: AMI, role_tag: TAG_KEY, allow_instance_migration: true });
      const still = tagged((await createTag('mobile-tagged')).data.tag_value, { launchTime: new Date('2025-01-01T00:00:00Z') });
      expect((await login(still, 'mobile-tagged')).status).to.equal(200);
      still.launchTime = new Date('2025-02-01T00:00:00Z');
      expectError(await login(still, 'mobile-tagged'), 400, 'client nonce mismatch: the role tag on the instance does not allow instance migration');
      const mobile = tagged((await createTag('mobile-tagged', { allow_instance_migration: true })).data.tag_value, { launchTime: new Date('2025-01-01T00:00:00Z') });
      expect((await login(mobile, 'mobile-tagged')).status).to.equal(200);
      mobile.launchTime = new Date('2025-02-01T00:00:00Z');
      const moved = await login(mobile, 'mobile-tagged');
      expect(moved.status, moved.text).to.equal(200);
    });

    it('refuses, with a 400 that names it and no access-list entry: missing, forged, foreign, misplaced or over-reaching tags', async () => {
      await h.writeRole('other', { auth_type: 'ec2', bound_ami_id: AMI, role_tag: TAG_KEY });
      const good = (await createTag('tagged')).data.tag_value;
      const forged = good.replace(/:[^:]+$/, ':' + Buffer.alloc(32, 7).toString('base64'));
      const widened = good.replace(/:([^:]+)$/, ':p=root:$1');
      const cases: [Instance, string, string | RegExp][] = [
        [h.world.addInstance({ accountId: MAIN_ACCOUNT, region, imageId: AMI }), 'tagged', `missing tag with key "${TAG_KEY}" on the instance`],
        [tagged(forged), 'tagged', 'invalid role tag on the instance: role tag signature verification failed'],
        [tagged(widened), 'tagged', 'invalid role tag on the instance: role tag signature verification failed'],
        [tagged('v1:nonce:r=tagged'), 'tagged', 'invalid role tag on the instance: invalid tag'],
        [tagged(good.replace('r=tagged', 'r=ghost')), 'tagged', 'invalid role tag on the instance: entry not found for "ghost"'],
        [tagged((await createTag('other')).data.tag_value), 'tagged', 'role on the tag is not matching the role supplied'],
        [tagged((await createTag('tagged', { instance_id: 'i-0000000000000000f' })).data.tag_value), 'tagged', 'role tag is being used by an unauthorized instance'],
        [tagged((await createTag('tagged', { policies: 'admin' })).data.tag_value), 'tagged', 'policies on the role tag must be subset of policies on the role'],
      ];
      for (const [instance, role, message] of cases) {
        expectError(await login(instance, role), 400, message);
        expect((await h.root.get(`auth/cloud/identity-accesslist/${instance.instanceId}`)).status).to.equal(404);
      }
      const bound = h.world.addInstance({ accountId: MAIN_ACCOUNT, region, imageId: AMI });
      bound.tags[TAG_KEY] = (await createTag('tagged', { instance_id: bound.instanceId })).data.tag_value;
      expect((await login(bound)).status).to.equal(200);
    });
  });

  describe('deny list', () => {
    it('stops later logins with a deny-listed tag while tokens issued with it stay valid', async () => {
      const value = (await createTag('tagged', { policies: 'web' })).data.tag_value;
      const before = await login(tagged(value));
      expect(before.status, before.text).to.equal(200);
      expect((await h.root.post(`auth/cloud/roletag-denylist/${value}`)).status).to.equal(204);
      const instance = tagged(value);
      expectError(await login(instance), 400, 'role tag is deny listed');
      expect((await h.root.get(`auth/cloud/identity-accesslist/${instance.instanceId}`)).status).to.equal(404);
      const issued = new TestClient(h.server.address, before.body.auth.client_token);
      expect((await issued.get('auth/token/lookup-self')).status).to.equal(200);
      expect((await issued.post('auth/token/renew-self', {})).status).to.equal(200);
      expect((await h.root.delete(`auth/cloud/roletag-denylist/${value}`)).status).to.equal(204);
      expect((await login(tagged(value))).status).to.equal(200);
    });

    it('takes the tag as is or base64-encoded for every operation, and lists tags as tags', async () => {
      const value = (await createTag('tagged', { max_ttl: '30m' })).data.tag_value;
      const encoded = Buffer.from(value).toString('base64');
      const now = Date.now();
      expect((await h.root.post(`auth/cloud/roletag-denylist/${encoded}`)).status).to.equal(204);
      for (const name of [value, encoded]) {
        const read = await h.root.get(`auth/cloud/roletag-denylist/${name}`);
        expect(read.status, read.text).to.equal(200);
        expect(Object.keys(read.body.data).sort()).to.deep.equal(['creation_time', 'expiration_time']);
        // The longest of the tag's (30m), the role's (10h) and the mount's (768h) max TTL.
        expect(Date.parse(read.body.data.expiration_time) - Date.parse(read.body.data.creation_time)).to.equal(768 * 3600 * 1000);
        expect(Date.parse(read.body.data.creation_time)).to.be.within(now - 5000, now + 5000);
      }
      expect((await h.root.list('auth/cloud/roletag-denylist')).body.data.keys).to.include(value);
      const created = (await h.root.get(`auth/cloud/roletag-denylist/${value}`)).body.data.creation_time;
      await h.root.post(`auth/cloud/roletag-denylist/${value}`);
      expect((await h.root.get(`auth/cloud/roletag-denylist/${value}`)).body.data.creation_time).to.equal(created);
      expect((await h.root.delete(`auth/cloud/roletag-denylist/${encoded}`)).status).to.equal(204);
      expect((await h.root.get(`auth/cloud/roletag-denylist/${value}`)).status).to.equal(404);
    });

    it('answers under the deprecated roletag-blacklist names too', async () => {
      const value = (await createTag('tagged')).data.tag_value;
      expect((await h.root.post(`auth/cloud/roletag-blacklist/${value}`)).status).to.equal(204);
      expect((await h.root.get(`auth/cloud/roletag-denylist/${value}`)).status).to.equal(200);
      expect((await h.root.get(`auth/cloud/roletag-blacklist/${value}`)).status).to.equal(200);
      expect((await h.root.list('auth/cloud/roletag-blacklist')).body.data.keys).to.include(value);
      expect((await h.root.delete(`auth/cloud/roletag-blacklist/${value}`)).status).to.equal(204);
      expect((await h.root.get(`auth/cloud/roletag-denylist/${value}`)).status).to.equal(404);
    });

    it('refuses to deny-list what is not a valid tag of this server', async () => {
      const value = (await createTag('tagged')).data.tag_value;
      const forged = value.replace(/:[^:]+$/, ':AAAA');
      expectError(await h.root.post(`auth/cloud/roletag-denylist/${forged}`), 400, 'failed to verify the role tag and parse it: role tag signature verification failed');
      expectError(await h.root.post('auth/cloud/roletag-denylist/garbage'), 400, 'failed to verify the role tag and parse it: invalid tag');
      expect((await h.root.list('auth/cloud/roletag-denylist')).body.data?.keys ?? []).not.to.include(forged);
    });
  });

  describe('rewritten spellings', () => {
    const NOT_CANONICAL =
      'the role tag is not in its canonical form (as role/<role>/tag wrote it: items r, d, m, p, i, t in that order and each ' +
      'at most once, d and m as true or false, policies sorted and unique without spaces, no empty p= and no t=0)';
    const withHmac = (value: string, rewrite: (plaintext: string) => string) => {
      const at = value.lastIndexOf(':');
      return `${rewrite(value.slice(0, at))}${value.slice(at)}`;
    };
    /** Each parses to the fields of `value` (so its HMAC verifies over their canonical form) but is spelled otherwise. */
    const rewritings = (value: string): Record<string, string> => {
      expect(value).to.match(/^v1:[^:]+:r=tagged:d=false:m=false:p=api,web:[^:]+$/);
      return {
        'items reordered': withHmac(value, (t) => t.replace(':d=false:m=false', ':m=false:d=false')),
        'd=0': withHmac(value, (t) => t.replace(':d=false', ':d=0')),
        'm=F': withHmac(value, (t) => t.replace(':m=false', ':m=F')),
        'an item repeated': withHmac(value, (t) => t.replace(':r=tagged', ':r=tagged:r=tagged')),
        'policies padded': withHmac(value, (t) => t.replace(':p=api,web', ':p= api,web')),
        'policies repeated': withHmac(value, (t) => t.replace(':p=api,web', ':p=api,api,web')),
        'an extra t=0': withHmac(value, (t) => `${t}:t=0`),
      };
    };
    const createWebApiTag = async () => (await createTag('tagged', { policies: 'web,api' })).data.tag_value;

    it('refuses every rewritten spelling of a deny-listed tag at login, and writes no access-list entry', async () => {
      const value = await createWebApiTag();
      expect((await h.root.post(`auth/cloud/roletag-denylist/${value}`)).status).to.equal(204);
      expectError(await login(tagged(value)), 400, 'role tag is deny listed');
      for (const [form, rewritten] of Object.entries(rewritings(value))) {
        expect(parseRoleTag(rewritten), form).to.deep.equal(parseRoleTag(value));
        const instance = tagged(rewritten);
        const res = await login(instance);
        expect(res.status, `${form}: ${res.text}`).to.equal(400);
        expect(res.body.errors, form).to.deep.equal([`invalid role tag on the instance: ${NOT_CANONICAL}`]);
        expect((await h.root.get(`auth/cloud/identity-accesslist/${instance.instanceId}`)).status, form).to.equal(404);
      }
    });

    it('logs in only with the canonical spelling of a tag that is not deny-listed', async () => {
      const value = await createWebApiTag();
      for (const [form, rewritten] of Object.entries(rewritings(value))) {
        const res = await login(tagged(rewritten));
        expect(res.status, `${form}: ${res.text}`).to.equal(400);
        expect(res.body.errors, form).to.deep.equal([`invalid role tag on the instance: ${NOT_CANONICAL}`]);
      }
      const res = await login(tagged(value));
      expect(res.status, res.text).to.equal(200);
      expect(res.body.auth.policies).to.deep.equal(['api', 'default', 'web']);
    });

    it('refuses to deny-list a rewritten spelling, and finds and removes an entry by any spelling', async () => {
      const value = await createWebApiTag();
      const spellings = rewritings(value);
      for (const [form, rewritten] of Object.entries(spellings)) {
        const res = await h.root.post(`auth/cloud/roletag-denylist/${Buffer.from(rewritten).toString('base64url')}`);
        expect(res.status, `${form}: ${res.text}`).to.equal(400);
        expect(res.body.errors, form).to.deep.equal([`failed to verify the role tag and parse it: ${NOT_CANONICAL}`]);
      }
      expect(await denyListed()).not.to.include(value);
      expect((await h.root.post(`auth/cloud/roletag-denylist/${value}`)).status).to.equal(204);
      for (const [form, rewritten] of Object.entries(spellings)) {
        expect((await h.root.get(`auth/cloud/roletag-denylist/${Buffer.from(rewritten).toString('base64url')}`)).status, form).to.equal(200);
      }
      expect((await denyListed()).filter((tag) => parseRoleTag(tag).nonce === parseRoleTag(value).nonce)).to.deep.equal([value]);
      expect((await h.root.delete(`auth/cloud/roletag-denylist/${Buffer.from(spellings['an extra t=0']!).toString('base64url')}`)).status).to.equal(204);
      expect((await h.root.get(`auth/cloud/roletag-denylist/${value}`)).status).to.equal(404);
      expect((await login(tagged(value))).status).to.equal(200);
    });

    it('keeps denying a tag that an earlier version deny-listed under a rewritten spelling, until the periodic hook moves the entry under the canonical key', async () => {
      const value = await createWebApiTag();
      const rewritten = rewritings(value)['policies padded']!;
      // What an earlier version stored for `roletag-denylist/<rewritten>`: the entry keyed by the spelling as given.
      const storage = h.server.host.mounts!.live('auth', 'cloud/').storage;
      const legacyKey = STORAGE_KEYS.denyListPrefix + Buffer.from(rewritten, 'utf8').toString('base64url');
      const canonicalKey = STORAGE_KEYS.denyListPrefix + Buffer.from(value, 'utf8').toString('base64url');
      const entry = { creation_time: '2025-01-01T00:00:00.000Z', expiration_time: '2125-01-01T00:00:00.000Z' };
      await storage.put(legacyKey, Buffer.from(JSON.stringify(entry), 'utf8'));

      expectError(await login(tagged(value)), 400, 'role tag is deny listed');
      const read = await h.root.get(`auth/cloud/roletag-denylist/${value}`);
      expect(read.status, read.text).to.equal(200);
      expect(read.body.data).to.deep.equal(entry);
      expect(await denyListed()).to.include(value).and.not.include(rewritten);

      await h.server.host.runPeriodic();
      expect(await storage.get(legacyKey)).to.equal(undefined);
      expect(JSON.parse(Buffer.from((await storage.get(canonicalKey))!).toString('utf8'))).to.deep.equal(entry);
      expectError(await login(tagged(value)), 400, 'role tag is deny listed');

      expect((await h.root.delete(`auth/cloud/roletag-denylist/${value}`)).status).to.equal(204);
      expect((await login(tagged(value))).status).to.equal(200);
    });
  });
});
