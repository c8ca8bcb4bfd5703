/** Key shares as rekey, root generation and unseal take them: recognised, collected, combined. */
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { acceptShare, ShareQuorum, splitUnsealKey } from '../../../core/seal/shares.js';
import { BadRequestError } from '../../../core/errors.js';

describe('key shares', () => {
  const unsealKey = randomBytes(32);
  const { keys, scheme } = splitUnsealKey(unsealKey, 5, 3);

  it('accepts a share of the scheme in hex or base64', () => {
    expect(acceptShare(scheme, keys[0]!.toString('hex')).equals(keys[0]!)).to.equal(true);
    expect(acceptShare(scheme, keys[1]!.toString('base64')).equals(keys[1]!)).to.equal(true);
  });

  it('refuses a well-formed share the scheme never handed out, naming the field', () => {
    const other = splitUnsealKey(randomBytes(32), 5, 3).keys[0]!;
    expect(() => acceptShare(scheme, other.toString('hex'), 'key')).to.throw(BadRequestError, /'key' is not one of the current key shares/);
  });

  it('refuses a share of the wrong length and one that is neither hex nor base64', () => {
    expect(() => acceptShare(scheme, randomBytes(20).toString('hex'))).to.throw(BadRequestError, /must be 33 bytes/);
    expect(() => acceptShare(scheme, 'not a key')).to.throw(BadRequestError, /valid hex or base64/);
  });

  it('keeps one share as the unseal key itself', () => {
    const single = splitUnsealKey(unsealKey, 1, 1);
    expect(single.keys[0]!.equals(unsealKey)).to.equal(true);
    const quorum = new ShareQuorum(1);
    expect(quorum.add(acceptShare(single.scheme, single.keys[0]!.toString('hex')))!.equals(unsealKey)).to.equal(true);
  });

  it('a quorum answers the unseal key at the threshold and forgets its shares', () => {
    const quorum = new ShareQuorum(3);
    expect(quorum.add(Buffer.from(keys[4]!))).to.equal(undefined);
    expect(quorum.holds(keys[4]!)).to.equal(true);
    expect(quorum.holds(keys[2]!)).to.equal(false);
    expect(quorum.add(Buffer.from(keys[2]!))).to.equal(undefined);
    expect(quorum.progress).to.equal(2);
    expect(quorum.add(Buffer.from(keys[0]!))!.equals(unsealKey)).to.equal(true);
    expect(quorum.progress).to.equal(0);
  });

  it('clear forgets the shares collected so far', () => {
    const quorum = new ShareQuorum(3);
    quorum.add(Buffer.from(keys[0]!));
    quorum.clear();
    expect(quorum.progress).to.equal(0);
    expect(quorum.holds(keys[0]!)).to.equal(false);
  });
});
