/**
 * Post-quantum signing keys (docs/transit.md, "Post-quantum signing keys"): ml-dsa and slh-dsa
 * with their parameter sets, hybrid ML-DSA + ECDSA/Ed25519 keys in the IETF composite format,
 * checked against published vectors and against @noble/post-quantum as a second implementation.
 */
import { createPublicKey, verify as nodeVerify } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { ml_dsa44, ml_dsa65, ml_dsa87 } from '@noble/post-quantum/ml-dsa.js';
import { slh_dsa_sha2_128s, slh_dsa_shake_128f } from '@noble/post-quantum/slh-dsa.js';
import { TransitHarness } from './harness.js';
import { rawPublic, restoredWith as restoredIn } from './pq-helpers.js';
import { turnsDuring } from '../../helpers/event-loop.js';
import { compositeMessage, SLH_DSA_POOL_SHARE, slhDsaSigningNow, type HybridEcType } from '../../../plugins/transit/crypto/pq-signing.js';

const b64 = (text: string | Buffer): string => Buffer.from(text).toString('base64');
const NOBLE_ML_DSA = { '44': ml_dsa44, '65': ml_dsa65, '87': ml_dsa87 } as const;

interface CompositeVector {
  readonly tcId: string;
  readonly pk: string;
  readonly sk: string;
  readonly s: string;
  readonly sWithContext: string;
}
const VECTORS = JSON.parse(readFileSync(new URL('../../../../test/fixtures/transit-vectors/composite-ml-dsa.json', import.meta.url), 'utf8')) as {
  m: string;
  tests: CompositeVector[];
};
const vector = (id: string): CompositeVector => VECTORS.tests.find((v) => v.tcId === id)!;

/** The signature bytes of vault:v<N>:<base64>. */
function signatureBytes(signature: string): Buffer {
  return Buffer.from(signature.split(':')[2]!, 'base64');
}

