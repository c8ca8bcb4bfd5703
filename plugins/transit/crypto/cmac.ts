/**
 * AES-CMAC of transit's aes128-cmac and aes256-cmac keys (RFC 4493; NIST SP 800-38B), as Vault
 * Enterprise answers it (https://developer.hashicorp.com/vault/api-docs/secret/transit#generate-cmac):
 * `vault:v<N>:<base64 MAC>`, the 16-byte MAC cut to its first `mac_length` bytes when one is asked
 * for (SP 800-38B §6.2 step 7: the MSB of the full MAC). The MAC is computed over OpenSSL's AES
 * (crypto/aes-cmac.ts says why); docs/transit.md ("CMAC keys") says how it is checked.
 *
 * A verification recomputes the MAC at the length the verifier names (16 unless mac_length says
 * otherwise) and compares it in constant time with the one given: a shorter MAC than the
 * verifier expects is false, never checked at its own length, so nobody can shorten a MAC to make
 * it easier to forge.
 */
import { BadRequestError, nextTurn, parseGoInt } from '../../../sdk/index.js';
import type { KeyPolicy } from '../keys/key-policy.js';
import type { KeyVersion } from '../keys/key-version.js';
import { AesCmac } from './aes-cmac.js';
import { decodeBase64, decodeBase64InTurns } from './base64.js';

/** AES's block size: the full length of a CMAC and the largest mac_length. */
export const CMAC_BLOCK_BYTES = 16;

/** The prefix of a CMAC: Vault's, as for HMACs. */
const PREFIX = 'vault:v';

/**
 * A MAC length as the client gave it (mac_length, an item's mac_length or url_mac_length): 0 or
 * absent is the full block; 1 to 16 cut the MAC; anything else is refused naming `field`.
 */
export function macLength(raw: number | string | undefined, field: string): number {
  if (raw === undefined) return CMAC_BLOCK_BYTES;
  const n = typeof raw === 'number' ? raw : parseGoInt(raw.trim());
  if (n === undefined) throw new BadRequestError(`${field} must be an integer, got ${JSON.stringify(raw)}`);
  if (n < 0 || n > CMAC_BLOCK_BYTES) throw new BadRequestError(`${field} ${n} is invalid: it must be between 1 and the cipher's block size (${CMAC_BLOCK_BYTES}), or 0 for the full block`);
  return n === 0 ? CMAC_BLOCK_BYTES : n;
}

/** The AES-CMAC of `data` under `key` (16 or 32 bytes), cut to `length` bytes. */
export function computeCmac(key: Uint8Array, data: Uint8Array, length = CMAC_BLOCK_BYTES): Buffer {
  return new AesCmac(key).update(data).digest().subarray(0, length);
}

/**
 * Bytes CMACed between turns of the event loop, so an input of megabytes holds no other client up
 * (bench/README.md, "What a batch item costs").
 */
const TURN_BYTES = 48 * 1024;

/** Base64 characters of input above which cmacOfText works between turns of the event loop. */
const TURN_CHARS = (TURN_BYTES / 3) * 4;

/**
 * The CMAC of base64 `text` (decoded strictly, errors naming `input`): computed at once for a
 * short input, or TURN_BYTES at a time with a turn of the event loop after each for a long one.
 */
export function cmacOfText(key: Uint8Array, text: string, length: number): Buffer | Promise<Buffer> {
  if (text.length <= TURN_CHARS) return computeCmac(key, decodeBase64(text, 'input'), length);
  return cmacInTurns(key, text, length);
}

async function cmacInTurns(key: Uint8Array, text: string, length: number): Promise<Buffer> {
  const data = await decodeBase64InTurns(text, 'input');
  const mac = new AesCmac(key);
  for (let at = 0; at < data.length; at += TURN_BYTES) {
    await nextTurn();
    mac.update(data.subarray(at, at + TURN_BYTES));
  }
  return mac.digest().subarray(0, length);
}

/** The key of a CMAC key's version; 400 for a key of another type. */
export function cmacKeyOf(policy: KeyPolicy, version: KeyVersion): Buffer {
  if (policy.info.family !== 'cmac' || !version.key) throw notCmacKey(policy);
  return version.key;
}

/** 400 `key X is not a supported CMAC key type: T`, Vault's text. */
export function notCmacKey(policy: KeyPolicy): BadRequestError {
  return new BadRequestError(`key ${policy.name} is not a supported CMAC key type: ${policy.info.name}`);
}

export function formatCmac(version: number, mac: Uint8Array): string {
  return `${PREFIX}${version}:${Buffer.from(mac.buffer, mac.byteOffset, mac.byteLength).toString('base64')}`;
}

/** Splits `vault:v<N>:<base64>`; an empty or undecodable MAC is the caller's mistake (400). */
export function parseCmac(value: string): { version: number; mac: Buffer } {
  if (!value.startsWith(PREFIX)) throw new BadRequestError('invalid CMAC to verify: no prefix');
  const rest = value.slice(PREFIX.length);
  const colon = rest.indexOf(':');
  if (colon < 0) throw new BadRequestError('invalid CMAC: wrong number of fields');
  const version = parseGoInt(rest.slice(0, colon));
  if (version === undefined) throw new BadRequestError('invalid CMAC: version number could not be decoded');
  const mac = decodeBase64(rest.slice(colon + 1), 'cmac');
  if (mac.length === 0) throw new BadRequestError('invalid CMAC: the MAC is empty');
  return { version, mac };
}
