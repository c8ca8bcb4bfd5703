/**
 * The CLI's output in vault's shapes: -format=table|json|yaml (and VAULT_FORMAT), -field, warnings.
 * The formatting rules first, then the CLI as a user runs it (a subprocess) against a real server.
 */
import { expect } from 'chai';
import YAML from 'yaml';
import { fieldOf, goValue, humanDuration, render } from '../../../core/cli/output.js';
import { runCli } from '../../helpers/cli.js';
import { startUnsealedServer, tempDir } from '../../helpers/server.js';
import type { RunningServer } from '../../../core/server.js';

describe('CLI output formatting', () => {
  it('prints durations as vault does, without zero minutes and seconds', () => {
    expect([0, 45, 60, 90, 3600, 3605, 3660, 768 * 3600].map(humanDuration)).to.deep.equal(['0s', '45s', '1m', '1m30s', '1h', '1h5s', '1h1m', '768h']);
  });

  it("prints table values as Go's %v: lists in brackets, maps with sorted keys, null as <nil>", () => {
    expect(goValue(['a', 'b'])).to.equal('[a b]');
    expect(goValue({ b: 2, a: [1, 2] })).to.equal('map[a:[1 2] b:2]');
    expect(goValue(null)).to.equal('<nil>');
  });

  it('prints a bare JSON answer (no envelope) as the data of a secret, as vault\'s api.ParseSecret does', () => {
    const json = JSON.parse(render('json', { sealed: false, t: 1 }));
    expect(json).to.deep.equal({ request_id: '', lease_id: '', lease_duration: 0, renewable: false, data: { sealed: false, t: 1 }, warnings: null });
  });

  it('takes -field from the auth block when there is one, else from data', () => {
    const login = { auth: { client_token: 's.abc', policies: ['default'] }, data: { token: 'not this one' } };
    expect(fieldOf(login, 'token')).to.equal('s.abc');
    expect(fieldOf(login, 'identity_policies')).to.deep.equal([]);
    expect(fieldOf({ data: { token: 'from data' } }, 'token')).to.equal('from data');
    expect(fieldOf({ data: { a: 1 } }, 'missing')).to.equal(undefined);
  });
});