describe('transit post-quantum signing keys', function () {
  this.timeout(120_000);
  let t: TransitHarness;

  before(async () => {
    t = await TransitHarness.create();
  });

  async function ok(promise: ReturnType<TransitHarness['write']>, status = 200) {
    const res = await promise;
    expect(res.status, res.error).to.equal(status);
    return res.data;
  }

  async function roundTrip(key: string, input = b64('message')) {
    const { signature } = await ok(t.write(`sign/${key}`, { input }));
    const { valid } = await ok(t.write(`verify/${key}`, { input, signature }));
    const { valid: other } = await ok(t.write(`verify/${key}`, { input: b64('messagE'), signature }));
    return { signature: signature as string, valid: valid as boolean, other: other as boolean };
  }

  const restoredWith = (name: string, create: Record<string, unknown>, key: string, publicKey: string) => restoredIn(t, name, create, key, publicKey);

  describe('ml-dsa', () => {
    for (const set of ['44', '65', '87'] as const) {
      it(`ML-DSA-${set}: signs and verifies, and @noble/post-quantum agrees both ways`, async () => {
        const body = await ok(t.write(`keys/mldsa-${set}`, { type: 'ml-dsa', parameter_set: set, exportable: true }));
        expect(body).to.include({ type: 'ml-dsa', parameter_set: set, supports_signing: true, supports_encryption: false });
        expect(body.keys['1'].name).to.equal(`ml-dsa-${set}`);
        const { signature, valid, other } = await roundTrip(`mldsa-${set}`);
        expect([valid, other]).to.deep.equal([true, false]);

        const pem = (await ok(t.read(`export/public-key/mldsa-${set}/1`))).keys['1'];
        expect(pem).to.equal(body.keys['1'].public_key);
        const noble = NOBLE_ML_DSA[set];
        expect(noble.verify(signatureBytes(signature), Buffer.from('message'), rawPublic(pem))).to.equal(true);

        const seed = Buffer.from((await ok(t.read(`export/signing-key/mldsa-${set}/1`))).keys['1'], 'base64');
        expect(seed).to.have.length(32);
        const { secretKey, publicKey } = noble.keygen(seed);
        expect(Buffer.from(publicKey).equals(rawPublic(pem))).to.equal(true);
        const theirs = `vault:v1:${b64(Buffer.from(noble.sign(Buffer.from('from noble'), secretKey)))}`;
        expect((await ok(t.write(`verify/mldsa-${set}`, { input: b64('from noble'), signature: theirs }))).valid).to.equal(true);
      });
    }

    it('needs a parameter_set of 44, 65 or 87, and refuses the PQ fields on other types, naming the field', async () => {
      for (const [body, message] of [
        [{ type: 'ml-dsa' }, /invalid parameter_set "" for key type ml-dsa: expected one of 44, 65, 87/],
        [{ type: 'ml-dsa', parameter_set: '66' }, /invalid parameter_set "66"/],
        [{ type: 'aes256-gcm96', parameter_set: '65' }, /parameter_set is not valid for key type aes256-gcm96/],
        [{ type: 'ml-dsa', parameter_set: '65', hybrid_key_type_ec: 'ed25519' }, /only valid for hybrid keys, not ml-dsa/],
        [{ type: 'ml-dsa', parameter_set: '65', derived: true }, /key derivation and convergent encryption not supported for keys of type ml-dsa/],
      ] as const) {
        const res = await t.write('keys/refused', body);
        expect(res.status).to.equal(400);
        expect(res.error).to.match(message);
      }
    });

    it('signs batches, each item with its own result; verifies batches; refuses prehashed input', async () => {
      await ok(t.write('keys/batch', { type: 'ml-dsa', parameter_set: '44' }));
      const batch_input = [{ input: b64('one'), reference: 'a' }, { input: 'not base64!' }, { input: b64('three') }];
      const signed = (await ok(t.write('sign/batch', { batch_input }))).batch_results;
      expect(signed[0]).to.include({ key_version: 1, reference: 'a' });
      expect(signed[1].error).to.match(/base64/);
      const checks = [
        { input: b64('one'), signature: signed[0].signature },
        { input: b64('three'), signature: signed[2].signature },
        { input: b64('one'), signature: signed[2].signature },
      ];
      const verified = (await ok(t.write('verify/batch', { batch_input: checks }))).batch_results;
      expect(verified.map((r: { valid: boolean }) => r.valid)).to.deep.equal([true, true, false]);
      const prehashed = await t.write('sign/batch', { input: b64('x'), prehashed: true });
      expect([prehashed.status, prehashed.error]).to.deep.equal([400, 'prehashed input is not supported for ml-dsa keys: they sign the input itself (pure ML-DSA)']);
    });

    it('rotates (old signatures still verify), honours min_decryption_version and trims', async () => {
      await ok(t.write('keys/rotating', { type: 'ml-dsa', parameter_set: '65' }));
      const { signature: v1 } = await roundTrip('rotating');
      await ok(t.write('keys/rotating/rotate'));
      const { signature: v2, valid } = await roundTrip('rotating');
      expect(v2).to.match(/^vault:v2:/);
      expect(valid).to.equal(true);
      expect((await ok(t.write('verify/rotating', { input: b64('message'), signature: v1 }))).valid).to.equal(true);
      await ok(t.write('keys/rotating/config', { min_decryption_version: 2, min_encryption_version: 2 }));
      const old = await t.write('verify/rotating', { input: b64('message'), signature: v1 });
      expect(old.status).to.equal(400);
      await ok(t.write('keys/rotating/trim', { min_available_version: 2 }));
      expect(Object.keys((await ok(t.read('keys/rotating'))).keys)).to.deep.equal(['2']);
    });

    it('backs up and restores (Vault type 14 with parameter_set); the restored key verifies the original signatures', async () => {
      await ok(t.write('keys/saved', { type: 'ml-dsa', parameter_set: '87', exportable: true, allow_plaintext_backup: true }));
      const { signature } = await roundTrip('saved');
      const backup = (await ok(t.read('backup/saved'))).backup;
      const policy = JSON.parse(Buffer.from(backup, 'base64').toString('utf8')).policy;
      expect(policy).to.include({ type: 14, parameter_set: '87' });
      await ok(t.write('restore/saved-copy', { backup }), 204);
      expect((await ok(t.write('verify/saved-copy', { input: b64('message'), signature }))).valid).to.equal(true);
      expect((await ok(t.read('keys/saved-copy'))).parameter_set).to.equal('87');
    });

    it('refuses a restore whose public key is not its private key\'s', async () => {
      const v44 = vector('id-ML-DSA-44');
      const wrong = Buffer.from(v44.pk, 'base64');
      wrong[0]! ^= 1;
      const res = await restoredWith('mismatch', { type: 'ml-dsa', parameter_set: '44' }, v44.sk, b64(wrong));
      expect([res.status, res.error]).to.deep.equal([400, 'key version 1: the public key is not the public key of the private key']);
    });

    it('refuses to sign a CSR with a 400 that names the key types that can', async () => {
      await ok(t.write('keys/no-csr', { type: 'ml-dsa', parameter_set: '44' }));
      const res = await t.write('keys/no-csr/csr', {});
      expect([res.status, res.error]).to.deep.equal([400, "key type 'ml-dsa' cannot sign a CSR here: only ECDSA, Ed25519 and RSA keys do"]);
    });

    it('is not importable (Vault\'s import takes no post-quantum keys): 400, not a half-made key', async () => {
      const res = await t.write('keys/imported/import', { type: 'ml-dsa', public_key: 'x' });
      expect(res.status).to.equal(400);
      expect(res.error).to.match(/key type ml-dsa cannot be imported/);
    });

    for (const set of ['44', '65', '87'] as const) {
      it(`ML-DSA-${set} composite-draft vector: its seed gives its public key, and its signature verifies`, async () => {
        const v = vector(`id-ML-DSA-${set}`);
        await ok(restoredWith(`vector-${set}`, { type: 'ml-dsa', parameter_set: set }, v.sk, v.pk), 204);
        const pem = (await ok(t.read(`export/public-key/vector-${set}/1`))).keys['1'];
        expect(b64(rawPublic(pem))).to.equal(v.pk);
        expect((await ok(t.write(`verify/vector-${set}`, { input: VECTORS.m, signature: `vault:v1:${v.s}` }))).valid).to.equal(true);
      });
    }
  });

  describe('hybrid (IETF composite ML-DSA)', () => {
    const DEFINED: readonly [string, HybridEcType, string][] = [
      ['44', 'ed25519', 'id-MLDSA44-Ed25519-SHA512'],
      ['44', 'ecdsa-p256', 'id-MLDSA44-ECDSA-P256-SHA256'],
      ['65', 'ecdsa-p256', 'id-MLDSA65-ECDSA-P256-SHA512'],
      ['65', 'ecdsa-p384', 'id-MLDSA65-ECDSA-P384-SHA512'],
      ['65', 'ed25519', 'id-MLDSA65-Ed25519-SHA512'],
      ['87', 'ecdsa-p384', 'id-MLDSA87-ECDSA-P384-SHA512'],
      ['87', 'ecdsa-p521', 'id-MLDSA87-ECDSA-P521-SHA512'],
    ];
    for (const [set, ec, id] of DEFINED) {
      it(`${id}: the draft's vector verifies, and a signature made here verifies component by component elsewhere`, async () => {
        const create = { type: 'hybrid', parameter_set: set, hybrid_key_type_pqc: 'ml-dsa', hybrid_key_type_ec: ec };
        const v = vector(id);
        const name = `hybrid-${set}-${ec}`;
        await ok(restoredWith(name, create, v.sk, v.pk), 204);
        const body = await ok(t.read(`keys/${name}`));
        expect(body).to.include({ type: 'hybrid', parameter_set: set, hybrid_key_type_pqc: 'ml-dsa', hybrid_key_type_ec: ec });
        expect((await ok(t.write(`verify/${name}`, { input: VECTORS.m, signature: `vault:v1:${v.s}` }))).valid).to.equal(true);
        // The vector signed with a context; a signature with one is not a signature without it.
        expect((await ok(t.write(`verify/${name}`, { input: VECTORS.m, signature: `vault:v1:${v.sWithContext}` }))).valid).to.equal(false);

        const { signature } = await ok(t.write(`sign/${name}`, { input: b64('hybrid message') }));
        const bytes = signatureBytes(signature);
        const pk = Buffer.from(v.pk, 'base64');
        const noble = NOBLE_ML_DSA[set as '44' | '65' | '87'];
        const split = noble.lengths.signature!;
        const m = compositeMessage({ parameterSet: set, hybridEc: ec }, Buffer.from('hybrid message'));
        const label = Buffer.from(id.replace(/^id-/, 'COMPSIG-').replace('brainpool', 'BP'), 'ascii');
        expect(noble.verify(bytes.subarray(0, split), m, pk.subarray(0, noble.lengths.publicKey!), { context: label })).to.equal(true);
        const trad = pk.subarray(noble.lengths.publicKey!);
        const ecKey =
          ec === 'ed25519'
            ? createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: trad.toString('base64url') }, format: 'jwk' })
            : createPublicKey({ key: Buffer.concat([spkiPrefix(ec), trad]), format: 'der', type: 'spki' });
        const hash = ec === 'ed25519' ? null : { 'ecdsa-p256': 'sha256', 'ecdsa-p384': 'sha384', 'ecdsa-p521': 'sha512' }[ec];
        expect(nodeVerify(hash, m, ecKey, bytes.subarray(split))).to.equal(true);
      });
    }

    it('creates, rotates and signs with fresh keys of a defined pair; the public key is PEM under the draft OID', async () => {
      const body = await ok(t.write('keys/fresh-hybrid', { type: 'hybrid', parameter_set: '65', hybrid_key_type_pqc: 'ml-dsa', hybrid_key_type_ec: 'ecdsa-p256' }));
      expect(body.keys['1'].public_key).to.match(/^-----BEGIN PUBLIC KEY-----\n/);
      await ok(t.write('keys/fresh-hybrid/rotate'));
      const { signature, valid, other } = await roundTrip('fresh-hybrid');
      expect([signature.startsWith('vault:v2:'), valid, other]).to.deep.equal([true, true, false]);
    });

    it('refuses pairs the draft does not define, and a missing or wrong hybrid field, naming it', async () => {
      for (const [body, message] of [
        [{ parameter_set: '87', hybrid_key_type_pqc: 'ml-dsa', hybrid_key_type_ec: 'ed25519' }, /ML-DSA-87 with ed25519 is not a composite the IETF draft defines/],
        [{ parameter_set: '44', hybrid_key_type_pqc: 'ml-dsa', hybrid_key_type_ec: 'ecdsa-p521' }, /ML-DSA-44 with ecdsa-p521 is not a composite/],
        [{ parameter_set: '65', hybrid_key_type_ec: 'ed25519' }, /invalid hybrid_key_type_pqc ""/],
        [{ parameter_set: '65', hybrid_key_type_pqc: 'slh-dsa', hybrid_key_type_ec: 'ed25519' }, /invalid hybrid_key_type_pqc "slh-dsa"/],
        [{ parameter_set: '65', hybrid_key_type_pqc: 'ml-dsa', hybrid_key_type_ec: 'rsa-2048' }, /invalid hybrid_key_type_ec "rsa-2048"/],
      ] as const) {
        const res = await t.write('keys/bad-hybrid', { type: 'hybrid', ...body });
        expect(res.status).to.equal(400);
        expect(res.error).to.match(message);
      }
    });
  });

  describe('slh-dsa', () => {
    it('signs and verifies with a fast and a small set; @noble/post-quantum verifies the signatures', async () => {
      for (const [set, noble] of [
        ['slh-dsa-shake-128f', slh_dsa_shake_128f],
        ['slh-dsa-sha2-128s', slh_dsa_sha2_128s],
      ] as const) {
        const body = await ok(t.write(`keys/${set}`, { type: 'slh-dsa', parameter_set: set, exportable: true, allow_plaintext_backup: true }));
        expect(body.keys['1'].name).to.equal(set);
        const { signature, valid, other } = await roundTrip(set);
        expect([valid, other]).to.deep.equal([true, false]);
        const pem = (await ok(t.read(`export/public-key/${set}/1`))).keys['1'];
        expect(noble.verify(signatureBytes(signature), Buffer.from('message'), rawPublic(pem))).to.equal(true);
        await ok(t.write(`restore/${set}-copy`, { backup: (await ok(t.read(`backup/${set}`))).backup }), 204);
        expect((await ok(t.write(`verify/${set}-copy`, { input: b64('message'), signature }))).valid).to.equal(true);
      }
    });

    it('refuses ML-DSA parameter sets and unknown ones', async () => {
      const res = await t.write('keys/bad-slh', { type: 'slh-dsa', parameter_set: '65' });
      expect(res.status).to.equal(400);
      expect(res.error).to.match(/invalid parameter_set "65" for key type slh-dsa: expected one of slh-dsa-sha2-128s/);
    });

    it('a batch of slow SLH-DSA signatures holds at most two of the thread pool\'s four threads, leaving the rest to storage and other crypto', async () => {
      await ok(t.write('keys/shared-pool', { type: 'slh-dsa', parameter_set: 'slh-dsa-sha2-128s' }));
      let most = 0;
      const watch = setInterval(() => (most = Math.max(most, slhDsaSigningNow())), 1);
      try {
        const batch_input = Array.from({ length: 6 }, (_, i) => ({ input: b64(`item ${i}`) }));
        const results = (await ok(t.write('sign/shared-pool', { batch_input }))).batch_results;
        expect(results.every((r: { signature?: string }) => r.signature?.startsWith('vault:v1:'))).to.equal(true);
      } finally {
        clearInterval(watch);
      }
      expect(SLH_DSA_POOL_SHARE).to.equal(2);
      expect(most).to.equal(2);
      expect(slhDsaSigningNow()).to.equal(0);
    });

    it('a slow SLH-DSA signature does not hold up the event loop', async () => {
      await ok(t.write('keys/slow', { type: 'slh-dsa', parameter_set: 'slh-dsa-sha2-192s' }));
      const { result, turns } = await turnsDuring(() => t.write('sign/slow', { input: b64('message') }));
      expect(result.status, result.error).to.equal(200);
      // Signing inline would give the loop no turn at all while the signature is made.
      expect(turns).to.be.greaterThan(3);
    });
  });
});

/** The DER SubjectPublicKeyInfo header of an uncompressed point on the curve of `ec`. */
function spkiPrefix(ec: HybridEcType): Buffer {
  const header: Record<string, string> = {
    'ecdsa-p256': '3059301306072a8648ce3d020106082a8648ce3d030107034200',
    'ecdsa-p384': '3076301006072a8648ce3d020106052b81040022036200',
    'ecdsa-p521': '30819b301006072a8648ce3d020106052b8104002303818600',
  };
  return Buffer.from(header[ec]!, 'hex');
}
