/**
 * A serving process holds V8's young generation at a bounded size under steady load, and lets it
 * grow again below the bound (core/young-generation.ts, docs/deployment.md "Memory").
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { YoungGenerationCap } from '../../core/young-generation.js';

const MB = 1024 * 1024;

describe('the young generation cap', () => {
  it('switches growth off once the young generation reaches the cap, and on again when it is smaller', () => {
    let size = 8 * MB;
    const factors: number[] = [];
    const cap = new YoungGenerationCap(32 * MB, { newSpaceBytes: () => size, setGrowth: (factor) => factors.push(factor), nodeFlags: [] });
    cap.check();
    size = 32 * MB;
    cap.check();
    cap.check();
    // The idle reclaim's collection shrank it.
    size = 1 * MB;
    cap.check();
    expect(factors).to.deep.equal([1, 2]);
  });

  it('stays out of the way when the operator sized the young generation with Node\'s own flag', () => {
    const factors: number[] = [];
    for (const flags of [['--max-semi-space-size=64'], ['--max_semi_space_size', '64']]) {
      const cap = new YoungGenerationCap(32 * MB, { newSpaceBytes: () => 64 * MB, setGrowth: (factor) => factors.push(factor), nodeFlags: flags });
      cap.start().check();
      cap.stop();
      expect(cap.active).to.equal(false);
    }
    expect(factors).to.deep.equal([]);
  });

  it('keeps a process allocating without pause from growing its young generation past the cap', () => {
    // Fresh processes: one with the cap, one without; the same steady allocation with survivors.
    const module = fileURLToPath(new URL('../../core/young-generation.js', import.meta.url));
    const script = (capped: boolean) => `
      const { YoungGenerationCap } = await import(${JSON.stringify(module)});
      const v8 = await import('node:v8');
      ${capped ? 'new YoungGenerationCap(8 * 1024 * 1024, { nodeFlags: [] }).start();' : ''}
      let keep = [];
      for (let i = 0; i < 3_000_000; i++) {
        keep.push({ i, text: 'item ' + i });
        if (keep.length > 100_000) keep = [];
        // A turn now and then, so that the observer hears of the collections.
        if (i % 50_000 === 0) await new Promise((resolve) => setImmediate(resolve));
      }
      console.log(v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size);
    `;
    const newSpace = (capped: boolean) => Number(execFileSync(process.execPath, ['--input-type=module', '-e', script(capped)], { encoding: 'utf8' }));
    const free = newSpace(false);
    const capped = newSpace(true);
    expect(free).to.be.greaterThan(64 * MB);
    // V8 may grow it once or twice more before the observer hears of the collection: gc entries
    // come after a turn of the event loop, and this loop turns only every 50,000 allocations (on a
    // busy machine, 20-21.5 MB was seen; 16 MB on a quiet one).
    expect(capped).to.be.at.most(32 * MB);
  });
});
