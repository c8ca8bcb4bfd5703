/**
 * backup/:name and restore(/:name): the rules (exportable + allow_plaintext_backup, force, names),
 * round trips for every key type, trimmed keys, a Vault-format blob written here from the reference
 * (Go field names, archive layout, RSA and ECDSA big integers as bare JSON numbers) that restores
 * and works, losslessness of those integers, refused blobs that store nothing, and HTTP between mounts.
 */
import { expect } from 'chai';
import { constants, createPublicKey, generateKeyPairSync, privateDecrypt, randomBytes, sign as nodeSign, verify as nodeVerify, type JsonWebKey, type KeyObject } from 'node:crypto';
import { isLosslessNumber, parse, stringify, type LosslessNumber } from 'lossless-json';
import { TransitHarness } from './harness.js';
import type { Storage } from '../../../storage/storage.js';
import { startUnsealedServer } from '../../helpers/server.js';
import type { RunningServer } from '../../../core/server.js';
import type { TestClient } from '../../helpers/http.js';

const b64 = (data: string | Buffer) => Buffer.from(data).toString('base64');
const big = (base64url: string) => BigInt(`0x${Buffer.from(base64url, 'base64url').toString('hex')}`);

async function ok(res: Promise<{ status: number; error?: string; data: any }>, status = 200): Promise<any> {
  const r = await res;
  expect(r.status, r.error).to.equal(status);
  return r.data;
}

async function snapshot(storage: Storage, prefix = ''): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const entry of await storage.list(prefix)) {
    if (entry.endsWith('/')) Object.assign(out, await snapshot(storage, prefix + entry));
    else out[prefix + entry] = Buffer.from((await storage.get(prefix + entry))!).toString('base64');
  }
  return out;
}

async function backupOf(h: TransitHarness, name: string): Promise<string> {
  return (await ok(h.read(`backup/${name}`))).backup;
}

/** The decoded JSON of a blob, with every number kept exact. */
function blobJson(blob: string): any {
  return parse(Buffer.from(blob, 'base64').toString('utf8'));
}

function toBlob(json: unknown): string {
  return b64(stringify(json)!);
}

/** Go's time.Time JSON for a date (RFC 3339 with nanoseconds). */
const goTime = (d: Date) => d.toISOString().replace(/\.(\d{3})Z$/, '.$1000000Z');

