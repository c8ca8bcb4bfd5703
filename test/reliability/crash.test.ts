/**
 * Crash durability. The production server runs as a child process on LevelDB; workers write
 * concurrently (transit keys, rotations, config changes, batch encrypts, tokens, policies, mounts,
 * and logins when the cloud method is there) and the server is killed with SIGKILL at a random
 * moment. After every restart and unseal, everything that was acknowledged must be there: keys at
 * least at their acknowledged version, configs, tokens, policies, mounts, and every acknowledged
 * ciphertext decrypts to its plaintext. Several rounds (KEYWARDEN_CRASH_ROUNDS, default 4).
 */
import { expect } from 'chai';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { tempDir } from '../helpers/server.js';
import { Api, type RawResponse } from './support/http.js';
import { initialize, spawnServer, unsealWith, writeConfig, type ChildServer } from './support/child.js';
import { CANARY_PRINCIPAL, startCanary, type Canary } from './support/canary.js';
import { iamLogin } from './support/cloud.js';

const ROUNDS = Number(process.env.KEYWARDEN_CRASH_ROUNDS ?? 4);
const MOUNT = 'crash/transit';
const b64 = (text: string) => Buffer.from(text).toString('base64');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Everything the server acknowledged, across all rounds. */
interface Acknowledged {
  keys: Map<string, { type: string; version: number; autoRotate: number }>;
  ciphertexts: { key: string; plaintext: string; ciphertext: string }[];
  tokens: string[];
  loginTokens: string[];
  policies: string[];
  mounts: string[];
}

interface Features {
  encrypt: boolean;
  logins: boolean;
}

describe('crash durability (SIGKILL at random moments, LevelDB, production server)', function () {
  this.timeout(10 * 60_000);

  it(`keeps every acknowledged write and decrypts every acknowledged ciphertext over ${ROUNDS} kill rounds`, async () => {
    const dir = await tempDir('keywarden-crash-');
    const provider = await startCanary('sts-identity');
    const ack: Acknowledged = { keys: new Map(), ciphertexts: [], tokens: [], loginTokens: [], policies: [], mounts: [] };
    const stats = { rounds: 0, requests: 0, inFlightAtKill: 0, killAfterMs: [] as number[] };
    let proc: ChildServer | undefined;
    try {
      const configFile = await writeConfig(dir.path, { dataDir: path.join(dir.path, 'data') });
      proc = await spawnServer(configFile, dir.path);
      const first = new Api(proc.address);
      const init = await initialize(first, 3, 2);
      await unsealWith(first, init.keys.slice(0, 2));
      first.token = init.rootToken;
      const features = await prepare(first, provider);
      console.log(`      workload: keys, rotations, configs, tokens, policies, mounts${features.encrypt ? ', batch encrypts' : ' (encrypt not served: skipped)'}${features.logins ? ', iam logins' : ' (no cloud auth method: logins skipped)'}`);

      for (let round = 1; round <= ROUNDS; round++) {
        const api = new Api(proc.address, init.rootToken, 15_000);
        const killAfter = 150 + Math.floor(Math.random() * 1_000);
        stats.killAfterMs.push(killAfter);
        const run = workload(api, round, ack, features, stats);
        await sleep(killAfter);
        run.stop();
        proc.child.kill('SIGKILL');
        const exit = await proc.exited;
        expect(exit.signal, 'the server was killed, not stopped').to.equal('SIGKILL');
        stats.inFlightAtKill += await run.done;

        proc = await spawnServer(configFile, dir.path);
        const after = new Api(proc.address, init.rootToken, 30_000);
        expect((await after.get('sys/seal-status')).json.sealed, 'a restarted server starts sealed').to.equal(true);
        await unsealWith(after, init.keys.slice(1, 3));
        await verify(after, ack, round);
        stats.rounds++;
      }
      proc.child.kill('SIGTERM');
      expect((await proc.exited).code).to.equal(0);
      proc = undefined;
      console.log(
        `      ${stats.rounds} kill rounds survived (killed after ${stats.killAfterMs.join(', ')} ms); ${stats.requests} writes sent, ` +
          `${stats.inFlightAtKill} in flight at the kills; acknowledged: ${ack.keys.size} keys, ${ack.ciphertexts.length} ciphertexts, ` +
          `${ack.tokens.length} tokens, ${ack.loginTokens.length} login tokens, ${ack.policies.length} policies, ${ack.mounts.length} mounts`,
      );
    } finally {
      if (proc) {
        proc.child.kill('SIGKILL');
        await proc.exited;
      }
      await provider.close();
      await dir.remove();
    }
  });
});

