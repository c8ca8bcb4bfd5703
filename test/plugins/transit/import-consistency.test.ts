/**
 * Imported asymmetric keys must be one key: the public key is derived from the private part (d·G,
 * the Ed25519 seed, RSA's n, e, d, p, q and CRT values checked against each other), never taken
 * from the uploaded structure, so a private key carrying someone else's public key cannot complete
 * their public-only version through import_version. RSA keys also need exactly the type's modulus
 * size and an odd public exponent of at least 65537. Restore checks a backup's keys the same way.
 */
import { expect } from 'chai';
import {
  constants,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  generatePrimeSync,
  privateDecrypt,
  verify as nodeVerify,
  type JsonWebKey,
  type KeyObject,
} from 'node:crypto';
import { stringify } from 'lossless-json';
import { TransitHarness } from './harness.js';
import { ok, snapshot, wrapFor } from './byok-helpers.js';
import { startUnsealedServer } from '../../helpers/server.js';
import type { RunningServer } from '../../../core/server.js';
import type { TestClient } from '../../helpers/http.js';
import { wrapKeyMaterial } from '../../../plugins/transit/crypto/byok.js';

const b64 = (data: string | Buffer) => Buffer.from(data).toString('base64');
const pkcs8 = (key: KeyObject) => key.export({ type: 'pkcs8', format: 'der' });
const spkiPem = (key: KeyObject) => key.export({ type: 'spki', format: 'pem' }).toString();
const jwkOf = (key: KeyObject) => key.export({ format: 'jwk' });
const fromJwk = (jwk: JsonWebKey) => createPrivateKey({ key: jwk, format: 'jwk' });
const big = (base64url: string) => BigInt(`0x${Buffer.from(base64url, 'base64url').toString('hex')}`);

function unsigned(value: bigint, width = 0): string {
  const hex = value.toString(16);
  return Buffer.from(hex.padStart(Math.max(width * 2, hex.length + (hex.length % 2)), '0'), 'hex').toString('base64url');
}

function modInverse(a: bigint, m: bigint): bigint {
  let [r0, r1, s0, s1] = [a % m, m, 1n, 0n];
  while (r1 !== 0n) {
    const quotient = r0 / r1;
    [r0, r1, s0, s1] = [r1, r0 - quotient * r1, s1, s0 - quotient * s1];
  }
  return ((s0 % m) + m) % m;
}

const gcd = (a: bigint, b: bigint): bigint => (b === 0n ? a : gcd(b, a % b));

/** A two-prime RSA private key, with d the inverse of e modulo `modulus` (λ(n) or φ(n)) and exact CRT values. */
function rsaFromFactors(p: bigint, q: bigint, modulus: (p: bigint, q: bigint) => bigint): KeyObject {
  const e = 65537n;
  const d = modInverse(e, modulus(p, q));
  return fromJwk({
    kty: 'RSA',
    n: unsigned(p * q),
    e: unsigned(e),
    d: unsigned(d),
    p: unsigned(p),
    q: unsigned(q),
    dp: unsigned(d % (p - 1n)),
    dq: unsigned(d % (q - 1n)),
    qi: unsigned(modInverse(q, p)),
  });
}
const lambda = (p: bigint, q: bigint) => ((p - 1n) * (q - 1n)) / gcd(p - 1n, q - 1n);
const phi = (p: bigint, q: bigint) => (p - 1n) * (q - 1n);

/** Two different factors from `makeP` and `makeQ` whose product has exactly `bits` bits. */
function factors(bits: number, makeP: () => bigint, makeQ: () => bigint): [bigint, bigint] {
  for (;;) {
    const [p, q] = [makeP(), makeQ()];
    if ((p * q).toString(2).length === bits && p !== q) return [p, q];
  }
}

/** An EC private key: the scalar of `secret`, the public point of `claimed`. */
function ecWithForeignPoint(secret: KeyObject, claimed: KeyObject): KeyObject {
  const { x, y } = jwkOf(claimed);
  return fromJwk({ ...jwkOf(secret), x, y });
}

