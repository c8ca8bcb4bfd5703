import { expect } from 'chai';
import { BadRequestError } from '../../core/errors.js';
import { afterFolder, compareKeys, prefixEnd, validateOp } from '../../storage/keys.js';
import type { BatchOp } from '../../storage/storage.js';

const utf8Order = (a: string, b: string): number => Math.sign(Buffer.compare(Buffer.from(a), Buffer.from(b)));

describe('storage key order', () => {
  const samples = ['', 'a', 'a/', 'a/b', 'a0', 'a.', 'ab', '\u00e9', '\uD7FF', '\uE000', '\uFFFD', '\uFFFF',
    '\u{10000}', '\u{1F600}', '\u{1F600}x', '\u{10FFFF}', '\u4e2d'];

  it('compareKeys orders by code point, putting astral characters after U+FFFF', () => {
    const keys = ['\u{10000}', '\uFFFF', '\uE000', 'a', '\u{10FFFF}', '\uD7FF'];
    expect([...keys].sort(compareKeys)).to.deep.equal(['a', '\uD7FF', '\uE000', '\uFFFF', '\u{10000}', '\u{10FFFF}']);
  });

  it('compareKeys agrees with comparing UTF-8 bytes', () => {
    for (const a of samples) {
      for (const b of samples) {
        expect(Math.sign(compareKeys(a, b)), `${a} vs ${b}`).to.equal(utf8Order(a, b));
      }
    }
  });

  it('prefixEnd is above every key with the prefix and at or below every larger key without it', () => {
    for (const prefix of samples) {
      const end = prefixEnd(prefix);
      if (end === undefined) continue;
      for (const key of samples) {
        for (const candidate of [key, prefix + key]) {
          if (candidate.startsWith(prefix)) expect(utf8Order(candidate, end), `${candidate} < end(${prefix})`).to.equal(-1);
          else if (utf8Order(candidate, prefix) > 0) expect(utf8Order(candidate, end), `${candidate} >= end(${prefix})`).to.be.at.least(0);
        }
      }
    }
  });

  it('prefixEnd is unbounded for the empty prefix and for one of only maximal code points', () => {
    expect(prefixEnd('')).to.equal(undefined);
    expect(prefixEnd('\u{10FFFF}\u{10FFFF}')).to.equal(undefined);
  });

  it('prefixEnd steps over the surrogate block and past a maximal last code point', () => {
    expect(prefixEnd('a\uD7FF')).to.equal('a\uE000');
    expect(prefixEnd('a\u{10FFFF}')).to.equal('b');
  });

  it('afterFolder sorts after everything in the folder and before the next sibling', () => {
    const end = afterFolder('x/dir');
    expect(utf8Order('x/dir/\u{10FFFF}\u{10FFFF}', end)).to.equal(-1);
    expect(utf8Order('x/dir.', end)).to.equal(-1);
    expect(utf8Order('x/dir0', end)).to.equal(0);
  });
});

describe('validateOp', () => {
  it('rejects an empty key, a non-byte value and an unknown op type', () => {
    const bad = [
      { type: 'put', key: '', value: new Uint8Array() },
      { type: 'put', key: 'k', value: 'text' },
      { type: 'merge', key: 'k' },
    ] as unknown as BatchOp[];
    for (const op of bad) expect(() => validateOp(op)).to.throw(BadRequestError);
  });

  it('accepts a put of bytes and a delete', () => {
    validateOp({ type: 'put', key: 'k', value: new Uint8Array() });
    validateOp({ type: 'delete', key: 'k' });
  });
});
