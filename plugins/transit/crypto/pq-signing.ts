/**
 * Post-quantum signing keys (docs/transit.md, "Post-quantum signing keys"): ML-DSA (FIPS 204),
 * SLH-DSA (FIPS 205) and hybrid ML-DSA + ECDSA/Ed25519 keys, all through node:crypto (OpenSSL 3.5).
 *
 * Vault names them as one key type each with a `parameter_set`
 * (https://developer.hashicorp.com/vault/api-docs/secret/transit#create-key): `ml-dsa` with 44,
 * 65 or 87; `slh-dsa` with `slh-dsa-sha2-128s` … `slh-dsa-shake-256f`; `hybrid` with an ML-DSA
 * parameter set, `hybrid_key_type_pqc=ml-dsa` and `hybrid_key_type_ec`. Vault's document does not
 * say how a hybrid signature is laid out, so hybrid keys follow the IETF composite draft
 * (https://datatracker.ietf.org/doc/draft-ietf-lamps-pq-composite-sigs/): M' = Prefix ‖ Label ‖
 * len(ctx) ‖ ctx ‖ PH(M) with an empty ctx, ML-DSA over M' with the Label as its context, the
 * traditional algorithm over M', and the signature mldsaSig ‖ tradSig. Only the combinations the
 * draft defines exist; the others are refused rather than given made-up labels.
 *
 * Every private-key operation runs in libuv's thread pool (node's callback form of sign), so
 * SLH-DSA's slow signatures never hold up the event loop; verification does too.
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPair, randomBytes, sign, verify, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';
import { BadRequestError } from '../../../sdk/index.js';

const generateKeyPairAsync = promisify(generateKeyPair);

export type PqFamily = 'ml-dsa' | 'slh-dsa' | 'hybrid';
export type HybridEcType = 'ecdsa-p256' | 'ecdsa-p384' | 'ecdsa-p521' | 'ed25519';

export const ML_DSA_PARAMETER_SETS = ['44', '65', '87'] as const;
export const SLH_DSA_PARAMETER_SETS = [
  'slh-dsa-sha2-128s',
  'slh-dsa-sha2-128f',
  'slh-dsa-sha2-192s',
  'slh-dsa-sha2-192f',
  'slh-dsa-sha2-256s',
  'slh-dsa-sha2-256f',
  'slh-dsa-shake-128s',
  'slh-dsa-shake-128f',
  'slh-dsa-shake-192s',
  'slh-dsa-shake-192f',
  'slh-dsa-shake-256s',
  'slh-dsa-shake-256f',
] as const;
export const HYBRID_EC_TYPES: readonly HybridEcType[] = ['ecdsa-p256', 'ecdsa-p384', 'ecdsa-p521', 'ed25519'];

/** What a PQ key's settings add to its type: the parameter set and, for hybrid keys, the EC half. */
export interface PqParameters {
  readonly parameterSet: string;
  readonly hybridEc?: HybridEcType;
}

/** Public key and signature bytes of each ML-DSA set (https://csrc.nist.gov/pubs/fips/204/final). */
const ML_DSA_SIZES: Readonly<Record<string, { readonly publicKey: number; readonly signature: number }>> = {
  '44': { publicKey: 1312, signature: 2420 },
  '65': { publicKey: 1952, signature: 3309 },
  '87': { publicKey: 2592, signature: 4627 },
};

/** The node (OpenSSL) algorithm name of an ML-DSA or SLH-DSA parameter set. */
export function nodeAlgorithm(family: 'ml-dsa' | 'slh-dsa', parameterSet: string): string {
  return family === 'ml-dsa' ? `ml-dsa-${parameterSet}` : parameterSet;
}

// ---------------------------------------------------------------------------------------------
// Creation settings

/**
 * Checks `parameter_set`, `hybrid_key_type_pqc` and `hybrid_key_type_ec` for a key of `family`
 * (undefined: not a PQ type, where each of them is refused) and returns what the key keeps.
 */
