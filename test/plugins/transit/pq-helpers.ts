/** Shared by the post-quantum key tests: raw public keys, and published key material brought in by restore. */
import { createPublicKey } from 'node:crypto';
import { expect } from 'chai';
import type { TransitHarness } from './harness.js';

/** The raw public key of a PEM ML-DSA or SLH-DSA public key. */
export function rawPublic(pem: string): Buffer {
  return Buffer.from(createPublicKey(pem).export({ format: 'jwk' }).pub as string, 'base64url');
}

/**
 * A key restored from a backup of a fresh key of the same type whose version 1 now holds `key`
 * and `publicKey` (base64): how published key material enters transit, since Vault's import
 * takes no post-quantum keys. Returns the restore's answer.
 */
export async function restoredWith(t: TransitHarness, name: string, create: Record<string, unknown>, key: string, publicKey: string) {
  const created = await t.write(`keys/${name}-src`, { ...create, exportable: true, allow_plaintext_backup: true });
  expect(created.status, created.error).to.equal(200);
  const blob = JSON.parse(Buffer.from((await t.read(`backup/${name}-src`)).data.backup, 'base64').toString('utf8'));
  for (const entry of [blob.policy.keys['1'], blob.archived_keys.keys[1]]) Object.assign(entry, { key, public_key: publicKey });
  return t.write(`restore/${name}`, { backup: Buffer.from(JSON.stringify(blob)).toString('base64') });
}
