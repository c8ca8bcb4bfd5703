/**
 * Concurrency: many requests on the same thing at once. Rotate, encrypt, decrypt and trim on one
 * key (every acknowledged ciphertext decrypts while its version is allowed, versions only grow);
 * token renew and revoke races (no revoked token comes back); children created while their parent
 * is revoked; limited-use tokens; and concurrent ec2 logins of one instance once ec2 login exists.
 */
import { expect } from 'chai';
import { MemoryStorage } from '../../storage/memory.js';
import { startReliabilityServer, mountedPatterns, type ReliabilityServer } from './support/server.js';
import { snapshot } from './support/storage.js';
import { cloudLoginMissing, setUpIamLogins } from './support/cloud.js';
import { startCanary } from './support/canary.js';
import type { RawResponse } from './support/http.js';

const MOUNT = 'race/transit';
const ROTATIONS = 40;
const b64 = (text: string) => Buffer.from(text).toString('base64');
const versionOf = (ciphertext: string) => Number(/^vault:v(\d+):/.exec(ciphertext)![1]);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function expectNo5xx(res: RawResponse, what: string): void {
  expect(res.status, `${what}: ${res.status} ${res.text.slice(0, 300)}`).to.be.below(500);
}

describe('concurrency', function () {
  this.timeout(120_000);
  let server: ReliabilityServer;
  let physical: MemoryStorage;

  beforeEach(async () => {
    physical = new MemoryStorage();
    server = await startReliabilityServer({ physical });
  });
  afterEach(() => server.close());

  it('rotate + encrypt + decrypt + trim on one key: every acknowledged ciphertext decrypts while its version is allowed, and versions only grow', async () => {
    const api = server.api;
    await api.expect('POST', `sys/mounts/${MOUNT}`, { type: 'transit' });
    await api.expect('POST', `${MOUNT}/keys/hot`, { type: 'aes256-gcm96' });
    const ciphertexts: { plaintext: string; ciphertext: string; version: number }[] = [];
    const rotations: number[] = [];
    /** The highest min_decryption_version any request has asked for so far (raised before sending). */
    let floorAsked = 0;
    let latestAcked = 1;
    let running = true;
    const failures: string[] = [];
    let decrypts = 0;

    const rotator = async () => {
      for (let i = 0; i < ROTATIONS; i++) {
        const res = await api.post(`${MOUNT}/keys/hot/rotate`);
        expectNo5xx(res, 'rotate');
        expect(res.status, res.text).to.be.oneOf([200, 204]);
        const latest = res.status === 200 ? (res.json.data.latest_version as number) : ((await api.get(`${MOUNT}/keys/hot`)).json.data.latest_version as number);
        rotations.push(latest);
        latestAcked = Math.max(latestAcked, latest);
        await sleep(5);
      }
    };
    const encryptor = async (worker: number) => {
      let n = 0;
      while (running) {
        const rotatedBefore = latestAcked;
        const batch = n % 3 === 0;
        const plaintexts = batch ? [0, 1, 2].map((j) => `w${worker}-${n}-${j}`) : [`w${worker}-${n}`];
        const res = await api.post(`${MOUNT}/encrypt/hot`, batch ? { batch_input: plaintexts.map((p) => ({ plaintext: b64(p) })) } : { plaintext: b64(plaintexts[0]!) });
        expectNo5xx(res, 'encrypt');
        expect(res.status, res.text).to.equal(200);
        const produced = batch ? (res.json.data.batch_results as { ciphertext: string }[]).map((r) => r.ciphertext) : [res.json.data.ciphertext as string];
        produced.forEach((ciphertext, j) => {
          const version = versionOf(ciphertext);
          if (version < rotatedBefore) failures.push(`encrypt started after v${rotatedBefore} was acknowledged used v${version}`);
          ciphertexts.push({ plaintext: plaintexts[j]!, ciphertext, version });
        });
        n++;
      }
    };
    const decryptor = async () => {
      while (running) {
        if (ciphertexts.length === 0) {
          await sleep(2);
          continue;
        }
        const item = ciphertexts[Math.floor(Math.random() * ciphertexts.length)]!;
        const res = await api.post(`${MOUNT}/decrypt/hot`, { ciphertext: item.ciphertext });
        decrypts++;
        expectNo5xx(res, 'decrypt');
        if (res.status === 200) {
          if (Buffer.from(res.json.data.plaintext as string, 'base64').toString() !== item.plaintext) failures.push(`wrong plaintext for ${item.ciphertext}`);
        } else if (!(res.status === 400 && item.version < floorAsked)) {
          failures.push(`v${item.version} ciphertext refused (${res.status} ${res.text.slice(0, 120)}) while the floor asked for was ${floorAsked}`);
        }
      }
    };
    const trimmer = async () => {
      while (running) {
        await sleep(40);
        const latest = (await api.get(`${MOUNT}/keys/hot`)).json.data.latest_version as number;
        const floor = Math.max(1, latest - 4);
        if (floor <= floorAsked) continue;
        floorAsked = floor;
        const config = await api.post(`${MOUNT}/keys/hot/config`, { min_decryption_version: floor, min_encryption_version: floor });
        expectNo5xx(config, 'config');
        const trim = await api.post(`${MOUNT}/keys/hot/trim`, { min_available_version: floor });
        expectNo5xx(trim, 'trim');
        expect(trim.status, trim.text).to.be.oneOf([200, 204]);
      }
    };
    const reader = async () => {
      let seen = { latest: 0, minAvailable: 0 };
      while (running) {
        const res = await api.get(`${MOUNT}/keys/hot`);
        expectNo5xx(res, 'read');
        const now = { latest: res.json.data.latest_version as number, minAvailable: res.json.data.min_available_version as number };
        if (now.latest < seen.latest || now.minAvailable < seen.minAvailable) failures.push(`versions went back: ${JSON.stringify(seen)} → ${JSON.stringify(now)}`);
        seen = now;
        await sleep(3);
      }
    };

    const background = [encryptor(1), encryptor(2), encryptor(3), decryptor(), decryptor(), trimmer(), reader()];
    await rotator();
    running = false;
    await Promise.all(background);

    expect(failures).to.deep.equal([]);
    // Each acknowledged rotation produced its own version; none was lost or repeated.
    expect(new Set(rotations).size).to.equal(ROTATIONS);
    const key = (await api.expect('GET', `${MOUNT}/keys/hot`, undefined, [200])).json.data;
    expect(key.latest_version).to.equal(ROTATIONS + 1);
    // After a reload (state rebuilt from storage), every ciphertext at or above the floor decrypts.
    await api.expect('POST', 'sys/plugins/reload/backend', { mounts: [MOUNT] });
    const floor = (await api.expect('GET', `${MOUNT}/keys/hot`, undefined, [200])).json.data.min_decryption_version as number;
    let checked = 0;
    for (const item of ciphertexts) {
      const res = await api.post(`${MOUNT}/decrypt/hot`, { ciphertext: item.ciphertext });
      if (item.version >= floor) {
        expect(res.status, `v${item.version} after reload: ${res.text}`).to.equal(200);
        expect(Buffer.from(res.json.data.plaintext as string, 'base64').toString()).to.equal(item.plaintext);
        checked++;
      } else {
        expect(res.status, `v${item.version} below the floor ${floor}`).to.equal(400);
      }
    }
    expect(checked).to.be.greaterThan(0);
    console.log(`      ${ciphertexts.length} ciphertexts, ${decrypts} concurrent decrypts, ${ROTATIONS} rotations, floor ${floor}, ${checked} decrypted after reload`);
  });

  it('renew and revoke racing on the same tokens: every revoked token stays revoked, with nothing left in storage', async () => {
    const api = server.api;
    await api.expect('POST', 'sys/policies/acl/self', { policy: 'path "auth/token/*" { capabilities = ["update", "read"] }' });
    const tokens: { token: string; accessor: string }[] = [];
    for (let i = 0; i < 24; i++) {
      const res = await api.expect('POST', 'auth/token/create', { policies: ['self'], ttl: '1h', explicit_max_ttl: '10h' }, [200]);
      tokens.push({ token: res.json.auth.client_token as string, accessor: res.json.auth.accessor as string });
    }
    const revokedAt = new Map<string, number>();
    const resurrected: string[] = [];
    let clock = 0;
    await Promise.all(
      tokens.flatMap(({ token, accessor }, i) => {
        const renewals = [
          () => api.post('auth/token/renew', { token, increment: '2h' }),
          () => api.request('POST', 'auth/token/renew-self', { increment: '2h' }, token),
          () => api.post('auth/token/renew-accessor', { accessor, increment: '2h' }),
        ];
        const revoke = [
          () => api.post('auth/token/revoke', { token }),
          () => api.post('auth/token/revoke-accessor', { accessor }),
          () => api.request('POST', 'auth/token/revoke-self', {}, token),
        ][i % 3]!;
        const work: Promise<void>[] = [];
        for (let r = 0; r < 8; r++) {
          work.push(
            (async () => {
              await sleep(r * 2);
              const started = clock++;
              const res = await renewals[r % 3]!();
              expectNo5xx(res, 'renew');
              // A renewal that began after the revocation was acknowledged must fail.
              const revoked = revokedAt.get(token);
              if (res.status === 200 && revoked !== undefined && started > revoked) resurrected.push(`renewed after revoke: ${accessor}`);
            })(),
          );
        }
        work.push(
          (async () => {
            await sleep(5 + (i % 4) * 3);
            const res = await revoke();
            expectNo5xx(res, 'revoke');
            expect(res.status, res.text).to.equal(204);
            revokedAt.set(token, clock++);
          })(),
        );
        return work;
      }),
    );
    expect(resurrected).to.deep.equal([]);
    for (const { token, accessor } of tokens) {
      expect((await api.request('GET', 'auth/token/lookup-self', undefined, token)).status, `lookup-self of revoked ${accessor}`).to.equal(403);
      expect((await api.post('auth/token/lookup-accessor', { accessor })).status, `lookup of revoked ${accessor}`).to.be.within(400, 404);
    }
    // Only the root token is left, in memory and in storage alike (a renewal writing after the revocation would leave an entry).
    const accessors = (await api.expect('LIST', 'auth/token/accessors', undefined, [200])).json.data.keys as string[];
    expect(accessors).to.have.length(1);
    await server.host.seal.seal();
    await server.unseal();
    const stored = [...(await snapshot(physical)).keys()].filter((k) => /^sys\/token\/(id|accessor|parent|expire)\//.test(k));
    expect(stored.filter((k) => k.startsWith('sys/token/id/')), 'stored token entries').to.have.length(1);
    expect(stored.filter((k) => /^sys\/token\/(parent|expire)\//.test(k)), 'index entries left behind').to.deep.equal([]);
  });

  it('children created while their parent is revoked: none outlives the parent', async () => {
    const api = server.api;
    await api.expect('POST', 'sys/policies/acl/creator', { policy: 'path "auth/token/create" { capabilities = ["update"] }' });
    let created = 0;
    let refused = 0;
    for (let round = 0; round < 8; round++) {
      const parent = (await api.expect('POST', 'auth/token/create', { policies: ['creator'], ttl: '1h' }, [200])).json.auth.client_token as string;
      const children: string[] = [];
      const creators = Array.from({ length: 6 }, async () => {
        for (let i = 0; i < 10; i++) {
          const res = await api.request('POST', 'auth/token/create', { ttl: '1h' }, parent);
          expectNo5xx(res, 'create child');
          if (res.status === 200) children.push(res.json.auth.client_token as string);
          else refused++;
        }
      });
      const revoker = (async () => {
        await sleep(5 + round * 3);
        expect((await api.post('auth/token/revoke', { token: parent })).status).to.equal(204);
      })();
      await Promise.all([...creators, revoker]);
      const alive: string[] = [];
      for (const child of children) {
        if ((await api.request('GET', 'auth/token/lookup-self', undefined, child)).status === 200) alive.push(child.slice(0, 8));
      }
      expect(alive, `round ${round}: children alive after their parent was revoked (of ${children.length} created)`).to.deep.equal([]);
      created += children.length;
    }
    // The revocation landed in the middle of the creations: some got through, the later ones were refused.
    expect(created, 'children created before the revocation').to.be.greaterThan(0);
    expect(refused, 'creations refused after it').to.be.greaterThan(0);
  });

  it('a limited-use token used by many requests at once is used exactly as often as allowed', async () => {
    const api = server.api;
    const token = (await api.expect('POST', 'auth/token/create', { policies: ['default'], num_uses: 5 }, [200])).json.auth.client_token as string;
    const answers = await Promise.all(Array.from({ length: 20 }, () => api.request('GET', 'auth/token/lookup-self', undefined, token)));
    for (const res of answers) expectNo5xx(res, 'lookup-self');
    expect(answers.filter((r) => r.status === 200)).to.have.length(5);
    expect(answers.filter((r) => r.status === 403)).to.have.length(15);
  });

  it('renewals of login tokens racing their revocation: no revoked login token comes back', async function () {
    expect(cloudLoginMissing(server)).to.equal(undefined);
    const provider = await startCanary('sts-identity');
    try {
      const api = server.api;
      const login = await setUpIamLogins(api, 'cloud', provider.url);
      const tokens: string[] = [];
      for (let i = 0; i < 8; i++) tokens.push((await api.expect('POST', 'auth/cloud/login', login, [200], '')).json.auth.client_token as string);
      await Promise.all(
        tokens.flatMap((token, i) => [
          ...Array.from({ length: 5 }, async (_, r) => {
            await sleep(r * 3);
            expectNo5xx(await api.request('POST', 'auth/token/renew-self', {}, token), 'renew login token');
          }),
          (async () => {
            await sleep(4 + i);
            expect((await api.post('auth/token/revoke', { token })).status).to.equal(204);
          })(),
        ]),
      );
      for (const token of tokens) expect((await api.request('GET', 'auth/token/lookup-self', undefined, token)).status).to.equal(403);
    } finally {
      await provider.close();
    }
  });

  it('concurrent ec2 logins of one instance lose no access-list update', async function () {
    expect(cloudLoginMissing(server)).to.equal(undefined);
    await server.api.expect('POST', 'sys/auth/cloud', { type: 'cloud' });
    expect(mountedPatterns(server, 'auth', 'cloud').some((p) => p.startsWith('identity-accesslist')), 'ec2 login and its access list are served').to.equal(true);
    const { runConcurrentEc2Logins } = await import('./support/ec2.js');
    await runConcurrentEc2Logins(server);
  });
});
