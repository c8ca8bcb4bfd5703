/** OpenPGP recipients for shares and root tokens: what the server takes, refuses, and encrypts. */
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { encryptShares, encryptTo, readRecipient, readRecipients } from '../../../core/seal/pgp.js';
import { BadRequestError } from '../../../core/errors.js';
import { generateLargePgpKey, generatePgpKey, generatePgpKeys, withExtraPackets, type TestPgpKey } from '../../helpers/pgp.js';

describe('PGP recipients', () => {
  let key: TestPgpKey;
  before(async () => {
    key = await generatePgpKey();
  });

  it('reads a base64 binary public key, with its fingerprint in lower-case hex', async () => {
    const recipient = await readRecipient(key.publicKeyBase64, 'pgp_key');
    expect(recipient.fingerprint).to.equal(key.fingerprint).and.match(/^[0-9a-f]{40}$/);
  });

  it('reads an ASCII-armored public key too', async () => {
    expect((await readRecipient(key.armoredPublicKey, 'pgp_key')).fingerprint).to.equal(key.fingerprint);
  });

  it('refuses a Keybase name, saying why and what to send instead', async () => {
    const err = await readRecipient('keybase:alice', 'pgp_keys[1]').catch((e: unknown) => e);
    expect(err).to.be.instanceOf(BadRequestError);
    expect((err as Error).message).to.match(/^pgp_keys\[1\]: Keybase keys .* not supported; pass the base64-encoded public key/);
  });

  it('refuses a private key', async () => {
    const err = await readRecipient(key.privateKeyBase64, 'pgp_key').catch((e: unknown) => e);
    expect((err as Error).message).to.equal('pgp_key: is a private key; pass only the public key');
  });

  it('refuses text that is no key', async () => {
    for (const text of ['not a key', Buffer.from('hello world!').toString('base64')]) {
      const err = await readRecipient(text, 'pgp_key').catch((e: unknown) => e);
      expect(err, text).to.be.instanceOf(BadRequestError);
      expect((err as Error).message).to.match(/^pgp_key: not an OpenPGP public key/);
    }
  });

  it('names the position of a bad key in a list', async () => {
    const err = await readRecipients([key.publicKeyBase64, 'junk'], 'pgp_keys').catch((e: unknown) => e);
    expect((err as Error).message).to.match(/^pgp_keys\[1\]:/);
  });

  it('encrypts each share to its own key as the hex text of the share', async () => {
    const keys = await generatePgpKeys(2);
    const recipients = await readRecipients(keys.map((k) => k.publicKeyBase64), 'pgp_keys');
    const shares = [randomBytes(33), randomBytes(33)];
    const encrypted = await encryptShares(shares, recipients);
    expect(await keys[0]!.decrypt(encrypted[0]!.toString('base64'))).to.equal(shares[0]!.toString('hex'));
    expect(await keys[1]!.decrypt(encrypted[1]!.toString('base64'))).to.equal(shares[1]!.toString('hex'));
    const wrong = await keys[1]!.decrypt(encrypted[0]!.toString('base64')).catch((e: unknown) => e);
    expect(wrong).to.be.instanceOf(Error);
  });

  it('encrypts a token as its own bytes', async () => {
    const message = await encryptTo(await readRecipient(key.publicKeyBase64, 'pgp_key'), Buffer.from('hvs.token'));
    expect(await key.decrypt(message.toString('base64'))).to.equal('hvs.token');
  });

  describe('bounds on what one key may cost', () => {
    it('refuses a valid key of more than 64 KiB, base64 or armored, naming its field and the limit', async () => {
      const large = await generateLargePgpKey(64 * 1024);
      expect(Buffer.from(large.publicKeyBase64, 'base64').length).to.be.greaterThan(64 * 1024);
      for (const text of [large.publicKeyBase64, large.armoredPublicKey]) {
        const err = await readRecipient(text, 'pgp_keys[4]').catch((e: unknown) => e);
        expect(err).to.be.instanceOf(BadRequestError);
        expect((err as Error).message).to.match(/^pgp_keys\[4\]: a public key may be at most 65536 bytes; this one has \d+$/);
      }
    });

    it('refuses text longer than any encoding of the largest key before decoding it', async () => {
      const err = await readRecipient('A'.repeat(4 * 1024 * 1024), 'pgp_key').catch((e: unknown) => e);
      expect((err as Error).message).to.equal(`pgp_key: a public key may be at most 65536 bytes; this one is ${4 * 1024 * 1024} characters long`);
    });

    it('refuses a key of more than 256 OpenPGP packets, saying how to export a smaller one', async () => {
      const padded = withExtraPackets(key.publicKeyBase64, 256);
      expect(Buffer.from(padded, 'base64').length).to.be.lessThan(64 * 1024);
      const err = await readRecipient(padded, 'pgp_key').catch((e: unknown) => e);
      expect((err as Error).message).to.match(/^pgp_key: a public key may hold at most 256 OpenPGP packets.*export-minimal/);
      // The same key with a few more packets is read: the bound is on the count.
      expect((await readRecipient(withExtraPackets(key.publicKeyBase64, 8), 'pgp_key')).fingerprint).to.equal(key.fingerprint);
    });

    it('checks the size of every key before parsing any: a list with a bad first key and an oversized last one names the size', async () => {
      const err = await readRecipients(['junk', key.publicKeyBase64, 'A'.repeat(1024 * 1024)], 'pgp_keys').catch((e: unknown) => e);
      expect((err as Error).message).to.match(/^pgp_keys\[2\]: a public key may be at most 65536 bytes/);
    });

    it('refuses bytes whose packet headers do not describe them exactly', async () => {
      const binary = Buffer.from(key.publicKeyBase64, 'base64');
      for (const bytes of [binary.subarray(0, binary.length - 1), Buffer.concat([binary, Buffer.from([0xcd])])]) {
        const err = await readRecipient(bytes.toString('base64'), 'pgp_key').catch((e: unknown) => e);
        expect((err as Error).message).to.match(/^pgp_key: not an OpenPGP public key/);
      }
    });
  });
});