describe('transit backup and restore', function () {
  this.timeout(60_000);
  let h: TransitHarness;

  before(async () => {
    h = await TransitHarness.create();
  });

  describe('backup', () => {
    it('needs both exportable and allow_plaintext_backup (400 otherwise), and an existing key', async () => {
      await ok(h.write('keys/neither'));
      await ok(h.write('keys/only-export', { exportable: true }));
      await ok(h.write('keys/only-backup', { allow_plaintext_backup: true }));
      for (const [name, message] of [
        ['neither', /exporting is disallowed/],
        ['only-export', /plaintext backup is disallowed/],
        ['only-backup', /exporting is disallowed/],
        ['missing', /key "missing" not found/],
      ] as const) {
        const res = await h.read(`backup/${name}`);
        expect(res.status, name).to.equal(400);
        expect(res.error, name).to.match(message);
      }
    });

    it('records backup_info (time and latest version) on the key', async () => {
      await ok(h.write('keys/noted', { exportable: true, allow_plaintext_backup: true }));
      await ok(h.write('keys/noted/rotate'));
      await backupOf(h, 'noted');
      const info = (await ok(h.read('keys/noted'))).backup_info;
      expect(info.version).to.equal(2);
      expect(Date.now() - Date.parse(info.time)).to.be.within(0, 60_000);
    });

    it('writes Vault\'s blob: Go field names, numeric type, nanosecond rotation period, working set and archive', async () => {
      await ok(h.write('keys/shape', { type: 'hmac', key_size: 40, exportable: true, allow_plaintext_backup: true, auto_rotate_period: '2h' }));
      await ok(h.write('keys/shape/rotate'));
      const json = blobJson(await backupOf(h, 'shape'));
      const policy = json.policy;
      expect(Number(policy.type)).to.equal(11);
      expect(policy.name).to.equal('shape');
      expect(Number(policy.key_size)).to.equal(40);
      expect(String(policy.auto_rotate_period)).to.equal('7200000000000');
      expect(Number(policy.latest_version)).to.equal(2);
      expect(Number(policy.archive_version)).to.equal(2);
      expect(policy).to.include.keys('Imported', 'AllowImportedKeyRotation', 'backup_info', 'restore_info', 'min_available_version', 'version_template');
      expect(Object.keys(policy.keys)).to.deep.equal(['1', '2']);
      expect(json.archived_keys.keys).to.have.length(3);
      expect(json.archived_keys.keys[0].key).to.equal(null);
      expect(json.archived_keys.keys[2].key).to.equal(policy.keys['2'].key);
      expect(Buffer.from(policy.keys['2'].key, 'base64')).to.have.length(40);
    });

    it('keeps RSA and ECDSA integers exact: bare JSON numbers equal to the key\'s own parameters', async () => {
      await ok(h.write('keys/big-rsa', { type: 'rsa-2048', exportable: true, allow_plaintext_backup: true }));
      await ok(h.write('keys/big-ec', { type: 'ecdsa-p521', exportable: true, allow_plaintext_backup: true }));
      const rsaText = Buffer.from(await backupOf(h, 'big-rsa'), 'base64').toString();
      const rsa = parse(rsaText) as any;
      const rsaEntry = rsa.policy.keys['1'];
      const pem = (await ok(h.read('keys/big-rsa'))).keys['1'].public_key;
      const jwk = createPublicKey(pem).export({ format: 'jwk' });
      expect(isLosslessNumber(rsaEntry.rsa_key.N)).to.equal(true);
      expect(BigInt((rsaEntry.rsa_key.N as LosslessNumber).value)).to.equal(big(jwk.n!));
      expect(Number(rsaEntry.rsa_key.E)).to.equal(65537);
      expect(rsaEntry.rsa_key.Primes).to.have.length(2);
      const [p, q] = rsaEntry.rsa_key.Primes.map((n: LosslessNumber) => BigInt(n.value));
      expect(p * q).to.equal(big(jwk.n!));
      expect(rsaText).to.match(/"N":\d{600,}/);

      const ec = (parse(Buffer.from(await backupOf(h, 'big-ec'), 'base64').toString()) as any).policy.keys['1'];
      const ecJwk = createPublicKey((await ok(h.read('keys/big-ec'))).keys['1'].public_key).export({ format: 'jwk' });
      expect(BigInt(ec.ec_x.value)).to.equal(big(ecJwk.x!));
      expect(BigInt(ec.ec_y.value)).to.equal(big(ecJwk.y!));
      expect(BigInt(ec.ec_d.value) > BigInt(Number.MAX_SAFE_INTEGER)).to.equal(true);
    });
  });

  describe('restore', () => {
    it('restores every key type under a new name; the restored key works with the original\'s outputs', async () => {
      for (const type of ['aes128-gcm96', 'aes256-gcm96', 'chacha20-poly1305', 'xchacha20-poly1305', 'rsa-2048', 'ecdsa-p256', 'ecdsa-p384', 'ecdsa-p521', 'ed25519', 'hmac']) {
        const name = `orig-${type}`;
        await ok(h.write(`keys/${name}`, { type, exportable: true, allow_plaintext_backup: true }));
        await ok(h.write(`keys/${name}/rotate`));
        await ok(h.write(`restore/copy-${type}`, { backup: await backupOf(h, name) }), 204);
        const original = await ok(h.read(`keys/${name}`));
        const copy = await ok(h.read(`keys/copy-${type}`));
        expect(copy.keys, type).to.deep.equal(original.keys);
        expect(copy).to.include({ name: `copy-${type}`, type, latest_version: 2, exportable: true, allow_plaintext_backup: true });
        const mac = (await ok(h.write(`hmac/${name}`, { input: b64('m') }))).hmac;
        expect((await ok(h.write(`verify/copy-${type}`, { input: b64('m'), hmac: mac }))).valid, type).to.equal(true);
        if (type.startsWith('aes') || type.includes('chacha') || type.startsWith('rsa')) {
          const ciphertext = (await ok(h.write(`encrypt/${name}`, { plaintext: b64(type) }))).ciphertext;
          expect((await ok(h.write(`decrypt/copy-${type}`, { ciphertext }))).plaintext).to.equal(b64(type));
        }
        if (type.startsWith('ecdsa') || type.startsWith('ed') || type.startsWith('rsa')) {
          const signature = (await ok(h.write(`sign/${name}`, { input: b64('s') }))).signature;
          expect((await ok(h.write(`verify/copy-${type}`, { input: b64('s'), signature }))).valid, type).to.equal(true);
        }
      }
    });

    it('keeps the settings: derivation, convergence, min versions, deletion_allowed, rotation period; records restore_info', async () => {
      await ok(h.write('keys/settings', { derived: true, convergent_encryption: true, exportable: true, allow_plaintext_backup: true, auto_rotate_period: '3h' }));
      await ok(h.write('keys/settings/rotate'));
      await ok(h.write('keys/settings/rotate'));
      await ok(h.write('keys/settings/config', { min_decryption_version: 2, min_encryption_version: 3, deletion_allowed: true }));
      const ct = (await ok(h.write('encrypt/settings', { plaintext: b64('same'), context: b64('c') }))).ciphertext;
      await ok(h.write('restore/settings-copy', { backup: await backupOf(h, 'settings') }), 204);
      const copy = await ok(h.read('keys/settings-copy'));
      expect(copy).to.include({
        derived: true,
        convergent_encryption: true,
        min_decryption_version: 2,
        min_encryption_version: 3,
        deletion_allowed: true,
        auto_rotate_period: 10800,
        latest_version: 3,
      });
      expect(Object.keys(copy.keys)).to.deep.equal(['2', '3']);
      expect(copy.restore_info.version).to.equal(3);
      expect((await ok(h.write('encrypt/settings-copy', { plaintext: b64('same'), context: b64('c') }))).ciphertext).to.equal(ct);
      // Versions below min_decryption_version came along too: lowering it brings version 1 back.
      await ok(h.write('keys/settings-copy/config', { min_decryption_version: 1 }));
      expect(Object.keys((await ok(h.read('keys/settings-copy'))).keys)).to.deep.equal(['1', '2', '3']);
    });

    it('restores a trimmed key with its min_available_version', async () => {
      await ok(h.write('keys/trim-src', { exportable: true, allow_plaintext_backup: true }));
      for (let i = 0; i < 3; i++) await ok(h.write('keys/trim-src/rotate'));
      await ok(h.write('keys/trim-src/config', { min_decryption_version: 3, min_encryption_version: 4 }));
      await ok(h.write('keys/trim-src/trim', { min_available_version: 3 }));
      const ct = (await ok(h.write('encrypt/trim-src', { plaintext: b64('t') }))).ciphertext;
      const blob = await backupOf(h, 'trim-src');
      expect(blobJson(blob).archived_keys.keys).to.have.length(2);
      await ok(h.write('restore/trim-copy', { backup: blob }), 204);
      expect(await ok(h.read('keys/trim-copy'))).to.include({ min_available_version: 3, min_decryption_version: 3, latest_version: 4 });
      expect((await ok(h.write('decrypt/trim-copy', { ciphertext: ct }))).plaintext).to.equal(b64('t'));
      expect(await h.storage.list('versions/trim-copy/')).to.deep.equal(['3', '4']);
    });

    it('uses the name in the blob when none is given, on another mount', async () => {
      await ok(h.write('keys/travels', { exportable: true, allow_plaintext_backup: true }));
      const other = await TransitHarness.create();
      await ok(other.write('restore', { backup: await backupOf(h, 'travels') }), 204);
      expect((await ok(other.read('keys/travels'))).name).to.equal('travels');
      await ok(other.write('restore', { backup: await backupOf(h, 'travels'), name: 'renamed' }), 204);
      expect((await ok(other.read('keys/renamed'))).name).to.equal('renamed');
    });

    it('refuses to restore over an existing key without force, and replaces it (every version) with force', async () => {
      await ok(h.write('keys/target', { exportable: true, allow_plaintext_backup: true }));
      for (let i = 0; i < 3; i++) await ok(h.write('keys/target/rotate'));
      await ok(h.write('keys/replacement', { exportable: true, allow_plaintext_backup: true }));
      const blob = await backupOf(h, 'replacement');
      const before = await snapshot(h.storage);
      const refused = await h.write('restore/target', { backup: blob });
      expect(refused.status).to.equal(400);
      expect(refused.error).to.match(/key "target" already exists/);
      expect(await snapshot(h.storage)).to.deep.equal(before);

      await ok(h.write('restore/target', { backup: blob, force: true }), 204);
      const read = await ok(h.read('keys/target'));
      expect(read.latest_version).to.equal(1);
      expect(read.keys).to.deep.equal((await ok(h.read('keys/replacement'))).keys);
      expect(await h.storage.list('versions/target/')).to.deep.equal(['1']);
      const ct = (await ok(h.write('encrypt/replacement', { plaintext: b64('r') }))).ciphertext;
      expect((await ok(h.write('decrypt/target', { ciphertext: ct }))).plaintext).to.equal(b64('r'));
    });

    it('round-trips: the backup of a restored key carries the same material', async () => {
      await ok(h.write('keys/rt', { type: 'ecdsa-p384', exportable: true, allow_plaintext_backup: true }));
      const first = blobJson(await backupOf(h, 'rt'));
      await ok(h.write('restore/rt-copy', { backup: await backupOf(h, 'rt') }), 204);
      const second = blobJson(await backupOf(h, 'rt-copy'));
      for (const field of ['ec_x', 'ec_y', 'ec_d', 'key', 'hmac_key', 'time', 'public_key', 'creation_time']) {
        expect(String(second.policy.keys['1'][field]), field).to.equal(String(first.policy.keys['1'][field]));
      }
    });
  });

  describe('a blob in Vault\'s format, written from the reference', () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const created = new Date('2024-03-01T10:00:00Z');

    function rsaEntry(key: KeyObject): unknown {
      const j = key.export({ format: 'jwk' });
      return {
        key: null,
        hmac_key: b64(randomBytes(32)),
        time: goTime(created),
        ec_x: null,
        ec_y: null,
        ec_d: null,
        rsa_key: {
          N: big(j.n!),
          E: 65537,
          D: big(j.d!),
          Primes: [big(j.p!), big(j.q!)],
          Precomputed: { Dp: big(j.dp!), Dq: big(j.dq!), Qinv: big(j.qi!), CRTValues: [] },
        },
        rsa_public_key: { N: big(j.n!), E: 65537 },
        public_key: '',
        convergent_version: 0,
        creation_time: Math.floor(created.getTime() / 1000),
      };
    }

    function ecEntry(key: KeyObject): unknown {
      const j = key.export({ format: 'jwk' });
      return {
        key: null,
        hmac_key: b64(randomBytes(32)),
        time: goTime(created),
        ec_x: big(j.x!),
        ec_y: big(j.y!),
        ec_d: big(j.d!),
        public_key: createPublicKey(key).export({ type: 'spki', format: 'pem' }).toString(),
        creation_time: Math.floor(created.getTime() / 1000),
      };
    }

    function vaultBlob(name: string, type: number, entry: unknown, extra: Record<string, unknown> = {}): string {
      const empty = { key: null, hmac_key: null, time: '0001-01-01T00:00:00Z', creation_time: 0 };
      return toBlob({
        policy: {
          name,
          keys: { '1': entry },
          derived: false,
          kdf: 0,
          convergent_encryption: false,
          exportable: true,
          min_decryption_version: 1,
          min_encryption_version: 0,
          latest_version: 1,
          archive_version: 1,
          archive_min_version: 0,
          min_available_version: 0,
          deletion_allowed: false,
          convergent_version: 0,
          type,
          backup_info: { time: goTime(created), version: 1 },
          restore_info: null,
          allow_plaintext_backup: true,
          version_template: '',
          storage_prefix: '',
          auto_rotate_period: 0n,
          Imported: false,
          AllowImportedKeyRotation: false,
          ...extra,
        },
        archived_keys: { keys: [empty, entry] },
      });
    }

    it('restores an RSA key from bare big integers: it decrypts and signs as the original', async () => {
      await ok(h.write('restore/vault-rsa', { backup: vaultBlob('vault-rsa', 3, rsaEntry(rsa.privateKey)) }), 204);
      const read = await ok(h.read('keys/vault-rsa'));
      expect(read).to.include({ type: 'rsa-2048', latest_version: 1 });
      expect(createPublicKey(read.keys['1'].public_key).equals(rsa.publicKey)).to.equal(true);
      expect(read.keys['1'].creation_time).to.equal(goTime(created));
      expect(read.backup_info.version).to.equal(1);
      const ct = (await ok(h.write('encrypt/vault-rsa', { plaintext: b64('for the original') }))).ciphertext as string;
      const plain = privateDecrypt({ key: rsa.privateKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, Buffer.from(ct.split(':')[2]!, 'base64'));
      expect(plain.toString()).to.equal('for the original');
      const sig = (await ok(h.write('sign/vault-rsa', { input: b64('m'), signature_algorithm: 'pkcs1v15' }))).signature as string;
      expect(nodeVerify('sha256', Buffer.from('m'), rsa.publicKey, Buffer.from(sig.split(':')[2]!, 'base64'))).to.equal(true);
    });

    it('restores an ECDSA key from bare big integers: signatures verify both ways', async () => {
      await ok(h.write('restore/vault-ec', { backup: vaultBlob('vault-ec', 1, ecEntry(ec.privateKey)) }), 204);
      const sig = (await ok(h.write('sign/vault-ec', { input: b64('m') }))).signature as string;
      expect(nodeVerify('sha256', Buffer.from('m'), ec.publicKey, Buffer.from(sig.split(':')[2]!, 'base64'))).to.equal(true);
      const theirs = nodeSign('sha256', Buffer.from('n'), ec.privateKey);
      expect((await ok(h.write('verify/vault-ec', { input: b64('n'), signature: `vault:v1:${b64(theirs)}` }))).valid).to.equal(true);
    });

    it('writes the same integers back in its own backup', async () => {
      const again = blobJson(await backupOf(h, 'vault-rsa')).policy.keys['1'];
      const j = rsa.privateKey.export({ format: 'jwk' });
      expect(BigInt(again.rsa_key.D.value)).to.equal(big(j.d!));
      expect(BigInt(again.rsa_key.Precomputed.Qinv.value)).to.equal(big(j.qi!));
    });

    it('restores public-only entries, versions found only in the archive, and Go\'s untagged fields', async () => {
      const j = ec.publicKey.export({ format: 'jwk' });
      const publicOnly = { key: null, hmac_key: b64(randomBytes(32)), time: goTime(created), ec_x: big(j.x!), ec_y: big(j.y!), creation_time: 1709287200 };
      const blob = vaultBlob('vault-pub', 1, publicOnly, {
        keys: {},
        min_decryption_version: 1,
        Imported: true,
        AllowImportedKeyRotation: true,
        auto_rotate_period: 7200n * 1_000_000_000n,
      });
      await ok(h.write('restore/vault-pub', { backup: blob }), 204);
      const read = await ok(h.read('keys/vault-pub'));
      expect(read).to.include({ imported_key: true, imported_key_allow_rotation: true, auto_rotate_period: 7200 });
      expect(createPublicKey(read.keys['1'].public_key).equals(ec.publicKey)).to.equal(true);
      expect((await h.write('sign/vault-pub', { input: b64('m') })).status).to.equal(400);
      const theirs = nodeSign('sha256', Buffer.from('n'), ec.privateKey);
      expect((await ok(h.write('verify/vault-pub', { input: b64('n'), signature: `vault:v1:${b64(theirs)}` }))).valid).to.equal(true);
    });

    it('restores symmetric, Ed25519 and hmac (type 11) entries', async () => {
      const aes = randomBytes(32);
      await ok(h.write('restore/vault-aes', { backup: vaultBlob('vault-aes', 0, { key: b64(aes), hmac_key: b64(randomBytes(32)), time: goTime(created), creation_time: 1709287200 }) }), 204);
      expect((await ok(h.read('export/encryption-key/vault-aes/1'))).keys['1']).to.equal(b64(aes));
      const ed = generateKeyPairSync('ed25519');
      const jwk = ed.privateKey.export({ format: 'jwk' });
      const goKey = Buffer.concat([Buffer.from(jwk.d!, 'base64url'), Buffer.from(jwk.x!, 'base64url')]);
      await ok(h.write('restore/vault-ed', { backup: vaultBlob('vault-ed', 2, { key: b64(goKey), hmac_key: b64(randomBytes(32)), time: goTime(created), public_key: Buffer.from(jwk.x!, 'base64url').toString('base64'), creation_time: 1 }) }), 204);
      const sig = (await ok(h.write('sign/vault-ed', { input: b64('m') }))).signature as string;
      expect(nodeVerify(null, Buffer.from('m'), ed.publicKey, Buffer.from(sig.split(':')[2]!, 'base64'))).to.equal(true);
      const mac = randomBytes(48);
      await ok(h.write('restore/vault-hmac', { backup: vaultBlob('vault-hmac', 11, { key: b64(mac), hmac_key: b64(randomBytes(32)), time: goTime(created), creation_time: 1 }, { key_size: 48 }) }), 204);
      expect(await ok(h.read('keys/vault-hmac'))).to.include({ type: 'hmac', key_size: 48 });
      expect((await ok(h.read('export/hmac-key/vault-hmac/1'))).keys['1']).to.equal(b64(mac));
    });
  });

  describe('refused blobs answer 400 naming the problem and store nothing', () => {
    const goodAes = () => ({ key: b64(randomBytes(32)), hmac_key: b64(randomBytes(32)), time: '2024-01-01T00:00:00Z', creation_time: 1 });
    const policy = (extra: Record<string, unknown>) => ({
      policy: { name: 'bad', keys: { '1': goodAes() }, type: 0, latest_version: 1, min_decryption_version: 1, exportable: true, allow_plaintext_backup: true, ...extra },
    });
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });
    const [ec1, ec2] = [1, 2].map(() => generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' })) as [JsonWebKey, JsonWebKey];
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      ['no backup', {}, /'backup' must be supplied/],
      ['a backup that is not base64', { backup: 'not base64!' }, /unable to decode backup as base64/],
      ['base64 of something that is not JSON', { backup: b64('{"policy": ') }, /backup is not valid JSON/],
      ['JSON without a policy', { backup: toBlob({ archived_keys: null }) }, /has no "policy"/],
      ['an unknown key type', { backup: toBlob(policy({ type: 999 })) }, /unknown key type 999/],
      ['a managed key', { backup: toBlob(policy({ type: 10 })) }, /managed_key/],
      ['a missing version', { backup: toBlob(policy({ latest_version: 2 })) }, /missing key version 2/],
      ['no versions at all', { backup: toBlob(policy({ latest_version: 0 })) }, /no key versions/],
      ['a key of the wrong length', { backup: toBlob(policy({ keys: { '1': { ...goodAes(), key: b64(randomBytes(20)) } } })) }, /aes256-gcm96 key has 32 bytes, got 20/],
      [
        'RSA primes that are not the modulus\'s',
        { backup: toBlob(policy({ type: 3, keys: { '1': { ...goodAes(), key: null, rsa_key: { N: big(rsa.n!) + 2n, E: 65537, D: big(rsa.d!), Primes: [big(rsa.p!), big(rsa.q!)] } } } })) },
        /N is not the product of its primes/,
      ],
      [
        'an ECDSA ec_d that is not the private key of ec_x and ec_y',
        { backup: toBlob(policy({ type: 1, keys: { '1': { ...goodAes(), key: null, ec_x: big(ec1.x!), ec_y: big(ec1.y!), ec_d: big(ec2.d!) } } })) },
        /not the public key of ec_d/,
      ],
      ['RSA numbers given as strings', { backup: toBlob(policy({ type: 3, keys: { '1': { ...goodAes(), key: null, rsa_key: { N: '12', E: 3, D: 1, Primes: [] } } } })) }, /is not an integer/],
      ['a name that is a path', { backup: toBlob(policy({})), name: 'a/b' }, /key names cannot be paths/],
      ['a name with odd characters', { backup: toBlob(policy({})), name: 'a b' }, /invalid key name/],
    ];
    for (const [what, body, message] of cases) {
      it(`refuses ${what}`, async () => {
        const before = await snapshot(h.storage);
        const res = await h.write('restore', body);
        expect(res.status, res.error).to.equal(400);
        expect(res.error).to.match(message);
        expect(await snapshot(h.storage)).to.deep.equal(before);
      });
    }
  });

  describe('between two mounts over HTTP', () => {
    let server: RunningServer & { client: TestClient; rootToken: string };
    before(async () => {
      server = await startUnsealedServer({ plugins: [] });
      for (const mount of ['vault-a', 'vault-b']) expect((await server.client.post(`sys/mounts/${mount}`, { type: 'transit' })).status).to.equal(204);
    });
    after(() => server.close());

    it('backup in A, restore in B under a new name, and over an existing key with force', async () => {
      const c = server.client;
      expect((await c.post('vault-a/keys/payments', { exportable: true, allow_plaintext_backup: true })).status).to.equal(200);
      const ct = (await c.post('vault-a/encrypt/payments', { plaintext: b64('card') })).body.data.ciphertext;
      const backup = (await c.get('vault-a/backup/payments')).body.data.backup;
      expect((await c.post('vault-b/restore/payments-copy', { backup })).status).to.equal(204);
      expect((await c.post('vault-b/decrypt/payments-copy', { ciphertext: ct })).body.data.plaintext).to.equal(b64('card'));

      expect((await c.post('vault-b/keys/occupied')).status).to.equal(200);
      const refused = await c.post('vault-b/restore/occupied', { backup });
      expect(refused.status).to.equal(400);
      expect(refused.body.errors[0]).to.match(/already exists/);
      expect((await c.post('vault-b/restore/occupied', { backup, force: true })).status).to.equal(204);
      expect((await c.post('vault-b/decrypt/occupied', { ciphertext: ct })).body.data.plaintext).to.equal(b64('card'));
      expect((await c.get('vault-b/keys/occupied')).body.data.restore_info.version).to.equal(1);
    });
  });
});
