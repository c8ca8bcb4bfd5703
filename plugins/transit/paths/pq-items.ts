/**
 * Sign and verify items of post-quantum keys (ml-dsa, slh-dsa, hybrid; crypto/pq-signing.ts).
 * Their signatures are made and checked in libuv's thread pool, so an item is a promise: the
 * items of a slice run side by side and their outcomes come back in input order.
 */
import { BadRequestError } from '../../../sdk/index.js';
import type { KeyPolicy } from '../keys/key-policy.js';
import type { KeyVersion } from '../keys/key-version.js';
import { pqSign, pqVerify, type PqFamily } from '../crypto/pq-signing.js';
import { formatSignature, type SignOptions } from '../crypto/signing.js';
import type { ItemOutcome } from './hmac.js';

export function isPqFamily(family: string): family is PqFamily {
  return family === 'ml-dsa' || family === 'slh-dsa' || family === 'hybrid';
}

/**
 * ML-DSA and SLH-DSA sign the message itself (their pure mode), and a hybrid key hashes it as its composite says: hash_algorithm does not apply.
 * Prehashed input would ask for HashML-DSA or HashSLH-DSA, which are not offered: refused rather
 * than signed as if it were the message.
 */
export function checkPqOptions(family: PqFamily, options: SignOptions): void {
  if (options.prehashed) {
    throw new BadRequestError(`prehashed input is not supported for ${family} keys: they sign the input itself (pure ${family === 'slh-dsa' ? 'SLH-DSA' : 'ML-DSA'})`);
  }
}

/** `work` over the items, each a promise; a BadRequestError is that item's error, anything else fails the request. */
export async function runItemsAsync<I, T>(items: readonly I[], work: (item: I) => Promise<T>): Promise<ItemOutcome<T>[]> {
  return Promise.all(
    items.map(async (item): Promise<ItemOutcome<T>> => {
      try {
        return { ok: await work(item) };
      } catch (err) {
        if (err instanceof BadRequestError) return { error: err.message };
        throw err;
      }
    }),
  );
}

export async function signPq(policy: KeyPolicy, family: PqFamily, version: KeyVersion, data: Buffer, options: SignOptions): Promise<{ signature: string; version: number }> {
  const signature = await pqSign(family, policy.pq!, keyPairOf(version), data);
  return { signature: formatSignature(version.version, signature, options.marshaling), version: version.version };
}

export function verifyPq(policy: KeyPolicy, family: PqFamily, version: KeyVersion, data: Buffer, signature: Buffer): Promise<boolean> {
  if (!version.publicKey) throw new BadRequestError(`key version ${version.version} has no public key`);
  return pqVerify(family, policy.pq!, keyPairOf(version), data, signature);
}

function keyPairOf(v: KeyVersion) {
  return {
    publicKey: v.publicKey!,
    ...(v.privateKey ? { privateKey: v.privateKey } : {}),
    ...(v.ecPrivateKey ? { ecPrivateKey: v.ecPrivateKey } : {}),
    ...(v.ecPublicKey ? { ecPublicKey: v.ecPublicKey } : {}),
  };
}
