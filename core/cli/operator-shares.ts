/**
 * What `operator rekey` and `operator generate-root` share: public key files for `-pgp-keys` /
 * `-pgp-key`, and reading the key share to submit with its operation nonce, as the vault CLI does.
 */
import { readFile } from 'node:fs/promises';
import { UsageError } from './client.js';
import type { Io } from './output.js';

/**
 * A public key file as the server takes it: a binary key (`gpg --export ID > key.gpg`) becomes
 * base64; base64 text and ASCII armor are sent as they are.
 */
export async function readPublicKeyFile(file: string): Promise<string> {
  const name = file.trim();
  if (/^keybase:/i.test(name)) {
    throw new UsageError(`Keybase keys are not supported ("${name}"): export the public key to a file (gpg --export <id> > key.gpg) and pass its path`);
  }
  let bytes: Buffer;
  try {
    bytes = await readFile(name);
  } catch (err) {
    throw new UsageError(`cannot read the PGP key file ${name}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  const text = bytes.toString('utf8').trim();
  if (text.startsWith('-----BEGIN PGP')) return text;
  const compact = text.replace(/\s+/g, '');
  if (compact.length > 0 && compact.length % 4 === 0 && /^[A-Za-z0-9+/]+={0,2}$/.test(compact)) return compact;
  return bytes.toString('base64');
}

/** A comma-separated list of key files (`-pgp-keys=a.gpg,b.gpg`). */
export function readPublicKeyFiles(list: string): Promise<string[]> {
  return Promise.all(list.split(',').filter((f) => f.trim() !== '').map(readPublicKeyFile));
}

/**
 * The share to submit and the nonce to send with it: `-` reads the share from standard input, no
 * argument prompts for it (and then the nonce may come from the status, as the operator sees it
 * printed); otherwise `-nonce` is required.
 */
export async function shareToSubmit(
  io: Io,
  arg: string | undefined,
  flagNonce: string | undefined,
  statusNonce: string,
): Promise<{ key: string; nonce: string }> {
  let key: string | undefined;
  let nonce = flagNonce ?? '';
  if (arg === '-') {
    key = await io.stdin();
  } else if (arg === undefined) {
    nonce ||= statusNonce;
    if (nonce) io.err(`Operation nonce: ${nonce}\n`);
    key = await io.secret('Unseal Key (will be hidden): ');
    if (key === undefined) throw new UsageError('no key share given, and no terminal to ask for one (pass it as an argument, or "-" to read standard input)');
  } else {
    key = arg;
  }
  if (!nonce) throw new UsageError('Missing nonce value: specify it via the -nonce flag');
  return { key: key.trim(), nonce };
}
