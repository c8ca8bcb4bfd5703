/**
 * Reading OpenPGP keys and encrypting shares to them is CPU work in the server's one event loop:
 * a request with many keys must give the loop back between keys, so other clients are served in
 * between. Counted in turns of the loop (turnsDuring), never in time; with RSA keys, which openpgp
 * handles without asynchronous crypto, every turn counted is one the server gave back.
 */
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { encryptShares, readRecipients } from '../../../core/seal/pgp.js';
import { generatePgpKey, type TestPgpKey } from '../../helpers/pgp.js';
import { turnsDuring } from '../../helpers/event-loop.js';

describe('PGP work and the event loop', () => {
  const count = 32;
  let rsa: TestPgpKey;
  before(async () => {
    rsa = await generatePgpKey('operator', 'rsa');
  });

  it('reads a list of keys one at a time, the event loop turning between them', async () => {
    const { result, turns } = await turnsDuring(() => readRecipients(Array.from({ length: count }, () => rsa.publicKeyBase64), 'pgp_keys'));
    expect(result).to.have.length(count);
    expect(turns).to.be.at.least(count);
  });

  it('encrypts shares one at a time, the event loop turning between them', async () => {
    const recipients = await readRecipients(Array.from({ length: count }, () => rsa.publicKeyBase64), 'pgp_keys');
    const shares = recipients.map(() => randomBytes(33));
    const { result, turns } = await turnsDuring(() => encryptShares(shares, recipients));
    expect(await rsa.decrypt(result[count - 1]!.toString('base64'))).to.equal(shares[count - 1]!.toString('hex'));
    expect(turns).to.be.at.least(count);
  });
});
