/**
 * transit's AES-CMAC (over OpenSSL's AES) against the published vectors (RFC 4493, NIST SP 800-38B)
 * and against a second implementation (@noble/ciphers' cmac); aes128-cmac and aes256-cmac keys
 * over cmac/:name and verify, with their lifecycle (rotation, trim, export, backup, BYOK).
 */
import { cmac as nobleCmacOf } from '@noble/ciphers/aes.js';
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { AesCmac } from '../../../plugins/transit/crypto/aes-cmac.js';
import { computeCmac } from '../../../plugins/transit/crypto/cmac.js';
import { turnsDuring } from '../../helpers/event-loop.js';
import { nodeCmac, nodeCmacSubkeys } from '../../helpers/node-cmac.js';
import { ok, wrapFor } from './byok-helpers.js';
import { TransitHarness } from './harness.js';

/** @noble/ciphers' AES-CMAC: the second implementation transit's is checked against. */
const nobleCmac = (key: Uint8Array, message: Uint8Array): Buffer => Buffer.from(nobleCmacOf(message, key));

interface CmacVectors {
  readonly message: string;
  readonly keys: readonly { name: string; key: string; k1: string; k2: string; examples: readonly { length: number; mac: string }[] }[];
}

const vectors = JSON.parse(readFileSync(new URL('../../../../test/fixtures/transit-vectors/aes-cmac.json', import.meta.url), 'utf8')) as CmacVectors;
const message = Buffer.from(vectors.message, 'hex');
const b64 = (text: string | Uint8Array) => Buffer.from(text).toString('base64');
const macOf = (value: string) => Buffer.from(value.split(':')[2]!, 'base64');

describe('AES-CMAC', () => {
  for (const set of vectors.keys) {
    it(`gives the published MACs of ${set.name}, as the node:crypto construction does`, () => {
      const key = Buffer.from(set.key, 'hex');
      expect(nodeCmacSubkeys(key).k1.toString('hex')).to.equal(set.k1);
      expect(nodeCmacSubkeys(key).k2.toString('hex')).to.equal(set.k2);
      for (const example of set.examples) {
        const input = message.subarray(0, example.length);
        expect(computeCmac(key, input).toString('hex'), `${example.length} bytes`).to.equal(example.mac);
        expect(nodeCmac(key, input).toString('hex'), `node, ${example.length} bytes`).to.equal(example.mac);
      }
    });
  }

  it("agrees with @noble/ciphers' CMAC for random keys and messages of every length around the block size", () => {
    for (const keyBytes of [16, 32]) {
      for (const length of [0, 1, 15, 16, 17, 31, 32, 33, 100, 1000, 70_000]) {
        const [key, input] = [randomBytes(keyBytes), randomBytes(length)];
        expect(computeCmac(key, input).equals(nobleCmac(key, input)), `${keyBytes}-byte key, ${length} bytes`).to.equal(true);
      }
    }
  });

  it('gives the same MAC fed in pieces of any size as in one go, a final complete block included', () => {
    for (const length of [0, 16, 32, 47, 48, 1000]) {
      const [key, input] = [randomBytes(32), randomBytes(length)];
      for (const piece of [1, 7, 16, 17, 64]) {
        const mac = new AesCmac(key);
        for (let at = 0; at < input.length; at += piece) mac.update(input.subarray(at, at + piece));
        expect(mac.digest().equals(nobleCmac(key, input)), `${length} bytes in pieces of ${piece}`).to.equal(true);
      }
    }
  });

  it('cuts a MAC to its first mac_length bytes', () => {
    const key = randomBytes(16);
    expect(computeCmac(key, message, 5).equals(nobleCmac(key, message).subarray(0, 5))).to.equal(true);
  });
});

