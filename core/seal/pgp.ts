/**
 * OpenPGP recipients for key shares and root tokens (`pgp_keys`, `root_token_pgp_key`, `pgp_key`).
 * Keys arrive as Vault takes them: base64 of the binary public key (what `gpg --export ID | base64`
 * prints); an ASCII-armored key is accepted too. Keybase names (`keybase:alice`) are refused: the
 * server would have to fetch keys from a third party over the internet.
 *
 * Reading a key is CPU work that grows with the key, and `sys/init` takes keys from anyone, so it
 * is bounded and shared out: every key's size and packet count are checked before any key of the
 * request is parsed, keys are parsed (and shares encrypted) one at a time with a turn of the event
 * loop between them, and one request's keys at a time across the server, so that a request full
 * of keys — or many such requests together — never holds up other clients for longer than one key.
 *
 * openpgp is loaded on first use: it is large, and most servers never encrypt a share.
 */
import type * as OpenPgp from 'openpgp';
import { BadRequestError } from '../errors.js';
import { nextTurn } from '../event-loop.js';
import { SerialQueue } from './serial.js';

export interface PgpRecipient {
  /** Lower-case hex of the primary key's fingerprint, as Vault lists `pgp_fingerprints`. */
  readonly fingerprint: string;
  readonly key: OpenPgp.Key;
}

/** A key as a request names it: its text and where it came from (`pgp_keys[2]`), for errors. */
export interface KeyText {
  readonly text: string;
  readonly field: string;
}

/**
 * Largest public key taken, in bytes of the binary key. An operator's key with an RSA-4096 primary
 * key, a few subkeys and user IDs and their self-signatures is under 10 KiB; this leaves room for
 * larger keys and third-party certifications while bounding what one key can cost to read.
 */
const MAX_KEY_BYTES = 64 * 1024;

/**
 * Longest text of one key, in characters: base64 makes 4 characters of 3 bytes, armor adds line
 * breaks (CRLF every 64 characters at most) and header lines, so every encoding of a key of
 * MAX_KEY_BYTES fits. Checked before any decoding, so an oversized key costs nothing to refuse.
 */
const MAX_KEY_CHARS = 128 * 1024;

/**
 * Most OpenPGP packets in one key. openpgp's work grows with the number of packets more than with
 * their size (64 KiB of one-byte user ID packets is about 20,000 of them), so the count is bounded
 * too. A primary key with its subkeys, user IDs, their self-signatures and a good number of
 * third-party certifications stays far below it; `gpg --export-options export-minimal` drops the
 * certifications of a key that has more.
 */
const MAX_KEY_PACKETS = 256;

let library: Promise<typeof OpenPgp> | undefined;

function openpgp(): Promise<typeof OpenPgp> {
  return (library ??= import('openpgp'));
}

/** PGP work of one request at a time, server-wide: concurrent requests do not add up within a turn. */
const pgpWork = new SerialQueue();

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/**
 * Reads public keys, each checked to be able to encrypt now. The size of every key is checked
 * before the first is parsed; then they are parsed one at a time, in order.
 * @throws BadRequestError naming the key's field: a Keybase name, a key over MAX_KEY_BYTES or
 * MAX_KEY_PACKETS, text that is no public key, a private key, or a key without a usable
 * encryption subkey (expired, revoked, sign-only).
 */
export async function readKeys(keys: readonly KeyText[]): Promise<PgpRecipient[]> {
  // No keys (an init without pgp_keys): openpgp is not loaded for nothing.
  if (keys.length === 0) return [];
  for (const key of keys) requireKeyText(key);
  return await pgpWork.run(async () => {
    const pgp = await openpgp();
    const recipients: PgpRecipient[] = [];
    for (const key of keys) {
      await nextTurn();
      recipients.push(await parse(pgp, key));
    }
    return recipients;
  });
}

/** A list of keys, each named by its position (`pgp_keys[2]`); see readKeys. */
export function readRecipients(texts: readonly string[], field: string): Promise<PgpRecipient[]> {
  return readKeys(texts.map((text, i) => ({ text, field: `${field}[${i}]` })));
}

/** One key (`pgp_key`, `root_token_pgp_key`); see readKeys. */
export async function readRecipient(text: string, field: string): Promise<PgpRecipient> {
  const [recipient] = await readKeys([{ text, field }]);
  return recipient!;
}

/** A binary OpenPGP message holding `plaintext`, readable only with the recipient's private key. */
export function encryptTo(recipient: PgpRecipient, plaintext: Uint8Array): Promise<Buffer> {
  return pgpWork.run(async () => encrypt(await openpgp(), recipient, plaintext));
}

/**
 * Encrypts each share to its recipient, as Vault does: the share's hex text is the plaintext, so
 * `base64 -d | gpg -d` prints a key `sys/unseal` takes. One share at a time, a turn between them.
 */
