/**
 * Consistency of asymmetric private keys that come from outside (import, import_version, restore).
 *
 * A PKCS#8, PKCS#1 or SEC1 private key carries public values beside its secret, and OpenSSL takes
 * them as given: an EC key keeps whatever public point it was sent (node's createPublicKey returns
 * that point, not d·G), and an RSA key its n, e, d and CRT values, none of them checked against
 * the others. A key whose parts disagree signs nothing that verifies; worse, its public half can
 * be someone else's, which passes import_version's "does the private key match this public-only
 * version" test and leaves the version holding a private key that is not its own, for good. So
 * the public key is derived here from the secret alone and the key is refused when anything
 * disagrees. Messages name the part that is wrong and never a value of the key.
 */
import { checkPrime, createECDH, createPublicKey, type KeyObject } from 'node:crypto';
import { BadRequestError } from '../../../sdk/index.js';
import { ed25519FromSeed } from '../crypto/derive.js';
import type { KeyTypeInfo } from './key-types.js';

const ECDH_CURVES: Readonly<Record<string, string>> = { 'P-256': 'prime256v1', 'P-384': 'secp384r1', 'P-521': 'secp521r1' };

/** Below this, and for even values, an imported RSA key is refused (small exponents invite padding attacks). */
const MIN_RSA_PUBLIC_EXPONENT = 65537n;

/**
 * The public key of a private key of `info`'s type, derived from its secret part: d·G for ECDSA,
 * the seed's key for Ed25519, and for RSA (n, e) once n, e, d, p, q and the CRT values are shown to
 * be one key. `what` starts every message ("invalid key", "key version 3").
 */
export async function publicKeyOfPrivate(info: KeyTypeInfo, privateKey: KeyObject, what: string): Promise<KeyObject> {
  const embedded = createPublicKey(privateKey);
  switch (info.family) {
    case 'ecdsa':
      if (!embedded.equals(ecPublicKeyOfScalar(info, privateKey, what))) {
        throw new BadRequestError(`${what}: the public point in the ECDSA key material is not the public key of its private scalar`);
      }
      return embedded;
    case 'ed25519': {
      const seed = Buffer.from(privateKey.export({ format: 'jwk' }).d!, 'base64url');
      if (!embedded.equals(createPublicKey(ed25519FromSeed(seed)))) {
        throw new BadRequestError(`${what}: the Ed25519 public key in the key material does not belong to its seed`);
      }
      return embedded;
    }
    case 'x25519':
      // OpenSSL computes an X25519 public key from the private key; key-material.ts refuses a
      // PKCS#8 key whose own public key (RFC 8410's OneAsymmetricKey) disagrees with it.
      return embedded;
    case 'rsa':
      await checkRsaPrivateKey(privateKey, what);
      return embedded;
    case 'ml-dsa':
    case 'slh-dsa':
    case 'hybrid':
      // Built from the seed or the raw private key alone, and their public keys compared, when
      // the version was read (pqVersionFromBackup in crypto/pq-signing.ts).
      return embedded;
    default:
      throw new BadRequestError(`key type ${info.name} has no public or private key`);
  }
}

/**
 * What an imported RSA key, public or private, must be beyond consistent: a modulus of exactly
 * the type's size (rsa-2048 is 2048 bits, not 2047), and an odd public exponent of at least 65537.
 */
export function checkImportedRsaStrength(info: KeyTypeInfo, key: KeyObject): void {
  if (info.family !== 'rsa') return;
  const { modulusLength, publicExponent } = key.asymmetricKeyDetails ?? {};
  if (modulusLength !== info.rsaBits) {
    throw new BadRequestError(`invalid key size: ${info.name} needs a modulus of exactly ${info.rsaBits} bits, got ${modulusLength ?? 0} bits`);
  }
  const e = publicExponent ?? 0n;
  if (e < MIN_RSA_PUBLIC_EXPONENT) throw new BadRequestError(`invalid RSA public exponent ${e}: it must be at least ${MIN_RSA_PUBLIC_EXPONENT}`);
  if (e % 2n === 0n) throw new BadRequestError(`invalid RSA public exponent ${e}: it must be odd`);
}

