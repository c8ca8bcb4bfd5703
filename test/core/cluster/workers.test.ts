/**
 * `keywarden server` with two workers (core/cluster/): what holds for one process holds across
 * them. Each check sends its requests to a chosen worker through a connection pinned to it
 * (test/helpers/workers.ts) and looks at the other worker right after the answer.
 */
import { expect } from 'chai';
import http from 'node:http';
import net from 'node:net';
import { generateKeyPairSync } from 'node:crypto';
import { spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { readFile } from 'node:fs/promises';
import { resolveWorkers } from '../../../core/cluster/workers.js';
import { ConfigError } from '../../../core/config/config.js';
import { tempDir } from '../../helpers/server.js';
import { request } from '../../helpers/http.js';
import { CLI_BIN } from '../../helpers/cli.js';
import { spawnServer, writeConfig } from '../../reliability/support/child.js';
import { send } from '../../reliability/support/http.js';
import { activeAndStandby, PinnedClient, startWorkers, until, type WorkersServer } from '../../helpers/workers.js';
import { parseExposition, type Family } from '../../helpers/prometheus.js';

describe('workers: how many serving processes', () => {
  it('takes the -workers flag over the configuration, and the configuration over the machine\'s available parallelism', () => {
    expect(resolveWorkers('3', { workers: 2 })).to.equal(3);
    expect(resolveWorkers(undefined, { workers: 2 })).to.equal(2);
    expect(resolveWorkers(undefined, {})).to.equal(os.availableParallelism());
  });

  it('refuses a -workers flag that is not a whole number of at least 1, naming the flag and the value', () => {
    for (const bad of ['0', '-1', '1.5', 'all', '']) {
      expect(() => resolveWorkers(bad, {})).to.throw(ConfigError, `-workers: expected a whole number of at least 1, got "${bad}"`);
    }
  });
});

describe('keywarden server with two workers', function () {
  this.timeout(120_000);
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let server: WorkersServer;
  let rootToken: string;
  let unsealKey: string;
  let active: PinnedClient;
  let standby: PinnedClient;
  let auditFile: string;

  before(async () => {
    dir = await tempDir();
    auditFile = path.join(dir.path, 'audit.log');
    server = await startWorkers(dir.path, { settings: { periodic_interval: '1s', audit: [{ file: { file: { options: { file_path: auditFile } } } }] } });
    const init = await request(server.address, 'PUT', 'sys/init', { body: { secret_shares: 1, secret_threshold: 1 } });
    expect(init.status, init.text).to.equal(200);
    rootToken = init.body.root_token as string;
    unsealKey = init.body.keys[0] as string;
    const unsealed = await request(server.address, 'PUT', 'sys/unseal', { body: { key: unsealKey } });
    expect(unsealed.body.sealed, unsealed.text).to.equal(false);
    ({ active, standby } = await activeAndStandby(server.address, rootToken));
    const mounted = await active.post('sys/mounts/kv', { type: 'kv', options: { version: '2' } });
    expect(mounted.status, mounted.text).to.equal(204);
  });

  after(async () => {
    active?.close();
    standby?.close();
    if (server) expect(await server.stop(), server.output()).to.equal(0);
    await dir?.remove();
  });

  it('names its worker in every log line of a worker, and each worker listens', () => {
    const listening = server
      .output()
      .split('\n')
      .filter((line) => line.includes('"msg":"listening"'))
      .map((line) => (JSON.parse(line) as { worker?: number }).worker);
    expect(listening.sort()).to.deep.equal([1, 2]);
  });

  it('seals every worker before a seal through one answers, and unseals every worker (one of them active) before an unseal through one answers', async () => {
    for (const [through, other] of [
      [standby, active],
      [active, standby],
    ] as const) {
      const sealed = await through.put('sys/seal');
      expect(sealed.status, sealed.text).to.equal(204);
      expect((await other.get('sys/seal-status')).body.sealed).to.equal(true);
      const unsealed = await through.put('sys/unseal', { key: unsealKey });
      expect(unsealed.body.sealed, unsealed.text).to.equal(false);
      expect((await other.get('sys/seal-status')).body.sealed).to.equal(false);
      // One worker is active by then: a write through either is served at once.
      const written = await other.post('kv/data/after-unseal', { data: { through: through === standby ? 'standby' : 'active' } });
      expect(written.status, written.text).to.equal(200);
    }
    // The workers elect an active one again; new pinned connections learn which.
    active.close();
    standby.close();
    ({ active, standby } = await activeAndStandby(server.address, rootToken));
  });

  it('reads on one worker what was written through the other, at once, both ways', async () => {
    for (let i = 0; i < 10; i++) {
      const [writer, reader] = i % 2 === 0 ? [standby, active] : [active, standby];
      const written = await writer.post('kv/data/ryw', { data: { n: i } });
      expect(written.status, written.text).to.equal(200);
      const read = await reader.get('kv/data/ryw');
      expect(read.body.data.data, read.text).to.deep.equal({ n: i });
    }
  });

  it('refuses a revoked token on the other worker as soon as the revoke answers', async () => {
    for (const [revoker, other] of [
      [standby, active],
      [active, standby],
    ] as const) {
      const created = await active.post('auth/token/create', { policies: ['default'] });
      const token = created.body.auth.client_token as string;
      expect((await other.get('auth/token/lookup-self', { token })).status).to.equal(200);
      const revoked = await revoker.post('auth/token/revoke-self', undefined, { token });
      expect(revoked.status, revoked.text).to.equal(204);
      expect((await other.get('auth/token/lookup-self', { token })).status).to.equal(403);
      expect((await revoker.get('auth/token/lookup-self', { token })).status).to.equal(403);
    }
  });

  it('lets a token of one use be used once, whichever workers its concurrent requests reach', async () => {
    const created = await active.post('auth/token/create', { num_uses: 1 });
    const token = created.body.auth.client_token as string;
    const clients = [active, standby, active, standby, active, standby];
    const answers = await Promise.all(clients.map((client) => client.get('auth/token/lookup-self', { token })));
    expect(answers.filter((answer) => answer.status === 200)).to.have.length(1);
  });

  it('unwraps a wrapping token once, whichever workers its concurrent unwraps reach', async () => {
    const wrapped = await active.post('sys/wrapping/wrap', { secret: 'once' }, { headers: { 'X-Vault-Wrap-TTL': '60s' } });
    const token = wrapped.body.wrap_info.token as string;
    const clients = [standby, active, standby, active];
    const answers = await Promise.all(clients.map((client) => client.post('sys/wrapping/unwrap', undefined, { token })));
    const opened = answers.filter((answer) => answer.status === 200);
    expect(opened).to.have.length(1);
    expect(opened[0]!.body.data).to.deep.equal({ secret: 'once' });
  });

  it('accepts one of concurrent check-and-set writes that expect the same version, across workers', async () => {
    const clients = [active, standby, active, standby, active, standby];
    const answers = await Promise.all(clients.map((client, n) => client.post('kv/data/cas', { options: { cas: 0 }, data: { n } })));
    expect(answers.filter((answer) => answer.status === 200)).to.have.length(1);
  });

  it('audits each request once, in whole lines, whichever worker served it, a write a standby forwarded included', async () => {
    const paths = Array.from({ length: 20 }, (_, i) => `kv/data/audited-${i}`);
    await Promise.all(paths.map((p, i) => (i % 2 === 0 ? active : standby).get(p)));
    const written = Array.from({ length: 10 }, (_, i) => `kv/data/audited-write-${i}`);
    const writes = await Promise.all(written.map((p, i) => (i % 2 === 0 ? active : standby).post(p, { data: { i } })));
    expect(writes.map((w) => w.status)).to.deep.equal(written.map(() => 200));
    paths.push(...written);
    const lines = (await readFile(auditFile, 'utf8')).split('\n').filter((line) => line !== '');
    const entries = lines.map((line) => JSON.parse(line) as { type: string; request: { path: string } });
    for (const p of paths) {
      expect(entries.filter((e) => e.type === 'request' && e.request.path === p), p).to.have.length(1);
      expect(entries.filter((e) => e.type === 'response' && e.request.path === p), p).to.have.length(1);
    }
  });

  it('reports the whole server in sys/metrics through either worker: counts summed, each process\'s own gauges labelled by worker', async () => {
    const scrape = async (client: PinnedClient): Promise<Family[]> => {
      const res = await client.get('sys/metrics?format=prometheus');
      expect(res.status, res.text).to.equal(200);
      return parseExposition(res.text);
    };
    const reads = (families: Family[]) =>
      families.find((f) => f.name === 'keywarden_requests_total')?.metrics.find((m) => m.labels.mount === 'kv/' && m.labels.operation === 'read' && m.labels.status === '404')?.value ?? 0;
    const before = reads(await scrape(active));
    for (const client of [active, active, active, standby, standby]) expect((await client.get('kv/data/metrics-probe')).status).to.equal(404);
    for (const client of [active, standby]) {
      const families = await scrape(client);
      expect(reads(families) - before).to.equal(5);
      const byName = (name: string) => families.find((f) => f.name === name)!.metrics;
      expect(byName('keywarden_runtime_resident_memory_bytes').map((m) => m.labels.worker).sort()).to.deep.equal(['1', '2']);
      // The server is unsealed and has one active worker, however many workers it runs.
      expect(byName('keywarden_core_unsealed').map((m) => m.value)).to.deep.equal([1]);
      expect(byName('keywarden_ha_active').map((m) => m.value)).to.deep.equal([1]);
      const latency = byName('keywarden_request_duration_seconds').find((m) => m.labels.mount === 'kv/' && m.labels.operation === 'read')!;
      expect(latency.count).to.be.at.least(5);
    }
    const json = await standby.get('sys/metrics');
    const counted = (json.body.Counters as { Name: string; Count: number; Labels: Record<string, string> }[]).find(
      (c) => c.Name === 'keywarden_requests_total' && c.Labels.mount === 'kv/' && c.Labels.operation === 'read' && c.Labels.status === '404',
    );
    expect(counted?.Count).to.equal(before + 5);
  });

  it('lists in sys/in-flight-req the requests every worker is answering, whichever worker is asked', async () => {
    // A JWT login for a batch token, which the standby answers itself, waits there for the key set this server holds back.
    const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const held: http.ServerResponse[] = [];
    let hold = false;
    const keys = http.createServer((_req, res) => {
      if (!hold) res.end(JSON.stringify({ keys: [{ ...publicKey.export({ format: 'jwk' }), kid: 'k', use: 'sig', alg: 'ES256' }] }));
      else held.push(res);
    });
    await new Promise<void>((resolve) => keys.listen(0, '127.0.0.1', resolve));
    try {
      const jwksUrl = `http://127.0.0.1:${(keys.address() as net.AddressInfo).port}/keys`;
      expect((await active.post('sys/auth/jwt', { type: 'jwt', config: { token_type: 'batch' } })).status).to.equal(204);
      const configured = await active.post('auth/jwt/config', { jwks_url: jwksUrl });
      expect(configured.status, configured.text).to.equal(204);
      expect((await active.post('auth/jwt/role/r', { role_type: 'jwt', user_claim: 'sub', bound_audiences: ['a'] })).status).to.equal(204);
      hold = true;
      const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
      const login = standby.post('auth/jwt/login', { role: 'r', jwt: `${part({ alg: 'ES256', kid: 'k' })}.${part({ sub: 'x', aud: 'a' })}.c2ln` });
      await until(() => held.length === 1);
      const listed = await active.get('sys/in-flight-req');
      expect(listed.status, listed.text).to.equal(200);
      const entries = Object.values(listed.body as Record<string, { request_path: string; request_method: string }>);
      expect(entries.map((e) => `${e.request_method} ${e.request_path}`).sort()).to.deep.equal(['GET /v1/sys/in-flight-req', 'POST /v1/auth/jwt/login']);
      held[0]!.end(JSON.stringify({ keys: [] }));
      expect((await login).status).to.equal(400);
      const after = await standby.get('sys/in-flight-req');
      expect(Object.values(after.body as Record<string, { request_path: string }>).map((e) => e.request_path)).to.deep.equal(['/v1/sys/in-flight-req']);
    } finally {
      for (const res of held) res.destroy();
      keys.close();
    }
  });

  it('sweeps expired tokens on the active worker only, never on a standby', async () => {
    const sweeps = () =>
      server
        .output()
        .split('\n')
        .filter((line) => line.includes('expired tokens removed'))
        .map((line) => (JSON.parse(line) as { worker: number }).worker);
    const activeWorker = () => {
      const elected = server.output().split('\n').filter((line) => line.includes('"msg":"this node is now the active node"'));
      return (JSON.parse(elected[elected.length - 1]!) as { worker: number }).worker;
    };
    const before = sweeps().length;
    for (const client of [active, standby, standby]) expect((await client.post('auth/token/create', { ttl: '1s', policies: ['default'] })).status).to.equal(200);
    // periodic_interval is 1s in this server's configuration.
    await until(() => sweeps().length > before);
    expect(sweeps().slice(before)).to.deep.equal(sweeps().slice(before).map(() => activeWorker()));
  });

  it('hands the active role to the other worker on sys/step-down through the standby, the old one a standby before the answer', async () => {
    // Fresh connections: an idle one may have been closed, and its next request reach either worker.
    active.close();
    standby.close();
    ({ active, standby } = await activeAndStandby(server.address, rootToken));
    const elected = () => server.output().split('\n').filter((line) => line.includes('"msg":"this node is now the active node"'));
    const before = elected().length;
    const stepped = await standby.put('sys/step-down');
    expect(stepped.status, stepped.text).to.equal(204);
    expect((await active.get('sys/leader')).body.is_self).to.equal(false);
    await until(() => elected().length > before);
    expect(await standby.isActive()).to.equal(true);
    for (const client of [active, standby]) expect((await client.post('kv/data/after-step-down', { data: {} })).status).to.equal(200);
    [active, standby] = [standby, active];
  });

  it('reloads every worker on SIGHUP to the primary', async () => {
    const reopened = () => server.output().split('\n').filter((line) => line.includes('"msg":"reload: audit files reopened"'));
    const before = reopened().length;
    server.child.kill('SIGHUP');
    await until(() => reopened().length >= before + 2);
    const workers = reopened()
      .slice(before)
      .map((line) => (JSON.parse(line) as { worker: number }).worker);
    expect(workers.sort()).to.deep.equal([1, 2]);
  });
});

describe('keywarden server -dev with two workers', function () {
  this.timeout(120_000);

  it('boots once: one banner and root token, the dev mounts, and both workers serve them', async () => {
    const dir = await tempDir();
    const { VAULT_DEV_ROOT_TOKEN_ID: _machine, ...inherited } = process.env;
    const child = spawn(process.execPath, [CLI_BIN, 'server', '-dev', '-workers=2', '-dev-listen-address=127.0.0.1:0'], {
      cwd: dir.path,
      env: { ...inherited, KEYWARDEN_TOKEN_FILE: path.join(dir.path, '.keywarden-token') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    try {
      // The banner follows that line once the root token is stored for the CLI.
      await until(() => (output.includes('"msg":"every worker serves"') && output.includes('Root Token: ')) || child.exitCode !== null);
      expect(output.match(/Root Token: /g), output).to.have.length(1);
      const token = /Root Token: (\S+)/.exec(output)![1]!;
      const address = /export VAULT_ADDR='([^']+)'/.exec(output)![1]!;
      const { active, standby } = await activeAndStandby(address, token);
      const written = await standby.post('secret/data/dev', { data: { on: 'workers' } });
      expect(written.status, written.text).to.equal(200);
      expect((await active.get('secret/data/dev')).body.data.data).to.deep.equal({ on: 'workers' });
      active.close();
      standby.close();
      child.kill('SIGTERM');
      expect(await exited, output).to.equal(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      await dir.remove();
    }
  });
});

describe('keywarden server with two workers: faults', function () {
  this.timeout(240_000);

  it('restarts a worker killed under load; the other keeps serving and no acknowledged write is lost', async () => {
    const dir = await tempDir();
    const server = await startWorkers(dir.path, {});
    try {
      const init = await request(server.address, 'PUT', 'sys/init', { body: { secret_shares: 1, secret_threshold: 1 } });
      const token = init.body.root_token as string;
      await request(server.address, 'PUT', 'sys/unseal', { body: { key: init.body.keys[0] } });
      const { active } = await activeAndStandby(server.address, token);
      expect((await active.post('sys/mounts/kv', { type: 'kv' })).status).to.equal(204);
      active.close();
      const acknowledged: string[] = [];
      let failed = 0;
      let stop = false;
      // Four writers, each request on a new connection, so both workers take writes. A deadline:
      // a connection node:cluster handed to the worker as it died is never answered (nor closed).
      const writers = Array.from({ length: 4 }, async (_, w) => {
        for (let i = 0; !stop; i++) {
          const key = `kv/w${w}-${i}`;
          const put = { method: 'PUT', path: `/v1/${key}`, headers: { 'X-Vault-Token': token }, body: JSON.stringify({ value: key }) };
          const res = await send(server.address, put, { timeoutMs: 5_000 }).catch(() => undefined);
          if (res?.status === 204) acknowledged.push(key);
          else failed++;
        }
      });
      await until(() => acknowledged.length >= 40);
      const pid = Number(/"worker_number":2,"pid":(\d+)[^\n]*"msg":"worker started"/.exec(server.output())![1]);
      process.kill(pid, 'SIGKILL');
      await until(() => server.output().includes('"msg":"the worker serves again"'));
      const afterRestart = acknowledged.length;
      await until(() => acknowledged.length >= afterRestart + 40);
      stop = true;
      await Promise.all(writers);
      const lost: string[] = [];
      for (const key of acknowledged) {
        const read = await request(server.address, 'GET', key, { token });
        if (read.status !== 200 || read.body.data.value !== key) lost.push(key);
      }
      expect(lost, `${acknowledged.length} acknowledged, ${failed} failed`).to.deep.equal([]);
      expect(server.output()).to.match(/"worker_number":2[^\n]*"reason":"killed by SIGKILL"[^\n]*"msg":"a worker stopped; starting it again"/);
      expect(await server.stop(), server.output()).to.equal(0);
    } finally {
      if (server.child.exitCode === null) server.kill();
      await dir.remove();
    }
  });

  it('stops with one clear error, and starts no worker again, when the listener\'s port is taken', async () => {
    const dir = await tempDir();
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const port = (taken.address() as net.AddressInfo).port;
      const file = await writeConfig(dir.path, { dataDir: path.join(dir.path, 'data'), listener: { address: `127.0.0.1:${port}` } });
      const started = spawnServer(file, dir.path, 60_000, 2);
      const failure = await started.then(
        () => undefined,
        (err: Error) => err.message,
      );
      expect(failure).to.be.a('string');
      expect(failure!.match(/Error starting the server/g)).to.have.length(1);
      expect(failure).to.match(/Error starting the server: listen EADDRINUSE: address already in use 127\.0\.0\.1:\d+\n/);
      expect(failure!.match(/"msg":"worker started"/g)).to.have.length(1);
      expect(failure).to.match(/server exited \(1\)/);
    } finally {
      taken.close();
      await dir.remove();
    }
  });
});