export function encryptShares(shares: readonly Buffer[], recipients: readonly PgpRecipient[]): Promise<Buffer[]> {
  return pgpWork.run(async () => {
    const pgp = await openpgp();
    const messages: Buffer[] = [];
    for (const [i, share] of shares.entries()) {
      await nextTurn();
      messages.push(await encrypt(pgp, recipients[i]!, Buffer.from(share.toString('hex'), 'utf8')));
    }
    return messages;
  });
}

async function encrypt(pgp: typeof OpenPgp, recipient: PgpRecipient, plaintext: Uint8Array): Promise<Buffer> {
  const message = await pgp.createMessage({ binary: plaintext });
  return Buffer.from(await pgp.encrypt({ message, encryptionKeys: recipient.key, format: 'binary' }));
}

/** What can be told from the text alone: more text than any key of MAX_KEY_BYTES, or a Keybase name. */
function requireKeyText({ text, field }: KeyText): void {
  if (text.length > MAX_KEY_CHARS) {
    throw new BadRequestError(`${field}: a public key may be at most ${MAX_KEY_BYTES} bytes; this one is ${text.length} characters long`);
  }
  if (/^\s*keybase:/i.test(text)) {
    throw new BadRequestError(
      `${field}: Keybase keys ("keybase:<user>") are not supported; pass the base64-encoded public key (gpg --export <id> | base64)`,
    );
  }
}

async function parse(pgp: typeof OpenPgp, { text, field }: KeyText): Promise<PgpRecipient> {
  const notAKey = () =>
    new BadRequestError(`${field}: not an OpenPGP public key (expected base64 of the binary key, as "gpg --export <id> | base64" prints)`);
  const binary = await decode(pgp, text.trim());
  if (!binary) throw notAKey();
  if (binary.length > MAX_KEY_BYTES) throw new BadRequestError(`${field}: a public key may be at most ${MAX_KEY_BYTES} bytes; this one has ${binary.length}`);
  const packets = countPackets(binary);
  if (packets === undefined) throw notAKey();
  if (packets > MAX_KEY_PACKETS) {
    throw new BadRequestError(
      `${field}: a public key may hold at most ${MAX_KEY_PACKETS} OpenPGP packets; this one has more (export it without third-party signatures: gpg --export-options export-minimal --export <id> | base64)`,
    );
  }
  let key: OpenPgp.Key;
  try {
    key = await pgp.readKey({ binaryKey: binary });
  } catch {
    throw notAKey();
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

/** The binary key of armored or base64 text; undefined when it is neither. */
async function decode(pgp: typeof OpenPgp, text: string): Promise<Uint8Array | undefined> {
  if (text.startsWith('-----BEGIN PGP')) {
    try {
      // Text unarmors to bytes; openpgp's types name a stream type from a package it does not install.
      const { type, data } = (await pgp.unarmor(text)) as { type: OpenPgp.enums.armor; data: unknown };
      const isKey = type === pgp.enums.armor.publicKey || type === pgp.enums.armor.privateKey;
      return isKey && data instanceof Uint8Array ? data : undefined;
    } catch {
      return undefined;
    }
  }
  const compact = text.replace(/\s+/g, '');
  return BASE64.test(compact) && compact.length % 4 === 0 ? Buffer.from(compact, 'base64') : undefined;
}

/**
 * The number of packets in `bytes`, read from their headers only (RFC 9580, section 4.2:
 * https://www.rfc-editor.org/rfc/rfc9580#section-4.2), stopping once past MAX_KEY_PACKETS;
 * undefined when the headers do not describe the bytes exactly.
 */
function countPackets(bytes: Uint8Array): number | undefined {
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let count = 0;
  let at = 0;
  while (at < view.length) {
    if (++count > MAX_KEY_PACKETS) return count;
    const end = packetEnd(view, at);
    if (end === undefined) return undefined;
    at = end;
  }
  return count;
}

/**
 * Where the packet whose header starts at `at` ends; undefined when its header or body does not
 * fit. Partial body lengths are refused: only data packets may use them, never those of a key.
 */
function packetEnd(view: Buffer, at: number): number | undefined {
  const tag = view[at]!;
  if ((tag & 0x80) === 0) return undefined;
  const current = (tag & 0x40) !== 0;
  const first = view[at + 1] ?? 0;
  // Octets of the header, the tag's included; 0 for a partial body length, 1 for a legacy packet
  // of indeterminate length, which runs to the end of the bytes.
  const header = current ? (first < 192 ? 2 : first < 224 ? 3 : first === 255 ? 6 : 0) : [2, 3, 5, 1][tag & 0x03]!;
  if (header === 0 || at + header > view.length) return undefined;
  if (header === 1) return view.length;
  let length: number;
  if (current) length = header === 2 ? first : header === 3 ? ((first - 192) << 8) + view[at + 2]! + 192 : view.readUInt32BE(at + 2);
  else length = header === 2 ? first : header === 3 ? view.readUInt16BE(at + 1) : view.readUInt32BE(at + 1);
  const end = at + header + length;
  return end <= view.length ? end : undefined;
}