export function pqParameters(
  family: string,
  typeName: string,
  fields: { parameterSet?: string | undefined; hybridPqc?: string | undefined; hybridEc?: string | undefined },
): PqParameters | undefined {
  const { parameterSet, hybridPqc, hybridEc } = fields;
  if (family !== 'ml-dsa' && family !== 'slh-dsa' && family !== 'hybrid') {
    // ml-kem keys take one too (crypto/kem.ts checks theirs).
    if (parameterSet && family !== 'kem') throw new BadRequestError(`parameter_set is not valid for key type ${typeName}: only ml-dsa, slh-dsa, hybrid and ml-kem keys take one`);
    if (hybridPqc || hybridEc) throw new BadRequestError(`hybrid_key_type_pqc and hybrid_key_type_ec are only valid for hybrid keys, not ${typeName}`);
    return undefined;
  }
  if (family !== 'hybrid' && (hybridPqc || hybridEc)) {
    throw new BadRequestError(`hybrid_key_type_pqc and hybrid_key_type_ec are only valid for hybrid keys, not ${typeName}`);
  }
  const sets: readonly string[] = family === 'slh-dsa' ? SLH_DSA_PARAMETER_SETS : ML_DSA_PARAMETER_SETS;
  if (!parameterSet || !sets.includes(parameterSet)) {
    throw new BadRequestError(`invalid parameter_set "${parameterSet ?? ''}" for key type ${typeName}: expected one of ${sets.join(', ')}`);
  }
  if (family !== 'hybrid') return { parameterSet };
  if (hybridPqc !== 'ml-dsa') throw new BadRequestError(`invalid hybrid_key_type_pqc "${hybridPqc ?? ''}": the only post-quantum type of hybrid keys is ml-dsa`);
  if (!HYBRID_EC_TYPES.includes(hybridEc as HybridEcType)) {
    throw new BadRequestError(`invalid hybrid_key_type_ec "${hybridEc ?? ''}": expected one of ${HYBRID_EC_TYPES.join(', ')}`);
  }
  const ec = hybridEc as HybridEcType;
  if (!COMPOSITES[`${parameterSet}/${ec}`]) {
    const defined = Object.keys(COMPOSITES).map((k) => k.replace('/', ' with '));
    throw new BadRequestError(
      `hybrid key ML-DSA-${parameterSet} with ${ec} is not a composite the IETF draft defines (docs/transit.md); the defined ones are ML-DSA ${defined.join(', ')}`,
    );
  }
  return { parameterSet, hybridEc: ec };
}

// ---------------------------------------------------------------------------------------------
// Hybrid (composite) parameters: the draft's labels, pre-hashes and OIDs (docs/transit.md, "Post-quantum signing keys")

interface Composite {
  /** The draft's signature label, also the ML-DSA context. */
  readonly label: string;
  /** The pre-hash PH of the message. */
  readonly prehash: 'sha256' | 'sha512';
  /** The ECDSA component's hash (ecdsa-with-SHAx); null for Ed25519. */
  readonly ecdsaHash: 'sha256' | 'sha384' | 'sha512' | null;
  /** The composite's OBJECT IDENTIFIER, for the SubjectPublicKeyInfo of a public key. */
  readonly oid: string;
}

const COMPOSITES: Readonly<Record<string, Composite>> = {
  '44/ed25519': { label: 'COMPSIG-MLDSA44-Ed25519-SHA512', prehash: 'sha512', ecdsaHash: null, oid: '1.3.6.1.5.5.7.6.39' },
  '44/ecdsa-p256': { label: 'COMPSIG-MLDSA44-ECDSA-P256-SHA256', prehash: 'sha256', ecdsaHash: 'sha256', oid: '1.3.6.1.5.5.7.6.40' },
  '65/ecdsa-p256': { label: 'COMPSIG-MLDSA65-ECDSA-P256-SHA512', prehash: 'sha512', ecdsaHash: 'sha256', oid: '1.3.6.1.5.5.7.6.45' },
  '65/ecdsa-p384': { label: 'COMPSIG-MLDSA65-ECDSA-P384-SHA512', prehash: 'sha512', ecdsaHash: 'sha384', oid: '1.3.6.1.5.5.7.6.46' },
  '65/ed25519': { label: 'COMPSIG-MLDSA65-Ed25519-SHA512', prehash: 'sha512', ecdsaHash: null, oid: '1.3.6.1.5.5.7.6.48' },
  '87/ecdsa-p384': { label: 'COMPSIG-MLDSA87-ECDSA-P384-SHA512', prehash: 'sha512', ecdsaHash: 'sha384', oid: '1.3.6.1.5.5.7.6.49' },
  '87/ecdsa-p521': { label: 'COMPSIG-MLDSA87-ECDSA-P521-SHA512', prehash: 'sha512', ecdsaHash: 'sha512', oid: '1.3.6.1.5.5.7.6.54' },
};

