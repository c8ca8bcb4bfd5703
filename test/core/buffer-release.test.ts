/**
 * releaseBuffer: the memory of a buffer of megabytes goes back at once, without a garbage
 * collection; a buffer it does not wholly own, a small one, or memory V8 will not let go of, is
 * left as it is, contents and all.
 */
import { expect } from 'chai';
import { RELEASE_BYTES, releaseBuffer } from '../../core/buffer-release.js';

/** The global WebAssembly object, typed here: the project's lib settings (ES2023, no DOM) do not declare it. */
const { Memory } = (globalThis as unknown as { WebAssembly: { Memory: new (descriptor: { initial: number }) => { buffer: ArrayBuffer } } }).WebAssembly;

describe('releaseBuffer', () => {
  it('gives back a buffer of megabytes at once: its views read as empty and the process holds that much less', () => {
    const bytes = Buffer.alloc(8 * 1024 * 1024, 7);
    const view = bytes.subarray(100, 200);
    const before = process.memoryUsage().arrayBuffers;
    expect(releaseBuffer(bytes)).to.equal(true);
    expect(bytes.length).to.equal(0);
    expect(view.length).to.equal(0);
    expect(before - process.memoryUsage().arrayBuffers).to.be.at.least(8 * 1024 * 1024);
    // Again: nothing left to give back.
    expect(releaseBuffer(bytes)).to.equal(false);
  });

  it('leaves what it does not wholly own, what is small, and what V8 will not detach, intact', () => {
    const whole = Buffer.alloc(4 * RELEASE_BYTES, 1);
    const cases: [string, Uint8Array][] = [
      ['a slice of a larger buffer', whole.subarray(0, 2 * RELEASE_BYTES)],
      ['a slice at an offset', whole.subarray(RELEASE_BYTES)],
      ['a buffer under the threshold', Buffer.alloc(RELEASE_BYTES - 1, 2)],
      ["a small buffer from Node's pool", Buffer.from('short')],
      ['shared memory', new Uint8Array(new SharedArrayBuffer(2 * RELEASE_BYTES))],
      ["a WebAssembly memory's whole buffer", new Uint8Array(new Memory({ initial: 32 }).buffer)],
    ];
    for (const [what, bytes] of cases) {
      const length = bytes.length;
      expect(releaseBuffer(bytes), what).to.equal(false);
      expect(bytes.length, what).to.equal(length);
    }
    expect(whole.length).to.equal(4 * RELEASE_BYTES);
    expect(whole.every((byte) => byte === 1)).to.equal(true);
    expect(releaseBuffer(undefined)).to.equal(false);
  });
});