describe('aes128-cmac and aes256-cmac keys', () => {
  let h: TransitHarness;
  beforeEach(async () => {
    h = await TransitHarness.create();
  });

  for (const type of ['aes128-cmac', 'aes256-cmac'] as const) {
    it(`${type}: made, read, used by cmac and checked by verify, through a rotation`, async () => {
      await ok(h.write('keys/k', { type }));
      const read = await ok(h.read('keys/k'));
      expect(read).to.include({ type, supports_encryption: false, supports_decryption: false, supports_signing: false, supports_derivation: false });
      expect(read.keys).to.have.keys('1');

      const first = (await ok(h.write('cmac/k', { input: b64('the quick brown fox') }))).cmac as string;
      expect(first).to.match(/^vault:v1:[A-Za-z0-9+/]{22}==$/);
      await ok(h.write('keys/k/rotate'));
      const second = (await ok(h.write('cmac/k', { input: b64('the quick brown fox') }))).cmac as string;
      expect(second).to.match(/^vault:v2:/);
      expect((await ok(h.write('cmac/k', { input: b64('the quick brown fox'), key_version: 1 }))).cmac).to.equal(first);

      for (const cmac of [first, second]) expect((await ok(h.write('verify/k', { input: b64('the quick brown fox'), cmac }))).valid).to.equal(true);
      expect((await ok(h.write('verify/k', { input: b64('the quick brown fax'), cmac: second }))).valid).to.equal(false);
      expect((await ok(h.write('verify/k', { input: b64('the quick brown fox'), cmac: second.replace(':v2:', ':v1:') }))).valid).to.equal(false);
    });
  }

  it('computes the MAC node:crypto computes under the exported key, for the empty input too', async () => {
    await ok(h.write('keys/k', { type: 'aes256-cmac', exportable: true }));
    const exported = await ok(h.read('export/cmac-key/k/1'));
    expect(exported).to.deep.include({ name: 'k', type: 'aes256-cmac' });
    const key = Buffer.from(exported.keys['1'] as string, 'base64');
    expect(key).to.have.length(32);
    for (const input of [Buffer.alloc(0), randomBytes(16), randomBytes(1000)]) {
      const res = await h.write('cmac/k', { input: b64(input) });
      expect(macOf(res.data.cmac as string).equals(nobleCmac(key, input))).to.equal(true);
    }
  });

  it('cuts the MAC to mac_length, and verify takes a short MAC only at the length it is told', async () => {
    await ok(h.write('keys/k', { type: 'aes128-cmac' }));
    const short = (await ok(h.write('cmac/k', { input: b64('m'), mac_length: 8 }))).cmac as string;
    expect(macOf(short)).to.have.length(8);
    expect((await ok(h.write('verify/k', { input: b64('m'), cmac: short, mac_length: 8 }))).valid).to.equal(true);
    expect((await ok(h.write('verify/k', { input: b64('m'), cmac: short }))).valid).to.equal(false);

    const full = (await ok(h.write('cmac/k', { input: b64('m') }))).cmac as string;
    const truncated = `vault:v1:${macOf(full).subarray(0, 4).toString('base64')}`;
    expect((await ok(h.write('verify/k', { input: b64('m'), cmac: truncated }))).valid).to.equal(false);
    expect((await ok(h.write('verify/k', { input: b64('m'), cmac: full, mac_length: 8 }))).valid).to.equal(false);
  });

  it('takes url_mac_length from the URL over mac_length, with a warning, on cmac and verify', async () => {
    await ok(h.write('keys/k', { type: 'aes128-cmac' }));
    const url = await h.write('cmac/k/4', { input: b64('m') });
    expect(url.warnings).to.deep.equal([]);
    expect(macOf(url.data.cmac as string)).to.have.length(4);
    const both = await h.write('cmac/k/6', { input: b64('m'), mac_length: 3 });
    expect(both.warnings).to.have.length(1);
    expect(macOf(both.data.cmac as string)).to.have.length(6);
    expect((await ok(h.write('verify/k/6', { input: b64('m'), cmac: both.data.cmac }))).valid).to.equal(true);
  });

  it('answers a batch item by item with each item\'s mac_length, and verifies it the same way', async () => {
    await ok(h.write('keys/k', { type: 'aes256-cmac' }));
    const items = Array.from({ length: 10 }, (_, i) => ({ input: b64(`fox ${i}`), mac_length: i, reference: `r${i}` }));
    const made = (await ok(h.write('cmac/k', { batch_input: [...items, { reference: 'none' }, { input: 'not base64!' }, { input: b64('x'), mac_length: 17 }] }))).batch_results;
    expect(made).to.have.length(13);
    made.slice(0, 10).forEach((result: { cmac: string; reference: string }, i: number) => {
      expect(result.reference).to.equal(`r${i}`);
      expect(macOf(result.cmac)).to.have.length(i === 0 ? 16 : i);
    });
    expect(made[10]).to.deep.equal({ error: 'missing input for CMAC', reference: 'none' });
    expect(made[11].error).to.match(/input/);
    expect(made[12].error).to.match(/^mac_length 17 is invalid/);

    const checks = items.map((item, i) => ({ ...item, cmac: made[i].cmac as string }));
    checks.push({ ...checks[3]!, input: b64('other'), reference: 'wrong' });
    const verified = (await ok(h.write('verify/k', { batch_input: checks }))).batch_results;
    expect(verified.slice(0, 10).map((r: { valid?: boolean }) => r.valid)).to.deep.equal(Array(10).fill(true));
    expect(verified[10]).to.deep.equal({ reference: 'wrong' });
  });

  it('CMACs and verifies a megabyte input, alone or in a batch, with turns of the event loop for other clients meanwhile', async () => {
    await ok(h.write('keys/k', { type: 'aes128-cmac', exportable: true }));
    const key = Buffer.from((await ok(h.read('export/cmac-key/k/1'))).keys['1'] as string, 'base64');
    const big = randomBytes(1024 * 1024);
    const single = await turnsDuring(() => h.write('cmac/k', { input: b64(big) }));
    expect(macOf(single.result.data.cmac as string).equals(nobleCmac(key, big))).to.equal(true);
    expect(single.turns).to.be.greaterThan(5);
    const batch = await turnsDuring(() => h.write('verify/k', { batch_input: [{ input: b64('small'), cmac: 'vault:v1:AAAA' }, { input: b64(big), cmac: single.result.data.cmac }, { input: 'not base64!', cmac: single.result.data.cmac }] }));
    expect(batch.result.data.batch_results).to.deep.equal([{ reference: '' }, { valid: true, reference: '' }, { error: batch.result.data.batch_results[2].error, reference: '' }]);
    expect(batch.result.data.batch_results[2].error).to.match(/input/);
    expect(batch.turns).to.be.greaterThan(5);
  });

  it('refuses bad requests with a 400 naming the problem', async () => {
    await ok(h.write('keys/k', { type: 'aes128-cmac' }));
    await ok(h.write('keys/aes', { type: 'aes256-gcm96' }));
    const cmac = (await ok(h.write('cmac/k', { input: b64('m') }))).cmac as string;
    const refusals: [string, Record<string, unknown>, RegExp][] = [
      ['cmac/nope', { input: b64('m') }, /CMAC key not found/],
      ['cmac/aes', { input: b64('m') }, /key aes is not a supported CMAC key type: aes256-gcm96/],
      ['cmac/k', {}, /missing input for CMAC/],
      ['cmac/k', { input: 'garbage-input' }, /input/],
      ['cmac/k', { input: b64('m'), key_version: -10 }, /negative/],
      ['cmac/k', { input: b64('m'), key_version: 100 }, /higher than the latest/],
      ['cmac/k', { input: b64('m'), mac_length: 100 }, /mac_length 100 is invalid/],
      ['cmac/k/100', { input: b64('m') }, /url_mac_length 100 is invalid/],
      ['cmac/k', { batch_input: [] }, /missing batch input/],
      ['verify/aes', { input: b64('m'), cmac }, /not a supported CMAC key type/],
      ['verify/k', { input: b64('m'), cmac: 'vault:v1:garbage-input' }, /cmac/],
      ['verify/k', { input: b64('m'), cmac: 'vault:v1:' }, /the MAC is empty/],
      ['verify/k', { input: b64('m'), cmac: cmac.replace(':v1:', ':vblah:') }, /version number could not be decoded/],
      ['verify/k', { input: b64('m'), cmac: cmac.replace(':v1:', ':v10:') }, /too new/],
      ['verify/k', { input: b64('m'), cmac, mac_length: 100 }, /mac_length 100 is invalid/],
      ['verify/k/100', { input: b64('m'), cmac }, /url_mac_length 100 is invalid/],
      ['verify/k', { input: b64('m'), cmac, hash_algorithm: 'sha2-256' }, /hash_algorithm does not apply to CMACs/],
      ['verify/k', { input: b64('m'), cmac, hmac: cmac }, /provide one of 'signature', 'hmac' or 'cmac'/],
      ['verify/aes', { input: b64('m'), hmac: 'vault:v1:AA==', mac_length: 8 }, /mac_length applies to CMACs only/],
      ['hmac/k', { input: b64('m') }, /HMAC is not supported with key type aes128-cmac/],
      ['verify/k', { input: b64('m'), hmac: 'vault:v1:AA==' }, /HMAC is not supported with key type aes128-cmac/],
      ['keys/d', { type: 'aes128-cmac', derived: true }, /key derivation and convergent encryption not supported for keys of type aes128-cmac/],
      ['encrypt/k', { plaintext: b64('m') }, /does not support encryption|not supported/],
    ];
    for (const [path, body, message] of refusals) {
      const res = await h.write(path, body);
      expect(res.status, `${path} ${JSON.stringify(body)}`).to.equal(400);
      expect(res.error, path).to.match(message);
    }
    const mixed = await h.write('verify/k', { batch_input: [{ input: b64('m'), cmac }, { input: b64('m'), signature: 'vault:v1:AA==' }] });
    expect(mixed).to.include({ status: 400, error: "elements of batch_input must all provide either 'signature', 'hmac' or 'cmac'" });
  });

  it('exports only what a CMAC key has: cmac-key (and its unused HMAC key), not encryption or signing keys', async () => {
    await ok(h.write('keys/k', { type: 'aes128-cmac', exportable: true }));
    await ok(h.write('keys/aes', { type: 'aes256-gcm96', exportable: true }));
    expect((await h.read('export/encryption-key/k')).error).to.equal('encryption not supported for the key');
    expect((await h.read('export/signing-key/k')).error).to.equal('signing not supported for the key');
    expect((await h.read('export/public-key/k')).status).to.equal(400);
    expect((await h.read('export/cmac-key/aes')).error).to.match(/cmac-key export not supported for key type aes256-gcm96/);
    await ok(h.write('keys/secret', { type: 'aes128-cmac' }));
    expect((await h.read('export/cmac-key/secret')).error).to.equal('private key material is not exportable');
  });

  it('survives backup and restore as Vault\'s type 12 and 13, with every version still verifying', async () => {
    for (const [type, vaultType] of [['aes128-cmac', 12], ['aes256-cmac', 13]] as const) {
      await ok(h.write(`keys/${type}`, { type, exportable: true, allow_plaintext_backup: true }));
      await ok(h.write(`keys/${type}/rotate`));
      const macs = [1, 2].map(async (key_version) => (await ok(h.write(`cmac/${type}`, { input: b64('m'), key_version }))).cmac as string);
      const backup = (await ok(h.read(`backup/${type}`))).backup as string;
      const blob = JSON.parse(Buffer.from(backup, 'base64').toString('utf8'));
      expect(blob.policy.type).to.equal(vaultType);
      expect(Buffer.from(blob.policy.keys['2'].key as string, 'base64')).to.have.length(type === 'aes128-cmac' ? 16 : 32);
      await ok(h.write(`restore/copy-${type}`, { backup }), 204);
      expect((await ok(h.read(`keys/copy-${type}`))).type).to.equal(type);
      for (const cmac of await Promise.all(macs)) expect((await ok(h.write(`verify/copy-${type}`, { input: b64('m'), cmac }))).valid).to.equal(true);
    }
  });

  it('describes cmac and verify\'s CMAC fields in help and OpenAPI', () => {
    const cmac = (h.backend.help('cmac/k').openapi as any).paths['cmac/{name}/{url_mac_length}'];
    expect(Object.keys(cmac.fields)).to.include.members(['name', 'url_mac_length', 'mac_length', 'input', 'key_version', 'batch_input', 'reference']);
    expect(cmac.synopsis).to.match(/CMAC/);
    const verify = (h.backend.help('verify/k').openapi as any).paths['verify/{name}/{hash_algorithm}'];
    expect(Object.keys(verify.fields)).to.include.members(['cmac', 'mac_length']);
  });

  it('refuses a backup whose CMAC key has the wrong length', async () => {
    await ok(h.write('keys/k', { type: 'aes128-cmac', exportable: true, allow_plaintext_backup: true }));
    const blob = JSON.parse(Buffer.from((await ok(h.read('backup/k'))).backup as string, 'base64').toString('utf8'));
    blob.policy.keys['1'].key = randomBytes(32).toString('base64');
    blob.archived_keys.keys[1].key = blob.policy.keys['1'].key;
    const res = await h.write('restore/bad', { backup: Buffer.from(JSON.stringify(blob)).toString('base64') });
    expect(res.status).to.equal(400);
    expect(res.error).to.match(/a aes128-cmac key has 16 bytes, got 32/);
  });

  it('moves to another mount with byok-export, where every version verifies the MACs it made', async () => {
    const b = await TransitHarness.create();
    await ok(h.write('keys/to-b/import', { type: 'rsa-4096', public_key: (await ok(b.read('wrapping_key'))).public_key }), 204);
    await ok(h.write('keys/k', { type: 'aes256-cmac', exportable: true }));
    await ok(h.write('keys/k/rotate'));
    const macs = [await ok(h.write('cmac/k', { input: b64('m'), key_version: 1 })), await ok(h.write('cmac/k', { input: b64('m') }))];
    const exported = await ok(h.read('byok-export/to-b/k'));
    expect(exported).to.include({ name: 'k', type: 'aes256-cmac' });
    await ok(b.write('keys/k/import', { type: 'aes256-cmac', ciphertext: exported.keys['1'] }), 204);
    await ok(b.write('keys/k/import_version', { ciphertext: exported.keys['2'] }), 204);
    for (const { cmac } of macs) expect((await ok(b.write('verify/k', { input: b64('m'), cmac }))).valid).to.equal(true);
  });

  it('imports a CMAC key (BYOK) that then gives the published MACs, refuses a key of the wrong size, and trims old versions', async () => {
    const set = vectors.keys[0]!;
    await ok(h.write('keys/rfc/import', { type: 'aes128-cmac', ciphertext: await wrapFor(h, Buffer.from(set.key, 'hex')), allow_rotation: true }), 204);
    for (const example of set.examples) {
      const res = await ok(h.write('cmac/rfc', { input: b64(message.subarray(0, example.length)) }));
      expect(macOf(res.cmac as string).toString('hex')).to.equal(example.mac);
    }
    const wrongSize = await h.write('keys/short/import', { type: 'aes256-cmac', ciphertext: await wrapFor(h, randomBytes(16)) });
    expect(wrongSize.status).to.equal(400);
    expect(wrongSize.error).to.match(/invalid key size 16 bytes for key type aes256-cmac/);
    const publicOnly = await h.write('keys/pub/import', { type: 'aes128-cmac', public_key: '-----BEGIN PUBLIC KEY-----' });
    expect(publicOnly.error).to.match(/does not support public_key import/);

    await ok(h.write('keys/rfc/rotate'));
    expect((await h.write('keys/rfc/config', { min_decryption_version: 2, min_encryption_version: 2 })).status).to.be.lessThan(300);
    expect((await h.write('keys/rfc/trim', { min_available_version: 2 })).status).to.be.lessThan(300);
    expect((await ok(h.read('keys/rfc'))).keys).to.have.keys('2');
    const old = await h.write('cmac/rfc', { input: b64('m'), key_version: 1 });
    expect(old.status).to.equal(400);
  });
});