async function prepare(api: Api, provider: Canary): Promise<Features> {
  await api.expect('POST', `sys/mounts/${MOUNT}`, { type: 'transit' });
  await api.expect('POST', 'sys/policies/acl/crash', { policy: `path "${MOUNT}/*" { capabilities = ["read"] }` });
  const doc = await api.expect('GET', 'sys/internal/specs/openapi', undefined, [200]);
  const encrypt = `/${MOUNT}/encrypt/{name}` in (doc.json.paths as object);
  const cloud = await api.post('sys/auth/cloud', { type: 'cloud' });
  let logins = false;
  if (cloud.status === 204) {
    await api.expect('POST', 'auth/cloud/config/client', { access_key: 'AKIACRASH', secret_key: 'crash-secret', sts_endpoint: provider.url, sts_region: 'us-east-1', max_retries: 0 });
    await api.expect('POST', 'auth/cloud/role/crash', { auth_type: 'iam', bound_iam_principal_arn: [CANARY_PRINCIPAL.arn], resolve_cloud_unique_ids: false, token_policies: ['crash'], token_ttl: '24h' });
    logins = true;
  }
  return { encrypt, logins };
}

/**
 * Writers that run until stopped; each records a write only once the server acknowledged it.
 * `done` resolves with how many requests were still in flight when the server died.
 */
function workload(api: Api, round: number, ack: Acknowledged, features: Features, stats: { requests: number }): { stop(): void; done: Promise<number> } {
  let running = true;
  let inFlight = 0;
  let maxInFlightAtStop = 0;
  const failures: string[] = [];
  const call = async (method: string, path: string, body?: unknown, token?: string): Promise<RawResponse | undefined> => {
    stats.requests++;
    inFlight++;
    try {
      const res = await api.request(method, path, body, token);
      if (res.status >= 500 && running) failures.push(`${method} ${path}: ${res.status} ${res.text.slice(0, 200)}`);
      return running || res.status < 500 ? res : undefined;
    } catch {
      return undefined; // The connection died with the server: not acknowledged.
    } finally {
      inFlight--;
    }
  };
  const keysOf = (type?: string) => [...ack.keys].filter(([, k]) => !type || k.type === type).map(([name]) => name);
  const pick = <T>(items: T[]): T | undefined => items[Math.floor(Math.random() * items.length)];

  const loops: (() => Promise<void>)[] = [
    async () => {
      for (let i = 0; running; i++) {
        const name = `r${round}-k${i}`;
        const type = ['aes256-gcm96', 'chacha20-poly1305', 'ed25519', 'hmac'][i % 4]!;
        const res = await call('POST', `${MOUNT}/keys/${name}`, { type });
        if (res && res.status < 300) ack.keys.set(name, { type, version: 1, autoRotate: 0 });
      }
    },
    ...[1, 2].map(() => async () => {
      while (running) {
        const name = pick(keysOf());
        if (!name) {
          await sleep(5);
          continue;
        }
        const res = await call('POST', `${MOUNT}/keys/${name}/rotate`);
        if (res?.status === 200) {
          const key = ack.keys.get(name)!;
          key.version = Math.max(key.version, res.json.data.latest_version as number);
        }
      }
    }),
    async () => {
      // One writer for configs, values only growing, so a stored value below the acknowledged one is a lost write.
      for (let n = 1; running; n++) {
        const name = pick(keysOf());
        if (!name) {
          await sleep(5);
          continue;
        }
        const seconds = 3600 * (round * 1000 + n);
        const res = await call('POST', `${MOUNT}/keys/${name}/config`, { auto_rotate_period: seconds });
        if (res && res.status < 300) ack.keys.get(name)!.autoRotate = Math.max(ack.keys.get(name)!.autoRotate, seconds);
      }
    },
    async () => {
      for (let i = 0; running; i++) {
        const res = await call('POST', 'auth/token/create', { policies: ['crash'], ttl: '24h' });
        if (res?.status === 200) ack.tokens.push(res.json.auth.client_token as string);
        if (i % 5 === 0) {
          const policy = `r${round}-p${i}`;
          const written = await call('POST', `sys/policies/acl/${policy}`, { policy: `path "${policy}/*" { capabilities = ["read"] }` });
          if (written && written.status < 300) ack.policies.push(policy);
        }
        if (i % 9 === 0) {
          const mount = `crash/r${round}-m${i}`;
          const enabled = await call('POST', `sys/mounts/${mount}`, { type: 'transit' });
          if (enabled && enabled.status < 300) ack.mounts.push(`${mount}/`);
        }
      }
    },
  ];
  if (features.encrypt) {
    loops.push(
      ...[1, 2].map(() => async () => {
        while (running) {
          const name = pick(keysOf('aes256-gcm96').concat(keysOf('chacha20-poly1305')));
          if (!name) {
            await sleep(5);
            continue;
          }
          const plaintexts = Array.from({ length: 8 }, () => randomBytes(12).toString('hex'));
          const res = await call('POST', `${MOUNT}/encrypt/${name}`, { batch_input: plaintexts.map((p) => ({ plaintext: b64(p) })) });
          if (res?.status === 200) {
            (res.json.data.batch_results as { ciphertext: string }[]).forEach((r, i) => ack.ciphertexts.push({ key: name, plaintext: plaintexts[i]!, ciphertext: r.ciphertext }));
          }
        }
      }),
    );
  }
  if (features.logins) {
    loops.push(async () => {
      while (running) {
        const res = await call('POST', 'auth/cloud/login', { ...iamLogin(), role: 'crash' }, '');
        if (res?.status === 200) ack.loginTokens.push(res.json.auth.client_token as string);
      }
    });
  }
  const all = Promise.all(loops.map((loop) => loop()));
  return {
    stop: () => {
      maxInFlightAtStop = inFlight;
      running = false;
    },
    done: all.then(() => {
      expect(failures, 'server errors while it was running').to.deep.equal([]);
      return maxInFlightAtStop;
    }),
  };
}

