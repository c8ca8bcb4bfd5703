/**
 * A server's buffers of megabytes each get a mapping of their own (core/native-heap.ts,
 * `mapLargeAllocations`; docs/deployment.md, "Memory"), so that freeing one on V8's helper threads
 * never holds the event loop waiting for glibc's main heap.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { mapLargeAllocations, nativeHeapTrim } from '../../core/native-heap.js';

const distCore = path.join(path.dirname(path.dirname(path.dirname(fileURLToPath(import.meta.url)))), 'core');

/**
 * In a fresh process: allocates a 4 MiB buffer, frees it, four times over, and says of each
 * whether glibc gave it a mapping of its own (glibc's count of bytes in such mappings,
 * `mallinfo2().hblkhd`, grew by its size); `set` calls mapLargeAllocations first.
 */
function mappedInTurn(set: boolean): { set: boolean; mapped: boolean[] } {
  const script = `
    import { createRequire } from 'node:module';
    const { mapLargeAllocations } = await import(${JSON.stringify(path.join(distCore, 'native-heap.js'))});
    const { lastResortCollection } = await import(${JSON.stringify(path.join(distCore, 'memory-reclaim.js'))});
    const koffi = createRequire(${JSON.stringify(path.join(distCore, 'native-heap.js'))})('koffi');
    const fields = ['arena', 'ordblks', 'smblks', 'hblks', 'hblkhd', 'usmblks', 'fsmblks', 'uordblks', 'fordblks', 'keepcost'];
    const MallInfo2 = koffi.struct('mallinfo2', Object.fromEntries(fields.map((name) => [name, 'size_t'])));
    const mallinfo2 = koffi.load('libc.so.6').func('mallinfo2', MallInfo2, []);
    const set = ${set} ? mapLargeAllocations({}) : false;
    const collect = lastResortCollection();
    const mapped = [];
    for (let i = 0; i < 4; i++) {
      const before = Number(mallinfo2().hblkhd);
      let buffer = Buffer.allocUnsafeSlow(4 * 1024 * 1024).fill(i);
      mapped.push(Number(mallinfo2().hblkhd) - before >= buffer.length);
      buffer = undefined;
      collect();
      // V8 frees a collected buffer's memory on a helper thread.
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    console.log(JSON.stringify({ set, mapped }));
  `;
  return JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })) as { set: boolean; mapped: boolean[] };
}

describe("large buffers mapped on their own (glibc's mmap threshold)", () => {
  it('gives every buffer of megabytes a mapping of its own, where glibc would serve the next ones from its main heap', function () {
    // koffi and glibc: where the trim is bound, so is mallopt.
    if (!nativeHeapTrim()) this.skip();
    this.timeout(30_000);
    // glibc's own rule: once a mapped 4 MiB chunk is freed, the threshold rises past it, and a later
    // buffer of that size comes from the main heap. That is what the server turns off.
    // (When a freed buffer is given back depends on V8's helper thread, so any later turn will do.)
    expect(mappedInTurn(false).mapped.slice(1)).to.include(false);
    expect(mappedInTurn(true)).to.deep.equal({ set: true, mapped: [true, true, true, true] });
  });

  it("leaves a threshold the operator gave glibc alone, in either of glibc's spellings", () => {
    expect(mapLargeAllocations({ MALLOC_MMAP_THRESHOLD_: '65536' })).to.equal(false);
    expect(mapLargeAllocations({ GLIBC_TUNABLES: 'glibc.malloc.trim_threshold=0:glibc.malloc.mmap_threshold=65536' })).to.equal(false);
  });
});
