/**
 * The self-initializing example (examples/self-init/keywarden.hcl) as an operator runs it: a
 * production server in a child process, started with nothing but the seal key in its environment,
 * comes up unsealed with its audit device, transit at crypto/, a policy and the cloud auth method;
 * killed with SIGKILL and started again, it is unsealed and configured without any call, and the
 * initialize stanzas did not run a second time (the audit log shows each request once).
 */
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as delay } from 'node:timers/promises';
import { TestClient } from '../helpers/http.js';
import { tempDir } from '../helpers/server.js';
import { spawnServer, type ChildServer } from '../reliability/support/child.js';

const EXAMPLE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../examples/self-init/keywarden.hcl');

const SELF_INIT_PATHS = ['sys/mounts/crypto', 'crypto/keys/app', 'sys/policies/acl/app', 'sys/auth/cloud', 'auth/cloud/role/app', 'auth/token/revoke-self'];

interface AuditEntry {
  readonly type: string;
  readonly request?: { readonly path?: string; readonly remote_address?: string };
  readonly error?: string;
}

describe('the self-initializing example (examples/self-init)', function () {
  this.timeout(120_000);
  let dir: { path: string; remove: () => Promise<void> };
  let node: ChildServer | undefined;
  const env = { KEYWARDEN_SEAL_KEY: randomBytes(32).toString('hex'), APP_ROLE_ARN: 'arn:aws:iam::123456789012:role/app' };

  /** Starts the example's configuration (on an ephemeral port) with the seal key in the environment. */
  async function start(config: string): Promise<TestClient> {
    const saved = { ...process.env };
    Object.assign(process.env, env);
    try {
      node = await spawnServer(config, dir.path);
    } finally {
      for (const key of Object.keys(env)) if (saved[key] === undefined) delete process.env[key];
    }
    return new TestClient(node.address);
  }

  async function kill(): Promise<void> {
    node!.child.kill('SIGKILL');
    expect((await node!.exited).signal).to.equal('SIGKILL');
    node = undefined;
  }

  async function waitFor(done: () => Promise<boolean>, what: string): Promise<void> {
    for (let i = 0; i < 400; i++) {
      if (await done()) return;
      await delay(50);
    }
    expect.fail(`timed out waiting for ${what}:\n${node?.output() ?? ''}`);
  }

  async function auditEntries(): Promise<AuditEntry[]> {
    const text = await readFile(path.join(dir.path, 'audit.log'), 'utf8').catch(() => '');
    return text
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as AuditEntry);
  }

  beforeEach(async () => {
    dir = await tempDir('keywarden-self-init-example-');
  });
  afterEach(async () => {
    if (node) await kill();
    await dir.remove();
  });

  it('comes up configured from one file, and after SIGKILL restarts unsealed and configured without running the stanzas again', async () => {
    const config = path.join(dir.path, 'keywarden.hcl');
    const text = await readFile(EXAMPLE, 'utf8');
    expect(text).to.contain('address     = "127.0.0.1:8200"');
    await writeFile(config, text.replace('127.0.0.1:8200', '127.0.0.1:0'));

    const client = await start(config);
    await waitFor(async () => node!.output().includes('self-init: every initialize request ran'), 'self-initialization');
    expect((await client.get('sys/seal-status')).body).to.include({ type: 'static', initialized: true, sealed: false, recovery_seal: true });

    // Audited: each request of the stanzas, from self-init, answered without error.
    const entries = await auditEntries();
    const requests = entries.filter((e) => e.type === 'request' && e.request?.remote_address === 'self-init').map((e) => e.request!.path);
    expect(requests).to.deep.equal(SELF_INIT_PATHS);
    const responses = entries.filter((e) => e.type === 'response' && e.request?.remote_address === 'self-init');
    expect(responses.map((e) => e.error ?? '')).to.deep.equal(SELF_INIT_PATHS.map(() => ''));

    // The cloud auth method is mounted: its login answers for itself (a 400 about the login, not "no handler").
    const login = await client.put('auth/cloud/login', {});
    expect(login.status, login.text).to.equal(400);
    expect(login.text).to.not.match(/no handler/);

    await kill();
    const again = await start(config);
    // The log line, not seal-status: seal-status says unsealed as soon as the barrier opens, before the mounts are loaded.
    await waitFor(async () => node!.output().includes('"auto-unseal: unsealed"'), 'the restarted node to unseal');
    expect((await again.get('sys/seal-status')).body).to.include({ initialized: true, sealed: false });
    await waitFor(async () => node!.output().includes('self-init: the store is initialized already'), 'the restarted node to skip self-init');
    const loginAgain = await again.put('auth/cloud/login', {});
    expect(loginAgain.status, loginAgain.text).to.equal(400);
    const after = (await auditEntries()).filter((e) => e.type === 'request' && e.request?.remote_address === 'self-init');
    expect(after.map((e) => e.request!.path)).to.deep.equal(SELF_INIT_PATHS);
  });
});