async function verify(api: Api, ack: Acknowledged, round: number): Promise<void> {
  const where = `after kill round ${round}`;
  for (const [name, key] of ack.keys) {
    const res = await api.get(`${MOUNT}/keys/${name}`);
    expect(res.status, `key ${name} ${where}: ${res.text}`).to.equal(200);
    expect(res.json.data.latest_version, `key ${name} version ${where}`).to.be.at.least(key.version);
    expect(res.json.data.auto_rotate_period, `key ${name} config ${where}`).to.be.at.least(key.autoRotate);
  }
  const byKey = new Map<string, Acknowledged['ciphertexts']>();
  for (const item of ack.ciphertexts) byKey.set(item.key, [...(byKey.get(item.key) ?? []), item]);
  for (const [key, items] of byKey) {
    for (let i = 0; i < items.length; i += 200) {
      const slice = items.slice(i, i + 200);
      const res = await api.post(`${MOUNT}/decrypt/${key}`, { batch_input: slice.map((c) => ({ ciphertext: c.ciphertext })) });
      expect(res.status, `decrypt with ${key} ${where}: ${res.text.slice(0, 300)}`).to.equal(200);
      (res.json.data.batch_results as { plaintext?: string; error?: string }[]).forEach((r, j) => {
        expect(r.error, `${slice[j]!.ciphertext} ${where}`).to.equal(undefined);
        expect(Buffer.from(r.plaintext!, 'base64').toString(), `${slice[j]!.ciphertext} ${where}`).to.equal(slice[j]!.plaintext);
      });
    }
  }
  for (const token of [...ack.tokens, ...ack.loginTokens]) {
    const res = await api.post('auth/token/lookup', { token });
    expect(res.status, `token ${token.slice(0, 8)}… ${where}: ${res.text}`).to.equal(200);
  }
  for (const policy of ack.policies) expect((await api.get(`sys/policies/acl/${policy}`)).status, `policy ${policy} ${where}`).to.equal(200);
  const mounts = Object.keys((await api.expect('GET', 'sys/mounts', undefined, [200])).json.data as object);
  for (const mount of ack.mounts) expect(mounts, `mount ${mount} ${where}`).to.include(mount);
}
