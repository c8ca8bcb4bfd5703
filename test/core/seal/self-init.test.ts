/**
 * Declarative self-initialization (issue #32, item 5; OpenBao 2.4): `initialize` stanzas run once,
 * in order, on the first start of an auto-sealed store, through the normal pipeline with a root
 * token revoked at the end; a failed request stops the rest unless it allows failure; `env://` and
 * `file://` values are resolved when the requests run. In-process servers with a static seal.
 */
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { pino } from 'pino';
import { startServer, type RunningServer } from '../../../core/server.js';
import { parseConfig } from '../../../core/config/config.js';
import { TestClient } from '../../helpers/http.js';
import { tempDir } from '../../helpers/server.js';

type LogLine = Record<string, unknown> & { msg: string };

/** A logger whose lines the test reads. */
function capturingLogger(): { logger: pino.Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) });
  return { logger, lines };
}

const SUPERUSER = 'path "*" { capabilities = ["create", "read", "update", "delete", "list", "sudo"] }';

/** Requests that leave a way in: userpass with an admin whose password comes from `password`. */
function adminRequests(password: string): Record<string, unknown> {
  return {
    'superuser-policy': { operation: 'update', path: 'sys/policies/acl/superuser', data: { policy: SUPERUSER } },
    'enable-userpass': { operation: 'update', path: 'sys/auth/userpass', data: { type: 'userpass' } },
    'admin-user': { operation: 'update', path: 'auth/userpass/users/admin', data: { password, token_policies: ['superuser'] } },
  };
}

