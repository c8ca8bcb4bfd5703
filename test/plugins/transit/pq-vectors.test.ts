/**
 * NIST ACVP samples for ML-DSA (FIPS 204) and SLH-DSA (FIPS 205), kept in
 * test/fixtures/transit-vectors/ with their provenance: the key material of each sample enters a
 * transit key by restore, and what transit then derives, exports and signs is checked against
 * the published values.
 */
import { createPublicKey, verify } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import * as slh from '@noble/post-quantum/slh-dsa.js';
import { TransitHarness } from './harness.js';
import { rawPublic, restoredWith } from './pq-helpers.js';

const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../../../../test/fixtures/transit-vectors/${name}`, import.meta.url), 'utf8'));
const ML_DSA = fixture('acvp-ml-dsa.json') as {
  keyGen: { parameterSet: string; tcId: number; seed: string; pk: string }[];
  sigVer: { parameterSet: string; tcId: number; testPassed: boolean; reason: string; pk: string; message: string; context: string; signature: string }[];
};
const SLH_DSA = fixture('acvp-slh-dsa.json') as { keyGen: { parameterSet: string; tcId: number; sk: string; pk: string }[] };
const hexToB64 = (hex: string): string => Buffer.from(hex, 'hex').toString('base64');

describe('transit post-quantum keys against NIST ACVP samples', function () {
  this.timeout(120_000);
  let t: TransitHarness;

  before(async () => {
    t = await TransitHarness.create();
  });

  describe('ML-DSA keyGen (FIPS 204 Algorithm 6)', () => {
    for (const v of ML_DSA.keyGen) {
      it(`${v.parameterSet} tcId ${v.tcId}: the seed restores to a key whose public key is the published pk`, async () => {
        const set = v.parameterSet.replace('ML-DSA-', '');
        const name = `acvp-ml-dsa-${v.tcId}`;
        const restored = await restoredWith(t, name, { type: 'ml-dsa', parameter_set: set }, hexToB64(v.seed), hexToB64(v.pk));
        expect(restored.status, restored.error).to.equal(204);
        const pem = (await t.read(`export/public-key/${name}/1`)).data.keys['1'];
        expect(rawPublic(pem).toString('hex')).to.equal(v.pk.toLowerCase());
      });
    }
  });

  describe('ML-DSA sigVer, external interface, pure (FIPS 204 Algorithm 3)', () => {
    for (const v of ML_DSA.sigVer) {
      it(`${v.parameterSet} tcId ${v.tcId}: node:crypto, which transit verifies with, answers ${v.testPassed} (${v.reason})`, () => {
        const key = createPublicKey({ key: { kty: 'AKP', alg: v.parameterSet, pub: Buffer.from(v.pk, 'hex').toString('base64url') }, format: 'jwk' });
        const valid = verify(null, Buffer.from(v.message, 'hex'), { key, context: Buffer.from(v.context, 'hex') }, Buffer.from(v.signature, 'hex'));
        expect(valid).to.equal(v.testPassed);
      });
    }
  });

  describe('SLH-DSA keyGen (FIPS 205 Algorithm 18), every parameter set', () => {
    for (const v of SLH_DSA.keyGen) {
      it(`${v.parameterSet} tcId ${v.tcId}: the published sk restores, exports the published pk, and signs what @noble/post-quantum verifies under it`, async () => {
        const set = v.parameterSet.toLowerCase();
        const name = `acvp-${set}`;
        const restored = await restoredWith(t, name, { type: 'slh-dsa', parameter_set: set }, hexToB64(v.sk), hexToB64(v.pk));
        expect(restored.status, restored.error).to.equal(204);
        const pem = (await t.read(`export/public-key/${name}/1`)).data.keys['1'];
        expect(rawPublic(pem).toString('hex')).to.equal(v.pk.toLowerCase());
        const signed = await t.write(`sign/${name}`, { input: Buffer.from('acvp').toString('base64') });
        expect(signed.status, signed.error).to.equal(200);
        const signature = Buffer.from(signed.data.signature.split(':')[2], 'base64');
        const noble = (slh as unknown as Record<string, { verify(sig: Uint8Array, msg: Uint8Array, pk: Uint8Array): boolean }>)[set.replaceAll('-', '_')]!;
        expect(noble.verify(signature, Buffer.from('acvp'), Buffer.from(v.pk, 'hex'))).to.equal(true);
      });
    }
  });
});
