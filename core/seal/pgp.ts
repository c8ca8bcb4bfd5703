/**
 * OpenPGP recipients for key shares and root tokens (`pgp_keys`, `root_token_pgp_key`, `pgp_key`).
 * Keys arrive as Vault takes them: base64 of the binary public key (what `gpg --export ID | base64`
 * prints); an ASCII-armored key is accepted too. Keybase names (`keybase:alice`) are refused: the
 * server would have to fetch keys from a third party over the internet.
 *
 * openpgp is loaded on first use: it is large, and most servers never encrypt a share.
 */
import type * as OpenPgp from 'openpgp';
import { BadRequestError } from '../errors.js';

export interface PgpRecipient {
  /** Lower-case hex of the primary key's fingerprint, as Vault lists `pgp_fingerprints`. */
  readonly fingerprint: string;
  readonly key: OpenPgp.Key;
}

let library: Promise<typeof OpenPgp> | undefined;

function openpgp(): Promise<typeof OpenPgp> {
  return (library ??= import('openpgp'));
}

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/**
 * Reads one public key, checked to be able to encrypt now.
 * @throws BadRequestError naming `field`: a Keybase name, text that is no public key, a private
 * key, or a key without a usable encryption subkey (expired, revoked, sign-only).
 */
export async function readRecipient(text: string, field: string): Promise<PgpRecipient> {
  const pgp = await openpgp();
  const trimmed = text.trim();
  if (/^keybase:/i.test(trimmed)) {
    throw new BadRequestError(
      `${field}: Keybase keys ("keybase:<user>") are not supported; pass the base64-encoded public key (gpg --export <id> | base64)`,
    );
  }
  let key: OpenPgp.Key;
  try {
    if (trimmed.startsWith('-----BEGIN PGP')) {
      key = await pgp.readKey({ armoredKey: trimmed });
    } else {
      const compact = trimmed.replace(/\s+/g, '');
      if (!BASE64.test(compact) || compact.length % 4 !== 0) throw new Error('not base64');
      key = await pgp.readKey({ binaryKey: Buffer.from(compact, 'base64') });
    }
  } catch {
    throw new BadRequestError(`${field}: not an OpenPGP public key (expected base64 of the binary key, as "gpg --export <id> | base64" prints)`);
  }
  if (key.isPrivate()) throw new BadRequestError(`${field}: is a private key; pass only the public key`);
  const fingerprint = key.getFingerprint();
  try {
    await key.getEncryptionKey();
  } catch {
    throw new BadRequestError(`${field}: key ${fingerprint} has no usable encryption key (expired, revoked or signing-only)`);
  }
  return { fingerprint, key };
}

/** Reads a list of keys, each named by its position (`pgp_keys[2]`). */
export function readRecipients(texts: readonly string[], field: string): Promise<PgpRecipient[]> {
  return Promise.all(texts.map((text, i) => readRecipient(text, `${field}[${i}]`)));
}

/** A binary OpenPGP message holding `plaintext`, readable only with the recipient's private key. */
export async function encryptTo(recipient: PgpRecipient, plaintext: Uint8Array): Promise<Buffer> {
  const pgp = await openpgp();
  const message = await pgp.createMessage({ binary: plaintext });
  return Buffer.from(await pgp.encrypt({ message, encryptionKeys: recipient.key, format: 'binary' }));
}

/**
 * Encrypts each share to its recipient, as Vault does: the share's hex text is the plaintext, so
 * `base64 -d | gpg -d` prints a key `sys/unseal` takes.
 */
export function encryptShares(shares: readonly Buffer[], recipients: readonly PgpRecipient[]): Promise<Buffer[]> {
  return Promise.all(shares.map((share, i) => encryptTo(recipients[i]!, Buffer.from(share.toString('hex'), 'utf8'))));
}
