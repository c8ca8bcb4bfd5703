/**
 * User lockout over HTTP (https://developer.hashicorp.com/vault/docs/concepts/user-lockout): failed
 * logins lock a user out of an approle or userpass mount, with Vault's answer, until the lockout
 * duration passes or an operator unlocks it through sys/locked-users; the mount's tune and the
 * configuration file's `user_lockout` stanza set the bounds.
 */
import { expect } from 'chai';
import { ManualClock, initAndUnseal, startTestServer, startUnsealedServer, tempDir } from '../../../helpers/server.js';
import { TestClient } from '../../../helpers/http.js';
import type { RunningServer } from '../../../../core/server.js';

describe('user lockout of logins', function () {
  this.timeout(60_000);
  const clock = new ManualClock();
  let server: RunningServer & { client: TestClient };
  let root: TestClient;
  let anonymous: TestClient;
  let accessor: string;

  before(async () => {
    server = await startUnsealedServer({ plugins: [], clock });
    root = server.client;
    anonymous = new TestClient(server.address);
    expect((await root.post('sys/auth/machines', { type: 'approle' })).status).to.equal(204);
    expect((await root.post('sys/auth/machines/tune', { user_lockout_config: { lockout_threshold: 3, lockout_duration: '10m', lockout_counter_reset: '5m' } })).status).to.equal(204);
    accessor = (await root.get('sys/auth/machines')).body.data.accessor as string;
  });
  after(() => server.close());

  /** A role with a secret ID: the role ID (the locked user) and the right secret ID. */
  async function machine(name: string): Promise<{ roleId: string; secretId: string }> {
    await root.post(`auth/machines/role/${name}`, {});
    const roleId = (await root.get(`auth/machines/role/${name}/role-id`)).body.data.role_id as string;
    const secretId = (await root.post(`auth/machines/role/${name}/secret-id`, {})).body.data.secret_id as string;
    return { roleId, secretId };
  }
  const login = (roleId: string, secretId: string) => anonymous.post('auth/machines/login', { role_id: roleId, secret_id: secretId });
  async function fail(roleId: string, times: number): Promise<number[]> {
    const statuses: number[] = [];
    for (let i = 0; i < times; i++) statuses.push((await login(roleId, `wrong-${i}`)).status);
    return statuses;
  }

  it('locks a user out after lockout_threshold failed logins: even the right secret ID gets Vault\'s 403 "permission denied"', async () => {
    const { roleId, secretId } = await machine('guessed');
    expect(await fail(roleId, 3)).to.deep.equal([400, 400, 400]);
    const locked = await login(roleId, secretId);
    expect(locked.status).to.equal(403);
    expect(locked.body.errors).to.deep.equal(['permission denied']);
  });

  it('lists locked users by mount accessor in sys/locked-users, and unlocking lets the user in again', async () => {
    const { roleId, secretId } = await machine('listed');
    await fail(roleId, 3);
    const listed = await root.get(`sys/locked-users?mount_accessor=${accessor}`);
    expect(listed.status, listed.text).to.equal(200);
    const mount = listed.body.data.by_namespace[0].mount_accessors[0];
    expect(mount.mount_accessor).to.equal(accessor);
    expect(mount.alias_identifiers).to.include(roleId);
    expect((await root.post(`sys/locked-users/${accessor}/unlock/${roleId}`, {})).status).to.equal(204);
    const after = (await root.get(`sys/locked-users?mount_accessor=${accessor}`)).body.data.by_namespace[0].mount_accessors[0];
    expect(after.alias_identifiers).not.to.include(roleId);
    expect((await login(roleId, secretId)).status).to.equal(200);
  });

  it('lets the user in again once lockout_duration has passed since the last failure', async () => {
    const { roleId, secretId } = await machine('waited');
    await fail(roleId, 3);
    clock.advance(9 * 60);
    expect((await login(roleId, secretId)).status).to.equal(403);
    clock.advance(60);
    expect((await login(roleId, secretId)).status).to.equal(200);
  });

  it('starts the count again after lockout_counter_reset without a failure', async () => {
    const { roleId, secretId } = await machine('patient');
    await fail(roleId, 2);
    clock.advance(5 * 60 + 1);
    await fail(roleId, 2);
    expect((await login(roleId, secretId)).status).to.equal(200);
  });

  it('clears the count on a successful login', async () => {
    const { roleId, secretId } = await machine('careless');
    await fail(roleId, 2);
    expect((await login(roleId, secretId)).status).to.equal(200);
    await fail(roleId, 2);
    const again = (await root.post('auth/machines/role/careless/secret-id', {})).body.data.secret_id as string;
    expect((await login(roleId, again)).status).to.equal(200);
  });

  it('counts failures per user: another role on the mount is not locked', async () => {
    const locked = await machine('locked-one');
    const other = await machine('other-one');
    await fail(locked.roleId, 3);
    expect((await login(other.roleId, other.secretId)).status).to.equal(200);
  });

  it('shows the tune with Vault\'s names, and lockout_disable turns lockout off', async () => {
    const tune = (await root.get('sys/auth/machines/tune')).body.data;
    expect(tune).to.include({ user_lockout_threshold: 3, user_lockout_duration: 600, user_lockout_counter_reset_duration: 300, user_lockout_disable: false });
    await root.post('sys/auth/machines/tune', { user_lockout_config: { lockout_disable: true } });
    try {
      const { roleId, secretId } = await machine('unguarded');
      expect(await fail(roleId, 5)).to.deep.equal([400, 400, 400, 400, 400]);
      expect((await login(roleId, secretId)).status).to.equal(200);
    } finally {
      await root.post('sys/auth/machines/tune', { user_lockout_config: { lockout_disable: false } });
    }
  });

  it('refuses a user_lockout_config key it does not know, or a bad value, with a 400 naming it', async () => {
    const unknown = await root.post('sys/auth/machines/tune', { user_lockout_config: { lockout_tries: 3 } });
    expect(unknown.status).to.equal(400);
    expect(unknown.body.errors[0]).to.contain('unknown key "lockout_tries"');
    const bad = await root.post('sys/auth/machines/tune', { user_lockout_config: { lockout_threshold: 'many' } });
    expect(bad.status).to.equal(400);
    expect(bad.body.errors[0]).to.contain('lockout_threshold');
  });

  it('refuses user_lockout_config on an auth method with no login under lockout, as Vault does', async () => {
    const res = await root.post('sys/auth/token/tune', { user_lockout_config: { lockout_threshold: 3 } });
    expect(res.status).to.equal(400);
    expect(res.body.errors[0]).to.match(/^tuning of user lockout configuration for auth type "token" not allowed/);
  });

  it('locks out a userpass user by username, without checking the password', async () => {
    await root.post('sys/auth/people', { type: 'userpass' });
    await root.post('sys/auth/people/tune', { user_lockout_config: { lockout_threshold: 2 } });
    await root.post('auth/people/users/bob', { password: 'right' });
    for (let i = 0; i < 2; i++) expect((await anonymous.post('auth/people/login/bob', { password: 'wrong' })).status).to.equal(400);
    const locked = await anonymous.post('auth/people/login/bob', { password: 'right' });
    expect(locked.status).to.equal(403);
    expect(locked.body.errors).to.deep.equal(['permission denied']);
    const people = (await root.get('sys/auth/people')).body.data.accessor as string;
    const listed = (await root.get('sys/locked-users')).body.data;
    const mount = listed.by_namespace[0].mount_accessors.find((m: { mount_accessor: string }) => m.mount_accessor === people);
    expect(mount.alias_identifiers).to.deep.equal(['bob']);
  });

  it('locks out a username that does not exist just as one that does, so the lockout tells no one which users exist', async () => {
    await root.post('sys/auth/staff', { type: 'userpass' });
    await root.post('sys/auth/staff/tune', { user_lockout_config: { lockout_threshold: 2 } });
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await anonymous.post('auth/staff/login/nobody', { password: 'guess' })).status);
    expect(statuses).to.deep.equal([400, 400, 403]);
  });
});