describe('keywarden CLI -format and -field', function () {
  this.timeout(60_000);
  let server: RunningServer & { rootToken: string };
  let home: { path: string; remove: () => Promise<void> };
  let env: NodeJS.ProcessEnv;

  before(async () => {
    server = await startUnsealedServer();
    home = await tempDir();
    env = { PATH: process.env.PATH, HOME: home.path, VAULT_ADDR: server.address, VAULT_TOKEN: server.rootToken };
    const mount = await runCli(['secrets', 'enable', 'transit'], env);
    expect(mount.code, mount.stderr).to.equal(0);
    expect((await runCli(['write', 'transit/keys/app', 'type=aes256-gcm96'], env)).code).to.equal(0);
  });
  after(async () => {
    await server.close();
    await home.remove();
  });

  it('table: a Key/Value header, sorted rows, TTL-like values as durations', async () => {
    const run = await runCli(['read', 'transit/keys/app'], env);
    expect(run.code, run.stderr).to.equal(0);
    const lines = run.stdout.split('\n');
    expect(lines[0]).to.match(/^Key {4,}Value$/);
    expect(lines[1]).to.match(/^--- {4,}-----$/);
    const keys = lines.slice(2).filter(Boolean).map((l) => l.split(/\s+/)[0]!);
    expect(keys).to.deep.equal([...keys].sort());
    expect(run.stdout).to.match(/\nauto_rotate_period {4,}0s\n/);
    expect(run.stdout).to.match(/\nkeys {4,}map\[1:\d+\]\n/);
  });

  it('json: the whole response as vault\'s api.Secret (request_id, lease fields, data, warnings)', async () => {
    const run = await runCli(['read', '-format=json', 'transit/keys/app'], env);
    const body = JSON.parse(run.stdout);
    expect(Object.keys(body)).to.deep.equal(['request_id', 'lease_id', 'lease_duration', 'renewable', 'data', 'warnings']);
    expect(body.data.name).to.equal('app');
    expect(body.data.type).to.equal('aes256-gcm96');
  });

  it('yaml: the same document as YAML', async () => {
    const json = JSON.parse((await runCli(['read', '-format=json', 'transit/keys/app'], env)).stdout);
    const run = await runCli(['read', '-format=yaml', 'transit/keys/app'], env);
    expect(run.code, run.stderr).to.equal(0);
    const yaml = YAML.parse(run.stdout);
    expect(yaml).to.deep.equal({ ...json, request_id: yaml.request_id });
    expect(run.stdout).to.match(/^data:\n {2}allow_plaintext_backup: false\n/);
  });

  it('token create -format=json prints the auth envelope; -field=token only the token, with no newline when piped', async () => {
    const json = JSON.parse((await runCli(['token', 'create', '-policy=default', '-ttl=1h', '-format=json'], env)).stdout);
    expect(json.data).to.equal(null);
    expect(Object.keys(json.auth)).to.deep.equal([
      'client_token', 'accessor', 'policies', 'token_policies', 'identity_policies', 'metadata', 'orphan', 'entity_id', 'lease_duration', 'renewable', 'mfa_requirement',
    ]);
    expect(json.auth.lease_duration).to.equal(3600);
    const field = await runCli(['token', 'create', '-policy=default', '-field=token'], env);
    expect(field.stdout).to.match(/^hvs\.[A-Za-z0-9]+$/);
    const lookup = await runCli(['token', 'lookup', '-field=policies', field.stdout], env);
    expect(lookup.stdout).to.equal('[default]');
  });

  it('token create table: token rows first, the duration human, policies quoted', async () => {
    const run = await runCli(['token', 'create', '-policy=default', '-ttl=90m', '-metadata=team=ops'], env);
    const rows = run.stdout.split('\n').slice(2).filter(Boolean).map((l) => l.split(/ {4,}/));
    expect(rows.map((r) => r[0])).to.deep.equal(['token', 'token_accessor', 'token_duration', 'token_renewable', 'token_policies', 'identity_policies', 'policies', 'token_meta_team']);
    expect(Object.fromEntries(rows)).to.include({ token_duration: '1h30m', token_renewable: 'true', token_policies: '["default"]', identity_policies: '[]', token_meta_team: 'ops' });
  });

  it('-field with -format=json prints the value as JSON; a missing field is an error, exit 1', async () => {
    const run = await runCli(['read', '-field=keys', '-format=json', 'transit/keys/app'], env);
    expect(Object.keys(JSON.parse(run.stdout))).to.deep.equal(['1']);
    const missing = await runCli(['read', '-field=nope', 'transit/keys/app'], env);
    expect(missing.code).to.equal(1);
    expect(missing.stdout).to.equal('');
    expect(missing.stderr).to.equal('Field "nope" not present in secret\n');
  });

  it('-field reads a bare answer\'s fields too (sys/seal-status)', async () => {
    expect((await runCli(['read', '-field=sealed', 'sys/seal-status'], env)).stdout).to.equal('false');
  });

  it('VAULT_FORMAT applies when -format is not given; -format wins over it', async () => {
    const fromEnv = await runCli(['read', 'transit/keys/app'], { ...env, VAULT_FORMAT: 'json' });
    expect(JSON.parse(fromEnv.stdout).data.name).to.equal('app');
    const yaml = await runCli(['status'], { ...env, VAULT_FORMAT: 'yaml' });
    expect(YAML.parse(yaml.stdout)).to.include({ sealed: false, ha_enabled: false });
    const flag = await runCli(['read', '-format=table', 'transit/keys/app'], { ...env, VAULT_FORMAT: 'json' });
    expect(flag.stdout).to.match(/^Key/);
    const bad = await runCli(['read', 'transit/keys/app'], { ...env, VAULT_FORMAT: 'xml' });
    expect(bad.code).to.equal(1);
    expect(bad.stderr).to.contain('Invalid output format: xml');
  });

  it('a missing path: "No value found at <path>" on standard error, exit 2, in every format', async () => {
    for (const format of ['table', 'json', 'yaml']) {
      const run = await runCli(['read', `-format=${format}`, '/transit/keys/nothing/'], env);
      expect(run.code).to.equal(2);
      expect(run.stdout).to.equal('');
      expect(run.stderr).to.equal('No value found at transit/keys/nothing\n');
    }
  });

  it('warnings go to standard error above a table, and stay inside the JSON document', async () => {
    const args = ['token', 'create', '-policy=default', '-ttl=2h', '-explicit-max-ttl=1h'];
    const table = await runCli(args, env);
    expect(table.stderr).to.match(/^WARNING! The following warnings were returned from the server:\n\n {2}\* TTL of 7200s exceeded/);
    expect(table.stdout).to.match(/^Key/);
    const json = await runCli([...args, '-format=json'], env);
    expect(json.stderr).to.equal('');
    expect(JSON.parse(json.stdout).warnings[0]).to.contain('exceeded');
  });

  it('secrets list, auth list and status print JSON and YAML documents', async () => {
    expect(JSON.parse((await runCli(['secrets', 'list', '-format=json'], env)).stdout)['transit/'].type).to.equal('transit');
    expect(YAML.parse((await runCli(['auth', 'list', '-format=yaml'], env)).stdout)['token/'].type).to.equal('token');
    const status = JSON.parse((await runCli(['status', '-format=json'], env)).stdout);
    expect(status).to.include({ initialized: true, sealed: false, ha_enabled: false });
  });
});