const CURVES = { 'ecdsa-p256': 'P-256', 'ecdsa-p384': 'P-384', 'ecdsa-p521': 'P-521' } as const;
const ORDER_P256 = BigInt('0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551');

const rsaA = generateKeyPairSync('rsa', { modulusLength: 2048 });
const rsaB = generateKeyPairSync('rsa', { modulusLength: 2048 });

describe('transit import: consistency of asymmetric keys', function () {
  this.timeout(120_000);
  let h: TransitHarness;

  before(async () => {
    h = await TransitHarness.create();
  });

  let attempt = 0;
  /** Sends `body` to a fresh name under `prefix` (import or restore): 400 with `message`, and nothing stored. */
  async function refused(body: Record<string, unknown>, message: RegExp, prefix: 'keys' | 'restore' = 'keys'): Promise<void> {
    const name = `refused-${++attempt}`;
    const before = await snapshot(h.storage);
    const res = await h.write(prefix === 'keys' ? `keys/${name}/import` : `restore/${name}`, body);
    expect(res.status, res.error).to.equal(400);
    expect(res.error).to.match(message);
    expect(await snapshot(h.storage)).to.deep.equal(before);
    expect((await h.read(`keys/${name}`)).status).to.equal(404);
  }

  /** Signs through transit, verifies through transit and with node against the original public key. */
  async function signsAndVerifies(name: string, publicKey: KeyObject): Promise<void> {
    const sig = (await ok(h.write(`sign/${name}`, { input: b64('signed here') }))).signature as string;
    expect((await ok(h.write(`verify/${name}`, { input: b64('signed here'), signature: sig }))).valid, name).to.equal(true);
    const raw = Buffer.from(sig.split(':')[2]!, 'base64');
    const data = Buffer.from('signed here');
    // Transit's defaults: PSS for RSA, DER-encoded ECDSA, SHA-256 for both.
    const valid =
      publicKey.asymmetricKeyType === 'ed25519'
        ? nodeVerify(null, data, publicKey, raw)
        : publicKey.asymmetricKeyType === 'rsa'
          ? nodeVerify('sha256', data, { key: publicKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_AUTO }, raw)
          : nodeVerify('sha256', data, publicKey, raw);
    expect(valid, name).to.equal(true);
  }

  describe('ECDSA', () => {
    for (const [type, curve] of Object.entries(CURVES)) {
      it(`${type}: refuses a private key carrying another key's public point, as PKCS#8 and as SEC1`, async () => {
        const mine = generateKeyPairSync('ec', { namedCurve: curve });
        const theirs = generateKeyPairSync('ec', { namedCurve: curve });
        const mixed = ecWithForeignPoint(mine.privateKey, theirs.publicKey);
        for (const der of [pkcs8(mixed), mixed.export({ type: 'sec1', format: 'der' })]) {
          await refused({ type, ciphertext: await wrapFor(h, der) }, /^invalid key: the public point in the ECDSA key material is not the public key of its private scalar$/);
        }
      });
    }

    it('refuses a private scalar equal to the group order, which has no public key', async () => {
      const key = fromJwk({ ...jwkOf(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey), d: unsigned(ORDER_P256, 32) });
      await refused({ type: 'ecdsa-p256', ciphertext: await wrapFor(h, pkcs8(key)) }, /^invalid key: the ECDSA private scalar is not valid for P-256$/);
    });
  });

  describe('RSA', () => {
    const a = jwkOf(rsaA.privateKey);
    const b = jwkOf(rsaB.privateKey);
    const cases: Array<[string, () => KeyObject, RegExp]> = [
      ['the modulus of one key and the primes of another', () => fromJwk({ ...a, n: b.n }), /the modulus n is not the product of the primes p and q/],
      ['the primes and CRT values of one key with n, e and d of another', () => fromJwk({ ...a, p: b.p, q: b.q, dp: b.dp, dq: b.dq, qi: b.qi }), /the modulus n is not the product/],
      ['a private exponent d that is off', () => fromJwk({ ...a, d: unsigned(big(a.d!) + 2n) }), /the private exponent d is not the inverse of the public exponent e modulo lcm\(p-1, q-1\)/],
      ['a CRT exponent dp that is off', () => fromJwk({ ...a, dp: unsigned(big(a.dp!) + 2n) }), /the CRT exponent dp is not d mod \(p-1\)/],
      ['a CRT exponent dq that is off', () => fromJwk({ ...a, dq: unsigned(big(a.dq!) + 2n) }), /the CRT exponent dq is not d mod \(q-1\)/],
      ['a CRT coefficient qi that is off', () => fromJwk({ ...a, qi: unsigned(big(a.qi!) + 1n) }), /the CRT coefficient qi is not the inverse of q modulo p/],
      [
        'p equal to q',
        () => {
          let p: bigint;
          do p = generatePrimeSync(1024, { bigint: true });
          while ((p * p).toString(2).length !== 2048);
          return rsaFromFactors(p, p, (prime) => prime - 1n);
        },
        /the primes p and q are equal/,
      ],
      [
        'a p that is not prime (every other value consistent with it)',
        () => {
          const [p, q] = factors(
            2048,
            () => generatePrimeSync(512, { bigint: true }) * generatePrimeSync(512, { bigint: true }),
            () => generatePrimeSync(1024, { bigint: true }),
          );
          return rsaFromFactors(p, q, lambda);
        },
        /p or q is not prime/,
      ],
    ];
    for (const [what, make, message] of cases) {
      it(`refuses an RSA key with ${what}, in PKCS#8 and PKCS#1`, async () => {
        const key = make();
        for (const der of [pkcs8(key), key.export({ type: 'pkcs1', format: 'der' })]) {
          await refused({ type: 'rsa-2048', ciphertext: await wrapFor(h, der) }, new RegExp(`^invalid key: inconsistent RSA key: ${message.source}`));
        }
      });
    }

    it('imports an RSA key whose d is the inverse of e modulo φ(n) as well as one modulo λ(n); both sign, verify and decrypt', async () => {
      let p: bigint, q: bigint;
      // With gcd(p-1, q-1) = 2 the two inverses coincide half the time; only different ones test both conventions.
      do [p, q] = factors(2048, () => generatePrimeSync(1024, { bigint: true }), () => generatePrimeSync(1024, { bigint: true }));
      while (modInverse(65537n, phi(p, q)) === modInverse(65537n, lambda(p, q)));
      for (const [name, modulus] of [['rsa-phi', phi], ['rsa-lambda', lambda]] as const) {
        const key = rsaFromFactors(p, q, modulus);
        await ok(h.write(`keys/${name}/import`, { type: 'rsa-2048', ciphertext: await wrapFor(h, pkcs8(key)) }), 204);
        await signsAndVerifies(name, createPublicKey(key));
        const ct = (await ok(h.write(`encrypt/${name}`, { plaintext: b64('to decrypt') }))).ciphertext as string;
        expect((await ok(h.write(`decrypt/${name}`, { ciphertext: ct }))).plaintext).to.equal(b64('to decrypt'));
        const theirs = privateDecrypt({ key, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, Buffer.from(ct.split(':')[2]!, 'base64'));
        expect(theirs.toString()).to.equal('to decrypt');
      }
    });

    it('refuses a modulus one bit short of the type\'s size, as a private key and as a public key', async () => {
      const short = generateKeyPairSync('rsa', { modulusLength: 2047 });
      const message = /^invalid key size: rsa-2048 needs a modulus of exactly 2048 bits, got 2047 bits$/;
      await refused({ type: 'rsa-2048', ciphertext: await wrapFor(h, pkcs8(short.privateKey)) }, message);
      await refused({ type: 'rsa-2048', public_key: spkiPem(short.publicKey) }, message);
    });

    it('refuses public exponents below 65537 and even ones, as a private key and as a public key', async () => {
      const three = generateKeyPairSync('rsa', { modulusLength: 2048, publicExponent: 3 });
      await refused({ type: 'rsa-2048', ciphertext: await wrapFor(h, pkcs8(three.privateKey)) }, /^invalid RSA public exponent 3: it must be at least 65537$/);
      await refused({ type: 'rsa-2048', public_key: spkiPem(three.publicKey) }, /^invalid RSA public exponent 3: it must be at least 65537$/);
      const even = createPublicKey({ key: { kty: 'RSA', n: a.n!, e: unsigned(65538n) }, format: 'jwk' });
      await refused({ type: 'rsa-2048', public_key: spkiPem(even) }, /^invalid RSA public exponent 65538: it must be odd$/);
      await refused({ type: 'rsa-2048', ciphertext: await wrapFor(h, pkcs8(fromJwk({ ...a, e: unsigned(65538n) }))) }, /^invalid RSA public exponent 65538: it must be odd$/);
    });

  });

  describe('import_version on a public-only version', () => {
    const pairs = {
      'ecdsa-p256': () => generateKeyPairSync('ec', { namedCurve: 'P-256' }),
      'ecdsa-p521': () => generateKeyPairSync('ec', { namedCurve: 'P-521' }),
      'rsa-2048': () => generateKeyPairSync('rsa', { modulusLength: 2048 }),
    } as const;
    /** The attacker's private values under the victim's public key. */
    const forged = (attacker: KeyObject, victim: KeyObject) =>
      victim.asymmetricKeyType === 'rsa' ? fromJwk({ ...jwkOf(attacker), n: jwkOf(victim).n, e: jwkOf(victim).e }) : ecWithForeignPoint(attacker, victim);

    for (const [type, pair] of Object.entries(pairs)) {
      it(`${type}: refuses another private key wearing the version's public key, and the version can still be completed with its own`, async () => {
        const name = `victim-${type}`;
        const victim = pair();
        await ok(h.write(`keys/${name}/import`, { type, public_key: spkiPem(victim.publicKey) }), 204);
        const attack = pkcs8(forged(pair().privateKey, victim.publicKey));
        for (const version of [undefined, 1]) {
          const before = await snapshot(h.storage);
          const res = await h.write(`keys/${name}/import_version`, { ciphertext: await wrapFor(h, attack), ...(version ? { version } : {}) });
          expect(res.status, res.error).to.equal(400);
          expect(res.error).to.match(/^invalid key: /);
          expect(await snapshot(h.storage)).to.deep.equal(before);
        }
        expect((await h.write(`sign/${name}`, { input: b64('m') })).status).to.equal(400);

        await ok(h.write(`keys/${name}/import_version`, { version: 1, ciphertext: await wrapFor(h, pkcs8(victim.privateKey)) }), 204);
        expect((await ok(h.read(`keys/${name}`))).latest_version).to.equal(1);
        await signsAndVerifies(name, victim.publicKey);
      });
    }
  });

  describe('valid keys', () => {
    const rsa3072 = generateKeyPairSync('rsa', { modulusLength: 3072 });
    const rsa4096 = generateKeyPairSync('rsa', { modulusLength: 4096 });
    const keys: Array<[string, KeyObject]> = [
      ['ecdsa-p256', generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey],
      ['ecdsa-p384', generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey],
      ['ecdsa-p521', generateKeyPairSync('ec', { namedCurve: 'P-521' }).privateKey],
      ['ed25519', generateKeyPairSync('ed25519').privateKey],
      ['rsa-2048', rsaA.privateKey],
      ['rsa-3072', rsa3072.privateKey],
      ['rsa-4096', rsa4096.privateKey],
    ];
    for (const [type, key] of keys) {
      it(`${type}: imports the key in every encoding it accepts, with its own public key, and signs what verifies`, async () => {
        const encodings = [pkcs8(key)];
        if (type.startsWith('ecdsa')) encodings.push(key.export({ type: 'sec1', format: 'der' }));
        if (type.startsWith('rsa')) encodings.push(key.export({ type: 'pkcs1', format: 'der' }));
        if (type === 'ed25519') encodings.push(Buffer.from(jwkOf(key).d!, 'base64url'));
        for (const [i, der] of encodings.entries()) {
          const name = `valid-${type}-${i}`;
          await ok(h.write(`keys/${name}/import`, { type, ciphertext: await wrapFor(h, der) }), 204);
          const stored = (await ok(h.read(`keys/${name}`))).keys['1'].public_key as string;
          if (type === 'ed25519') expect(stored).to.equal(Buffer.from(jwkOf(key).x!, 'base64url').toString('base64'));
          else expect(createPublicKey(stored).equals(createPublicKey(key))).to.equal(true);
          await signsAndVerifies(name, createPublicKey(key));
        }
      });
    }
  });

  describe('restore', () => {
    /** A Vault-format backup of one rsa-2048 version with these Go rsa.PrivateKey values. */
    function rsaBackup(jwk: JsonWebKey): string {
      const rsaKey = {
        N: big(jwk.n!),
        E: big(jwk.e!),
        D: big(jwk.d!),
        Primes: [big(jwk.p!), big(jwk.q!)],
        Precomputed: { Dp: big(jwk.dp!), Dq: big(jwk.dq!), Qinv: big(jwk.qi!) },
      };
      const entry = { key: null, hmac_key: b64(Buffer.alloc(32, 7)), time: '2024-01-01T00:00:00Z', creation_time: 1, rsa_key: rsaKey };
      const policy = { name: 'restored', keys: { '1': entry }, type: 3, latest_version: 1, min_decryption_version: 1, exportable: true, allow_plaintext_backup: true };
      return b64(stringify({ policy })!);
    }

    const a = jwkOf(rsaA.privateKey);
    for (const [what, jwk, message] of [
      ['a D that is off', { ...a, d: unsigned(big(a.d!) + 2n) }, /the private exponent d is not the inverse/],
      ['a Dp that is off', { ...a, dp: unsigned(big(a.dp!) + 2n) }, /the CRT exponent dp is not d mod \(p-1\)/],
      ['a Qinv that is off', { ...a, qi: unsigned(big(a.qi!) + 1n) }, /the CRT coefficient qi is not the inverse of q modulo p/],
    ] as const) {
      it(`refuses a backup whose RSA key has ${what} (OpenSSL would sign with it all the same), storing nothing`, async () => {
        await refused({ backup: rsaBackup(jwk) }, new RegExp(`^key version 1: inconsistent RSA key: ${message.source}`), 'restore');
      });
    }

    it('restores a consistent RSA key from the same kind of backup', async () => {
      await ok(h.write('restore/good-rsa', { backup: rsaBackup(a) }), 204);
      await signsAndVerifies('good-rsa', rsaA.publicKey);
    });
  });

  describe('over HTTP', () => {
    let server: RunningServer & { client: TestClient; rootToken: string };
    before(async () => {
      server = await startUnsealedServer({ plugins: [] });
      expect((await server.client.post('sys/mounts/transit', { type: 'transit' })).status).to.equal(204);
    });
    after(() => server.close());

    it('answers 400 to import_version of a forged key on a public-only version, then 204 to the real one', async () => {
      const c = server.client;
      const victim = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      expect((await c.post('transit/keys/signer/import', { type: 'ecdsa-p256', public_key: spkiPem(victim.publicKey) })).status).to.equal(204);
      const wrapping = createPublicKey((await c.get('transit/wrapping_key')).body.data.public_key);
      const wrap = (key: KeyObject) => wrapKeyMaterial(wrapping, pkcs8(key), 'sha256').toString('base64');

      const forged = ecWithForeignPoint(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey, victim.publicKey);
      const attack = await c.post('transit/keys/signer/import_version', { version: 1, ciphertext: wrap(forged) });
      expect(attack.status, attack.text).to.equal(400);
      expect(attack.body.errors[0]).to.match(/public point in the ECDSA key material is not the public key of its private scalar/);
      expect((await c.post('transit/sign/signer', { input: b64('m') })).status).to.equal(400);

      expect((await c.post('transit/keys/signer/import_version', { version: 1, ciphertext: wrap(victim.privateKey) })).status).to.equal(204);
      const sig = (await c.post('transit/sign/signer', { input: b64('m') })).body.data.signature as string;
      expect(nodeVerify('sha256', Buffer.from('m'), { key: victim.publicKey, dsaEncoding: 'der' }, Buffer.from(sig.split(':')[2]!, 'base64'))).to.equal(true);
    });
  });
});