/** d·G, computed by ECDH from the scalar alone (ECDH also refuses d = 0 and d ≥ the group order). */
function ecPublicKeyOfScalar(info: KeyTypeInfo, privateKey: KeyObject, what: string): KeyObject {
  const ecdh = createECDH(ECDH_CURVES[info.curve!]!);
  try {
    ecdh.setPrivateKey(Buffer.from(privateKey.export({ format: 'jwk' }).d!, 'base64url'));
  } catch {
    throw new BadRequestError(`${what}: the ECDSA private scalar is not valid for ${info.curve}`);
  }
  const point = ecdh.getPublicKey();
  const width = (point.length - 1) / 2;
  return createPublicKey({
    key: { kty: 'EC', crv: info.curve!, x: point.subarray(1, 1 + width).toString('base64url'), y: point.subarray(1 + width).toString('base64url') },
    format: 'jwk',
  });
}

/**
 * The checks of OpenSSL's RSA_check_key, on a two-prime key: n = p·q with p ≠ q both prime;
 * d·e ≡ 1 (mod λ(n)), λ(n) = lcm(p−1, q−1), which also holds for a d computed modulo φ(n) (λ divides
 * φ), so keys of either convention pass; and the CRT values PKCS#1 stores, exactly: dp = d mod (p−1),
 * dq = d mod (q−1) (the same for both conventions) and qi = q⁻¹ mod p. OpenSSL signs and decrypts
 * with the CRT values and quietly falls back to d when they are wrong, so a key with either part
 * wrong works here and fails wherever it is exported to.
 */
async function checkRsaPrivateKey(privateKey: KeyObject, what: string): Promise<void> {
  const jwk = privateKey.export({ format: 'jwk' });
  const values = [jwk.n, jwk.e, jwk.d, jwk.p, jwk.q, jwk.dp, jwk.dq, jwk.qi];
  if (values.some((value) => value === undefined)) throw new BadRequestError(`${what}: only two-prime RSA keys with their CRT values are supported`);
  const [n, e, d, p, q, dp, dq, qi] = values.map((value) => jwkInteger(value!)) as [bigint, bigint, bigint, bigint, bigint, bigint, bigint, bigint];
  const invalid = (problem: string) => new BadRequestError(`${what}: inconsistent RSA key: ${problem}`);
  if (p <= 1n || q <= 1n || p * q !== n) throw invalid('the modulus n is not the product of the primes p and q');
  if (p === q) throw invalid('the primes p and q are equal');
  const lambda = ((p - 1n) * (q - 1n)) / gcd(p - 1n, q - 1n);
  if (d <= 0n || (d * e) % lambda !== 1n) throw invalid('the private exponent d is not the inverse of the public exponent e modulo lcm(p-1, q-1)');
  if (dp !== d % (p - 1n)) throw invalid('the CRT exponent dp is not d mod (p-1)');
  if (dq !== d % (q - 1n)) throw invalid('the CRT exponent dq is not d mod (q-1)');
  if (qi <= 0n || qi >= p || (qi * q) % p !== 1n) throw invalid('the CRT coefficient qi is not the inverse of q modulo p');
  const [pPrime, qPrime] = await Promise.all([isPrime(p), isPrime(q)]);
  if (!pPrime || !qPrime) throw invalid('p or q is not prime');
}

/** Miller–Rabin in libuv's thread pool: for the primes of a 4096-bit key it takes long enough to stall the event loop. */
function isPrime(candidate: bigint): Promise<boolean> {
  return new Promise((resolve, reject) => checkPrime(candidate, (err, prime) => (err ? reject(err) : resolve(prime))));
}

function gcd(a: bigint, b: bigint): bigint {
  while (b !== 0n) [a, b] = [b, a % b];
  return a;
}

function jwkInteger(base64url: string): bigint {
  const hex = Buffer.from(base64url, 'base64url').toString('hex');
  return hex === '' ? 0n : BigInt(`0x${hex}`);
}