describe('user lockout from the configuration file', function () {
  this.timeout(60_000);
  let server: RunningServer & { client: TestClient };

  before(async () => {
    server = await startUnsealedServer({ plugins: [], userLockout: { all: { threshold: 10 }, approle: { threshold: 2 } } });
  });
  after(() => server.close());

  it('takes the threshold of the stanza for the mount\'s type over the one for "all"; a tune overrides both', async () => {
    const root = server.client;
    const anonymous = new TestClient(server.address);
    await root.post('sys/auth/approle', { type: 'approle' });
    await root.post('auth/approle/role/r', {});
    const roleId = (await root.get('auth/approle/role/r/role-id')).body.data.role_id as string;
    const secretId = (await root.post('auth/approle/role/r/secret-id', {})).body.data.secret_id as string;
    for (let i = 0; i < 2; i++) await anonymous.post('auth/approle/login', { role_id: roleId, secret_id: 'wrong' });
    expect((await anonymous.post('auth/approle/login', { role_id: roleId, secret_id: secretId })).status).to.equal(403);
    const accessor = (await root.get('sys/auth/approle')).body.data.accessor as string;
    await root.post(`sys/locked-users/${accessor}/unlock/${roleId}`, {});
    await root.post('sys/auth/approle/tune', { user_lockout_config: { lockout_threshold: 4 } });
    for (let i = 0; i < 3; i++) await anonymous.post('auth/approle/login', { role_id: roleId, secret_id: 'wrong' });
    expect((await anonymous.post('auth/approle/login', { role_id: roleId, secret_id: secretId })).status).to.equal(200);
  });
});

describe('user lockout across a restart', function () {
  this.timeout(60_000);

  it('keeps a lock in storage: after a restart the user is still locked and listed', async () => {
    const dir = await tempDir('keywarden-lockout-');
    try {
      const first = await startTestServer({ plugins: [], leveldbPath: dir.path });
      let keys: string[] = [];
      let rootToken = '';
      let roleId = '';
      let secretId = '';
      let accessor = '';
      try {
        ({ keys, rootToken } = await initAndUnseal(first, 1, 1));
        await first.client.post('sys/auth/approle', { type: 'approle' });
        await first.client.post('sys/auth/approle/tune', { user_lockout_config: { lockout_threshold: 1 } });
        await first.client.post('auth/approle/role/r', {});
        roleId = (await first.client.get('auth/approle/role/r/role-id')).body.data.role_id as string;
        secretId = (await first.client.post('auth/approle/role/r/secret-id', {})).body.data.secret_id as string;
        accessor = (await first.client.get('sys/auth/approle')).body.data.accessor as string;
        expect((await new TestClient(first.address).post('auth/approle/login', { role_id: roleId, secret_id: 'wrong' })).status).to.equal(400);
      } finally {
        await first.close();
      }
      const second = await startTestServer({ plugins: [], leveldbPath: dir.path });
      try {
        await second.client.put('sys/unseal', { key: keys[0]! });
        const login = await new TestClient(second.address).post('auth/approle/login', { role_id: roleId, secret_id: secretId });
        expect(login.status).to.equal(403);
        second.client.token = rootToken;
        const listed = (await second.client.get(`sys/locked-users?mount_accessor=${accessor}`)).body.data;
        expect(listed.by_namespace[0].mount_accessors[0].alias_identifiers).to.deep.equal([roleId]);
      } finally {
        await second.close();
      }
    } finally {
      await dir.remove();
    }
  });
});