/** The draft's fixed prefix of every message representative. */
const COMPOSITE_PREFIX = Buffer.from('CompositeAlgorithmSignatures2025', 'ascii');

const EC_CURVES: Readonly<Record<Exclude<HybridEcType, 'ed25519'>, { readonly curve: string; readonly size: number; readonly oid: string }>> = {
  'ecdsa-p256': { curve: 'P-256', size: 32, oid: '2a8648ce3d030107' },
  'ecdsa-p384': { curve: 'P-384', size: 48, oid: '2b81040022' },
  'ecdsa-p521': { curve: 'P-521', size: 66, oid: '2b81040023' },
};

function compositeOf(p: PqParameters): Composite {
  return COMPOSITES[`${p.parameterSet}/${p.hybridEc}`]!;
}

/** The message representative M' with an empty application context. */
export function compositeMessage(p: PqParameters, message: Buffer): Buffer {
  const c = compositeOf(p);
  return Buffer.concat([COMPOSITE_PREFIX, Buffer.from(c.label, 'ascii'), Buffer.from([0]), createHash(c.prehash).update(message).digest()]);
}

// ---------------------------------------------------------------------------------------------
// Key material

/** The key pair of one version. Hybrid keys hold both halves. */
export interface PqKeyPair {
  readonly privateKey?: KeyObject;
  readonly publicKey: KeyObject;
  readonly ecPrivateKey?: KeyObject;
  readonly ecPublicKey?: KeyObject;
}

/** A fresh key pair; for hybrid keys both halves are new, as the draft requires (no key reuse). */
export async function generatePqKeyPair(family: PqFamily, p: PqParameters): Promise<PqKeyPair> {
  if (family !== 'hybrid') {
    const { privateKey, publicKey } = await generateKeyPairAsync(nodeAlgorithm(family, p.parameterSet) as 'ml-dsa-44');
    return { privateKey, publicKey };
  }
  const pqc = mlDsaFromSeed(p.parameterSet, randomBytes(32));
  const ec = p.hybridEc === 'ed25519' ? await generateKeyPairAsync('ed25519') : await generateKeyPairAsync('ec', { namedCurve: EC_CURVES[p.hybridEc!].curve });
  return { privateKey: pqc, publicKey: createPublicKey(pqc), ecPrivateKey: ec.privateKey, ecPublicKey: ec.publicKey };
}

/** An ML-DSA private key from its 32-byte seed ξ, as a PKCS#8 seed-form key (https://www.rfc-editor.org/rfc/rfc9881). */
export function mlDsaFromSeed(parameterSet: string, seed: Uint8Array): KeyObject {
  if (seed.length !== 32) throw new BadRequestError(`an ML-DSA seed has 32 bytes, got ${seed.length}`);
  const oidLast = { '44': 0x11, '65': 0x12, '87': 0x13 }[parameterSet]!;
  const der = Buffer.concat([
    Buffer.from([0x30, 0x34, 0x02, 0x01, 0x00, 0x30, 0x0b, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03, oidLast, 0x04, 0x22, 0x80, 0x20]),
    seed,
  ]);
  return createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
}

/** The raw private key: the 32-byte ML-DSA seed, or SLH-DSA's 4n bytes (SK.seed ‖ SK.prf ‖ PK.seed ‖ PK.root). */
export function rawPrivateKey(key: KeyObject): Buffer {
  const priv = key.export({ format: 'jwk' }).priv as string | undefined;
  if (!priv) throw new BadRequestError('the private key holds no seed to export');
  return Buffer.from(priv, 'base64url');
}

/** The raw public key bytes, as FIPS 204 and FIPS 205 encode them. */
export function rawPublicKey(key: KeyObject): Buffer {
  return Buffer.from(key.export({ format: 'jwk' }).pub as string, 'base64url');
}