describe('self-initialization from initialize stanzas', function () {
  this.timeout(60_000);
  let dir: { path: string; remove: () => Promise<void> };
  let server: RunningServer | undefined;
  const sealKey = randomBytes(32).toString('hex');

  /** Starts a server on `storage` with a static seal and `initialize`; answers it with its log. */
  async function start(initialize: Record<string, unknown>, storage: Record<string, unknown> = { inmem: {} }) {
    const config = parseConfig(
      {
        listener: { tcp: { address: '127.0.0.1:0', tls_disable: true } },
        storage,
        seal: { static: { current_key_id: 'k1', current_key: sealKey } },
        initialize,
      },
      dir.path,
    );
    const { logger, lines } = capturingLogger();
    server = await startServer({ config, logger });
    return { server, lines, client: new TestClient(server.address) };
  }

  async function login(client: TestClient, password: string): Promise<string> {
    const res = await client.put('auth/userpass/login/admin', { password });
    expect(res.status, res.text).to.equal(200);
    return res.body.auth.client_token as string;
  }

  beforeEach(async () => {
    dir = await tempDir('keywarden-self-init-');
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    await dir.remove();
  });

  it('initializes and unseals the store, runs the requests in order, and revokes its root token', async () => {
    const { server, client, lines } = await start({
      access: { request: adminRequests('first-password') },
      engines: {
        request: {
          'mount-transit': { operation: 'update', path: 'sys/mounts/crypto', data: { type: 'transit' } },
          // Needs the mount above: order matters.
          'app-key': { operation: 'update', path: 'crypto/keys/app', data: {} },
        },
      },
    });
    expect(await server.selfInit).to.equal('completed');
    expect((await client.get('sys/seal-status')).body).to.include({ initialized: true, sealed: false, recovery_seal: true, t: 0, n: 0 });

    const token = await login(client, 'first-password');
    const key = await client.get('crypto/keys/app', { token });
    expect(key.status, key.text).to.equal(200);
    expect(key.body.data.name).to.equal('app');

    // Only the admin's login token is left: the run's root token is gone.
    const accessors = await client.list('auth/token/accessors', { token });
    expect(accessors.status, accessors.text).to.equal(200);
    for (const accessor of accessors.body.data.keys as string[]) {
      const entry = await client.put('auth/token/lookup-accessor', { accessor }, { token });
      expect(entry.body.data.policies).to.not.include('root');
    }
    const done = lines.filter((l) => l.msg === 'self-init: request done').map((l) => `${String(l.initialize)}/${String(l.request)}`);
    expect(done).to.deep.equal(['access/superuser-policy', 'access/enable-userpass', 'access/admin-user', 'engines/mount-transit', 'engines/app-key']);
    expect(lines.some((l) => l.msg === 'self-init: its root token is revoked')).to.equal(true);
    // The log names requests, never their data.
    expect(JSON.stringify(lines)).to.not.contain('first-password');
  });

  it('a failed request stops the rest with a log line naming it; the store stays initialized, unsealed and usable', async () => {
    const { server, client, lines } = await start({
      access: { request: adminRequests('pw') },
      engines: {
        request: {
          'bad-mount': { operation: 'update', path: 'sys/mounts/broken', data: { type: 'no-such-engine' } },
          'never-runs': { operation: 'update', path: 'sys/mounts/crypto', data: { type: 'transit' } },
        },
      },
    });
    expect(await server.selfInit).to.equal('stopped');
    const failed = lines.find((l) => l.msg.startsWith('self-init: request failed; the remaining requests do not run'));
    expect(failed).to.include({ initialize: 'engines', request: 'bad-mount', path: 'sys/mounts/broken', operation: 'update' });
    expect(String(failed!.error)).to.match(/^400: /);
    expect(lines.some((l) => l.request === 'never-runs')).to.equal(false);
    expect((await client.get('sys/seal-status')).body).to.include({ initialized: true, sealed: false });
    // The operator finishes by hand.
    const token = await login(client, 'pw');
    expect((await client.get('sys/mounts/crypto', { token })).status).to.not.equal(200);
    expect((await client.post('sys/mounts/crypto', { type: 'transit' }, { token })).status).to.equal(204);
  });

  it('a request that allows failure lets the next one run', async () => {
    const { server, client } = await start({
      first: {
        request: {
          'may-fail': { operation: 'update', path: 'sys/mounts/broken', data: { type: 'no-such-engine' }, allow_failure: true },
          ...adminRequests('pw'),
        },
      },
    });
    expect(await server.selfInit).to.equal('completed');
    await login(client, 'pw');
  });

  it('resolves env:// and file:// values when the requests run; a variable that is not set fails its request', async () => {
    const passwordFile = path.join(dir.path, 'admin-password');
    await writeFile(passwordFile, 'from-a-file', { mode: 0o600 });
    process.env.KEYWARDEN_TEST_SELF_INIT_POLICY = SUPERUSER;
    try {
      const { server, client, lines } = await start({
        access: {
          request: {
            policy: { operation: 'update', path: 'sys/policies/acl/superuser', data: { policy: 'env://KEYWARDEN_TEST_SELF_INIT_POLICY' } },
            userpass: { operation: 'update', path: 'sys/auth/userpass', data: { type: 'userpass' } },
            // Relative to the configuration's directory.
            admin: { operation: 'update', path: 'auth/userpass/users/admin', data: { password: 'file://admin-password', token_policies: ['superuser'] } },
            unset: { operation: 'update', path: 'sys/policies/acl/other', data: { policy: 'env://KEYWARDEN_TEST_SELF_INIT_UNSET' } },
          },
        },
      });
      expect(await server.selfInit).to.equal('stopped');
      const token = await login(client, 'from-a-file');
      const policy = await client.get('sys/policies/acl/superuser', { token });
      expect(policy.body.data.policy).to.equal(SUPERUSER);
      const failed = lines.find((l) => l.request === 'unset');
      expect(failed?.error).to.equal('env://KEYWARDEN_TEST_SELF_INIT_UNSET: the environment variable is not set');
    } finally {
      delete process.env.KEYWARDEN_TEST_SELF_INIT_POLICY;
    }
  });

  it('runs only on the first start: a restart of the same store unseals it and skips the stanzas', async () => {
    const storage = { leveldb: { path: 'data' } };
    const initialize = { access: { request: adminRequests('pw') } };
    const first = await start(initialize, storage);
    expect(await first.server.selfInit).to.equal('completed');
    await first.server.close();
    server = undefined;

    const again = await start(initialize, storage);
    expect(await again.server.selfInit).to.equal('skipped');
    expect(again.lines.some((l) => l.msg === 'self-init: the store is initialized already; the initialize stanzas do not run again')).to.equal(true);
    // Until the node has unsealed itself and loaded its mounts (seal-status says unsealed a little earlier).
    for (let i = 0; i < 200 && (await again.client.put('auth/userpass/login/admin', { password: 'pw' })).status === 503; i++) await delay(50);
    await login(again.client, 'pw');
  });
});
