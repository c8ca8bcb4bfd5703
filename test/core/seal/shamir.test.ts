import { expect } from 'chai';
import fc from 'fast-check';
import { BadRequestError } from '../../../core/errors.js';
import { combine, split } from '../../../core/seal/shamir.js';

const xOf = (share: Uint8Array): number => share[share.length - 1]!;
const same = (a: Uint8Array, b: Uint8Array): boolean => Buffer.from(a).equals(Buffer.from(b));

/** n, a threshold 2 ≤ t ≤ n, and a random order of the n share indexes. */
const scheme = fc.integer({ min: 2, max: 10 }).chain((n) => fc.record({
  n: fc.constant(n),
  t: fc.integer({ min: 2, max: n }),
  order: fc.shuffledSubarray([...Array(n).keys()], { minLength: n, maxLength: n }),
}));

describe('Shamir secret sharing', () => {
  it('any t of the n shares recover the secret', () => {
    fc.assert(fc.property(fc.uint8Array({ minLength: 1, maxLength: 64 }), scheme, (secret, { n, t, order }) => {
      const shares = split(secret, n, t);
      const chosen = order.slice(0, t).map((i) => shares[i]!);
      expect(same(combine(chosen), secret)).to.equal(true);
    }), { numRuns: 300 });
  });

  it('more than t shares recover the secret too', () => {
    fc.assert(fc.property(fc.uint8Array({ minLength: 1, maxLength: 32 }), scheme, (secret, { n, t }) => {
      expect(same(combine(split(secret, n, t)), secret)).to.equal(true);
    }), { numRuns: 100 });
  });

  it('t−1 shares do not recover the secret', () => {
    // 16+ bytes: a byte matches by chance with probability 1/256, all of them with 2^-128.
    fc.assert(fc.property(fc.uint8Array({ minLength: 16, maxLength: 64 }), scheme, (secret, { n, t, order }) => {
      const shares = split(secret, n, t);
      const chosen = order.slice(0, t - 1).map((i) => shares[i]!);
      if (chosen.length < 2) {
        expect(() => combine(chosen)).to.throw(BadRequestError);
      } else {
        expect(same(combine(chosen), secret)).to.equal(false);
      }
    }), { numRuns: 300 });
  });

  it('combines hand-computed shares using the AES field (FIPS-197: {57}·{83} = {c1}, {57}·{13} = {fe})', () => {
    // f(x) = 0x42 + 0x57·x, sampled at x = 0x83 and x = 0x13.
    const shares = [Uint8Array.of(0x42 ^ 0xc1, 0x83), Uint8Array.of(0x42 ^ 0xfe, 0x13)];
    expect([...combine(shares)]).to.deep.equal([0x42]);
  });

  it('makes shares of secret length + 1 ending in distinct non-zero x coordinates', () => {
    const secret = new Uint8Array(32).fill(0xab);
    const shares = split(secret, 5, 3);
    expect(shares).to.have.length(5);
    for (const share of shares) expect(share.length).to.equal(33);
    const xs = shares.map(xOf);
    expect(new Set(xs).size).to.equal(5);
    expect(xs.every((x) => x >= 1 && x <= 255)).to.equal(true);
  });

  it('draws x coordinates at random rather than 1..n', () => {
    const sequential = Array.from({ length: 20 }, () => split(Uint8Array.of(1), 5, 2))
      .every((shares) => shares.map(xOf).sort((a, b) => a - b).join() === '1,2,3,4,5');
    expect(sequential).to.equal(false);
  });

  it('can make 255 shares, using every non-zero x once', () => {
    const shares = split(Uint8Array.of(7, 8), 255, 2);
    expect(shares.map(xOf).sort((a, b) => a - b)).to.deep.equal(Array.from({ length: 255 }, (_, i) => i + 1));
    expect([...combine([shares[17]!, shares[200]!])]).to.deep.equal([7, 8]);
  });

  it('does not change the secret or the shares it is given', () => {
    const secret = Uint8Array.of(1, 2, 3);
    const shares = split(secret, 3, 2);
    const copies = shares.map((s) => Uint8Array.from(s));
    combine(shares);
    expect([...secret]).to.deep.equal([1, 2, 3]);
    shares.forEach((s, i) => expect(same(s, copies[i]!)).to.equal(true));
  });

  describe('split validation', () => {
    const secret = Uint8Array.of(1, 2, 3);
    const cases: Array<[string, () => unknown, string]> = [
      ['a threshold below 2', () => split(secret, 3, 1), 'threshold must be at least 2'],
      ['fewer parts than the threshold', () => split(secret, 2, 3), 'parts cannot be less than threshold'],
      ['more than 255 parts', () => split(secret, 256, 2), 'parts cannot exceed 255'],
      ['an empty secret', () => split(new Uint8Array(0), 3, 2), 'cannot split an empty secret'],
      ['a fractional count', () => split(secret, 3.5, 2), 'parts and threshold must be integers'],
    ];
    for (const [what, call, message] of cases) {
      it(`split rejects ${what}`, () => {
        expect(call).to.throw(BadRequestError, message);
      });
    }
  });

  describe('combine validation', () => {
    const shares = split(Uint8Array.of(9, 9, 9), 3, 2);
    const cases: Array<[string, () => unknown, string]> = [
      ['fewer than two parts', () => combine([shares[0]!]), 'less than two parts'],
      ['parts shorter than two bytes', () => combine([Uint8Array.of(1), Uint8Array.of(2)]), 'at least two bytes'],
      ['parts of different lengths', () => combine([shares[0]!, shares[1]!.subarray(1)]), 'same length'],
      ['the same part twice', () => combine([shares[0]!, shares[0]!]), 'duplicate part detected'],
      ['two parts with the same x', () => combine([shares[0]!, Uint8Array.of(1, 2, 3, xOf(shares[0]!))]), 'duplicate part detected'],
    ];
    for (const [what, call, message] of cases) {
      it(`combine rejects ${what}`, () => {
        expect(call).to.throw(BadRequestError, message);
      });
    }
  });
});