/** The composite public key mldsaPK ‖ tradPK (uncompressed point, or Ed25519's 32 bytes). */
export function compositePublicKey(pair: PqKeyPair): Buffer {
  return Buffer.concat([rawPublicKey(pair.publicKey), ecRawPublic(pair.ecPublicKey!)]);
}

/** The composite private key mldsaSeed ‖ tradSK (ECPrivateKey without its public key, or the Ed25519 seed). */
export function compositePrivateKey(p: PqParameters, pair: PqKeyPair): Buffer {
  const seed = rawPrivateKey(pair.privateKey!);
  const d = Buffer.from(pair.ecPrivateKey!.export({ format: 'jwk' }).d!, 'base64url');
  if (p.hybridEc === 'ed25519') return Buffer.concat([seed, d]);
  const curve = EC_CURVES[p.hybridEc!];
  const oid = Buffer.from(curve.oid, 'hex');
  const parameters = tlv(0xa0, tlv(0x06, oid));
  return Buffer.concat([seed, tlv(0x30, Buffer.concat([Buffer.from([0x02, 0x01, 0x01]), tlv(0x04, d), parameters]))]);
}

/** The inverse of compositePrivateKey; the public halves are derived from the private ones. */
export function compositeFromPrivate(p: PqParameters, bytes: Buffer, what: string): PqKeyPair {
  if (bytes.length < 33) throw new BadRequestError(`${what}: a hybrid private key is the 32-byte ML-DSA seed and the EC private key`);
  const privateKey = mlDsaFromSeed(p.parameterSet, bytes.subarray(0, 32));
  const trad = bytes.subarray(32);
  let ecPrivateKey: KeyObject;
  try {
    if (p.hybridEc === 'ed25519') {
      if (trad.length !== 32) throw new Error(`an Ed25519 private key has 32 bytes, got ${trad.length}`);
      ecPrivateKey = createPrivateKey({ key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), trad]), format: 'der', type: 'pkcs8' });
    } else {
      ecPrivateKey = createPrivateKey({ key: trad, format: 'der', type: 'sec1' });
      const curve = ecPrivateKey.asymmetricKeyDetails?.namedCurve;
      const wanted = { 'ecdsa-p256': 'prime256v1', 'ecdsa-p384': 'secp384r1', 'ecdsa-p521': 'secp521r1' }[p.hybridEc!];
      if (curve !== wanted) throw new Error(`the EC key is on ${curve ?? 'an unknown curve'}, not ${EC_CURVES[p.hybridEc!].curve}`);
    }
  } catch (err) {
    throw new BadRequestError(`${what}: invalid EC half of the hybrid key: ${(err as Error).message}`);
  }
  return { privateKey, publicKey: createPublicKey(privateKey), ecPrivateKey, ecPublicKey: createPublicKey(ecPrivateKey) };
}

/** A hybrid public-only pair from the composite public key bytes. */
export function compositeFromPublic(p: PqParameters, bytes: Buffer, what: string): PqKeyPair {
  const pkLength = ML_DSA_SIZES[p.parameterSet]!.publicKey;
  try {
    const publicKey = createPublicKey({ key: { kty: 'AKP', alg: `ML-DSA-${p.parameterSet}`, pub: bytes.subarray(0, pkLength).toString('base64url') }, format: 'jwk' });
    const trad = bytes.subarray(pkLength);
    const ecPublicKey =
      p.hybridEc === 'ed25519'
        ? createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: trad.toString('base64url') }, format: 'jwk' })
        : ecPublicFromPoint(EC_CURVES[p.hybridEc!], trad);
    return { publicKey, ecPublicKey };
  } catch (err) {
    throw new BadRequestError(`${what}: invalid hybrid public key: ${(err as Error).message}`);
  }
}

function ecPublicFromPoint(curve: { curve: string; size: number }, point: Buffer): KeyObject {
  if (point.length !== 1 + 2 * curve.size || point[0] !== 0x04) throw new Error(`the ${curve.curve} point is not an uncompressed point`);
  const x = point.subarray(1, 1 + curve.size).toString('base64url');
  const y = point.subarray(1 + curve.size).toString('base64url');
  return createPublicKey({ key: { kty: 'EC', crv: curve.curve, x, y }, format: 'jwk' });
}

