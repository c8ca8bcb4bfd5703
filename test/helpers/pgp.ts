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

export async function generatePgpKey(name = 'operator'): Promise<TestPgpKey> {
  const { privateKey, publicKey } = await openpgp.generateKey({ type: 'ecc', curve: 'curve25519Legacy', userIDs: [{ name }], format: 'object' });
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
