/** What BYOK tests do as a client would: wrap key material for a mount, and see that a refused request stored nothing. */
import { expect } from 'chai';
import { createPublicKey } from 'node:crypto';
import { wrapKeyMaterial, type OaepHash } from '../../../plugins/transit/crypto/byok.js';
import type { Storage } from '../../../storage/storage.js';
import type { TransitHarness } from './harness.js';

/** Every stored entry of a mount, to show a refused request changed nothing. */
export async function snapshot(storage: Storage, prefix = ''): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const entry of await storage.list(prefix)) {
    if (entry.endsWith('/')) Object.assign(out, await snapshot(storage, prefix + entry));
    else out[prefix + entry] = Buffer.from((await storage.get(prefix + entry))!).toString('base64');
  }
  return out;
}

/** Wraps material for a harness's wrapping key, as a client (or Vault's CLI) does. */
export async function wrapFor(h: TransitHarness, material: Uint8Array, hash: OaepHash = 'sha256'): Promise<string> {
  const res = await h.read('wrapping_key');
  expect(res.status, res.error).to.equal(200);
  return wrapKeyMaterial(createPublicKey(res.data.public_key), material, hash).toString('base64');
}

/** The data of a response that must have `status`. */
export async function ok(res: Promise<{ status: number; error?: string; data: any }>, status = 200): Promise<any> {
  const r = await res;
  expect(r.status, r.error).to.equal(status);
  return r.data;
}