function ecRawPublic(key: KeyObject): Buffer {
  const jwk = key.export({ format: 'jwk' });
  if (jwk.kty === 'OKP') return Buffer.from(jwk.x!, 'base64url');
  return Buffer.concat([Buffer.from([0x04]), Buffer.from(jwk.x!, 'base64url'), Buffer.from(jwk.y!, 'base64url')]);
}

/** The composite public key as a PEM SubjectPublicKeyInfo under the draft's OID for the pair. */
export function compositePublicPem(p: PqParameters, pair: PqKeyPair): string {
  const algorithm = tlv(0x30, tlv(0x06, oidBytes(compositeOf(p).oid)));
  const spki = tlv(0x30, Buffer.concat([algorithm, tlv(0x03, Buffer.concat([Buffer.from([0]), compositePublicKey(pair)]))]));
  const lines = spki.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN PUBLIC KEY-----\n${lines.join('\n')}\n-----END PUBLIC KEY-----\n`;
}

function oidBytes(oid: string): Buffer {
  const [a, b, ...rest] = oid.split('.').map(Number) as [number, number, ...number[]];
  const out = [a * 40 + b];
  for (const n of rest) {
    const groups = [n & 0x7f];
    for (let v = n >>> 7; v > 0; v >>>= 7) groups.unshift((v & 0x7f) | 0x80);
    out.push(...groups);
  }
  return Buffer.from(out);
}

function tlv(tag: number, content: Buffer): Buffer {
  const n = content.length;
  const length = n < 0x80 ? [n] : n < 0x100 ? [0x81, n] : [0x82, n >> 8, n & 0xff];
  return Buffer.concat([Buffer.from([tag, ...length]), content]);
}

// ---------------------------------------------------------------------------------------------
// Signing and verifying

const signAsync = (algorithm: string | null, data: Buffer, key: KeyObject | { key: KeyObject; context: Buffer }): Promise<Buffer> =>
  new Promise((resolve, reject) => sign(algorithm, data, key, (err, signature) => (err ? reject(err) : resolve(signature))));

const verifyAsync = (algorithm: string | null, data: Buffer, key: KeyObject | { key: KeyObject; context: Buffer }, signature: Buffer): Promise<boolean> =>
  new Promise((resolve, reject) => verify(algorithm, data, key, signature, (err, valid) => (err ? reject(err) : resolve(valid))));

/**
 * How many SLH-DSA signatures may hold threads of libuv's pool at once. The pool has four threads
 * and storage (LevelDB) and the rest of node's crypto run there too; a batch of signatures that
 * take seconds each would otherwise keep every other client's reads waiting.
 */
export const SLH_DSA_POOL_SHARE = 2;
let slhSigning = 0;
const slhWaiting: (() => void)[] = [];

/** SLH-DSA signatures in the thread pool now (never above SLH_DSA_POOL_SHARE). */
export function slhDsaSigningNow(): number {
  return slhSigning;
}

/** Runs `work` once fewer than SLH_DSA_POOL_SHARE SLH-DSA signatures are running; a freed place passes to the next in line. */
async function withinSlhShare<T>(work: () => Promise<T>): Promise<T> {
  if (slhSigning < SLH_DSA_POOL_SHARE) slhSigning++;
  else await new Promise<void>((resolve) => slhWaiting.push(resolve));
  try {
    return await work();
  } finally {
    const next = slhWaiting.shift();
    if (next) next();
    else slhSigning--;
  }
}

/** A signature of `message` (pure ML-DSA or SLH-DSA with an empty context, or the composite). */
export async function pqSign(family: PqFamily, p: PqParameters, pair: PqKeyPair, message: Buffer): Promise<Buffer> {
  if (family === 'slh-dsa') return withinSlhShare(() => signAsync(null, message, pair.privateKey!));
  if (family === 'ml-dsa') return signAsync(null, message, pair.privateKey!);
  const c = compositeOf(p);
  const m = compositeMessage(p, message);
  const [pqc, trad] = await Promise.all([
    signAsync(null, m, { key: pair.privateKey!, context: Buffer.from(c.label, 'ascii') }),
    signAsync(c.ecdsaHash, m, pair.ecPrivateKey!),
  ]);
  return Buffer.concat([pqc, trad]);
}

/** Whether `signature` is one of `message`; false for one of the wrong size or shape. */
export async function pqVerify(family: PqFamily, p: PqParameters, pair: PqKeyPair, message: Buffer, signature: Buffer): Promise<boolean> {
  if (family !== 'hybrid') return safeVerify(() => verifyAsync(null, message, pair.publicKey, signature));
  const c = compositeOf(p);
  const split = ML_DSA_SIZES[p.parameterSet]!.signature;
  if (signature.length <= split) return false;
  const m = compositeMessage(p, message);
  const [pqc, trad] = await Promise.all([
    safeVerify(() => verifyAsync(null, m, { key: pair.publicKey, context: Buffer.from(c.label, 'ascii') }, signature.subarray(0, split))),
    safeVerify(() => verifyAsync(c.ecdsaHash, m, pair.ecPublicKey!, signature.subarray(split))),
  ]);
  return pqc && trad;
}

/** OpenSSL reports a signature it cannot even parse (a malformed DER ECDSA value) as an error: that is "not valid". */
async function safeVerify(check: () => Promise<boolean>): Promise<boolean> {
  try {
    return await check();
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------------------------
// Backup entries

/** The raw public key of a version: FIPS 204/205 encodings, or the composite mldsaPK ‖ tradPK. */
export function pqPublicKeyBytes(family: PqFamily, pair: PqKeyPair): Buffer {
  return family === 'hybrid' ? compositePublicKey(pair) : rawPublicKey(pair.publicKey);
}

/**
 * A version's key pair from a backup entry: the private key as export gives it (optional) and the
 * raw public key. The public key is derived from the private one — the ML-DSA seed, the EC scalar,
 * or the PK.seed ‖ PK.root that an SLH-DSA private key carries — and an
 * entry whose public key is another is refused.
 */
export function pqVersionFromBackup(family: PqFamily, p: PqParameters, privateBytes: Buffer | undefined, publicBytes: Buffer, what: string): PqKeyPair {
  if (!privateBytes) {
    if (publicBytes.length === 0) throw new BadRequestError(`${what}: has neither a private nor a public key`);
    if (family === 'hybrid') return compositeFromPublic(p, publicBytes, what);
    return { publicKey: akpKey(family, p, { pub: publicBytes }, what) };
  }
  let pair: PqKeyPair;
  if (family === 'hybrid') {
    pair = compositeFromPrivate(p, privateBytes, what);
  } else if (family === 'ml-dsa') {
    if (privateBytes.length !== 32) throw new BadRequestError(`${what}: an ML-DSA private key is its 32-byte seed, got ${privateBytes.length} bytes`);
    const privateKey = mlDsaFromSeed(p.parameterSet, privateBytes);
    pair = { privateKey, publicKey: createPublicKey(privateKey) };
  } else {
    const privateKey = akpKey(family, p, { priv: privateBytes, pub: privateBytes.subarray(privateBytes.length / 2) }, what);
    pair = { privateKey, publicKey: createPublicKey(privateKey) };
  }
  if (publicBytes.length > 0 && !pqPublicKeyBytes(family, pair).equals(publicBytes)) {
    throw new BadRequestError(`${what}: the public key is not the public key of the private key`);
  }
  return pair;
}

/** An ML-DSA or SLH-DSA key from its raw parts (node's JWK form, kty AKP). */
function akpKey(family: 'ml-dsa' | 'slh-dsa', p: PqParameters, parts: { priv?: Buffer; pub: Buffer }, what: string): KeyObject {
  const name = nodeAlgorithm(family, p.parameterSet);
  // node's JWK names: ML-DSA-65, SLH-DSA-SHA2-128s (the s or f suffix stays lower case).
  const alg = family === 'ml-dsa' ? name.toUpperCase() : `${name.slice(0, -1).toUpperCase()}${name.slice(-1)}`;
  const jwk = { kty: 'AKP', alg, pub: parts.pub.toString('base64url'), ...(parts.priv ? { priv: parts.priv.toString('base64url') } : {}) };
  try {
    return parts.priv ? createPrivateKey({ key: jwk, format: 'jwk' }) : createPublicKey({ key: jwk, format: 'jwk' });
  } catch (err) {
    throw new BadRequestError(`${what}: not a valid ${name} key: ${(err as Error).message}`);
  }
}
