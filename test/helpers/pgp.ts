/** OpenPGP key pairs for tests of PGP-encrypted shares and root tokens, generated fresh each run. */
import * as openpgp from 'openpgp';

export interface TestPgpKey {
  /** The public key as Vault takes it: base64 of the binary key. */
  readonly publicKeyBase64: string;
  readonly armoredPublicKey: string;
  readonly fingerprint: string;
  /** base64 of the binary private key: what a careless client might send instead of the public one. */
  readonly privateKeyBase64: string;
  /** Decrypts base64 of a binary OpenPGP message (as the server answers it) to its plaintext. */
  decrypt(messageBase64: string): Promise<string>;
}

/**
 * A key pair, Curve25519 by default. With `rsa`, an RSA key: openpgp reads it and encrypts to it
 * without asynchronous crypto, so while it does, the event loop turns only where the server gives
 * it back (openpgp checks Curve25519 signatures with WebCrypto, whose jobs run on the thread pool
 * while the loop turns).
 */
export async function generatePgpKey(name = 'operator', algorithm: 'curve25519' | 'rsa' = 'curve25519'): Promise<TestPgpKey> {
  const type = algorithm === 'rsa' ? ({ type: 'rsa', rsaBits: 2048 } as const) : ({ type: 'ecc', curve: 'curve25519Legacy' } as const);
  const { privateKey, publicKey } = await openpgp.generateKey({ ...type, userIDs: [{ name }], format: 'object' });
  return keyPair(privateKey, publicKey);
}

function keyPair(privateKey: openpgp.PrivateKey, publicKey: openpgp.PublicKey): TestPgpKey {
  return {
    publicKeyBase64: Buffer.from(publicKey.write()).toString('base64'),
    armoredPublicKey: publicKey.armor(),
    fingerprint: publicKey.getFingerprint(),
    privateKeyBase64: Buffer.from(privateKey.write()).toString('base64'),
    decrypt: async (messageBase64) => {
      const message = await openpgp.readMessage({ binaryMessage: Buffer.from(messageBase64, 'base64') });
      const { data } = await openpgp.decrypt({ message, decryptionKeys: privateKey, format: 'binary' });
      return Buffer.from(data).toString('utf8');
    },
  };
}

export function generatePgpKeys(count: number): Promise<TestPgpKey[]> {
  return Promise.all(Array.from({ length: count }, (_, i) => generatePgpKey(`operator-${i + 1}`)));
}

/**
 * A valid public key of more than `minBytes` bytes: user IDs of 5,000 characters (openpgp's
 * longest) until the key is that large. Encrypting to it works; only its size is unusual.
 */
export async function generateLargePgpKey(minBytes: number): Promise<TestPgpKey> {
  const perUserId = 5_000;
  const count = Math.ceil(minBytes / perUserId) + 1;
  const userIDs = Array.from({ length: count }, (_, i) => ({ name: `${'x'.repeat(perUserId - 8)}${String(i).padStart(8, '0')}` }));
  const { privateKey, publicKey } = await openpgp.generateKey({ type: 'ecc', curve: 'curve25519Legacy', userIDs, format: 'object' });
  return keyPair(privateKey, publicKey);
}

/** `publicKeyBase64` with `count` one-byte user ID packets after it (RFC 9580 packet tag 13). */
export function withExtraPackets(publicKeyBase64: string, count: number): string {
  const userId = Buffer.from([0xc0 | 13, 1, 0x61]);
  return Buffer.concat([Buffer.from(publicKeyBase64, 'base64'), ...Array.from({ length: count }, () => userId)]).toString('base64');
}
