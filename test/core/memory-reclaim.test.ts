/**
 * A serving process gives back the memory a burst of load grew once the burst has ended, and
 * never pauses to do so while it is busy (core/memory-reclaim.ts, docs/deployment.md "Memory").
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import v8 from 'node:v8';
import vm from 'node:vm';
import { pino } from 'pino';
import { MemoryReclaim, lastResortCollection } from '../../core/memory-reclaim.js';
import { nativeHeapTrim } from '../../core/native-heap.js';

const MB = 1024 * 1024;

/** A reclaim whose readings the test sets, counting the collections it asks for. */
function observed(start: { resident: number; utilization: number; requests?: number }) {
  const readings = { requests: 0, ...start };
  let collections = 0;
  const steps: string[] = [];
  const reclaim = new MemoryReclaim({
    intervalMs: 5_000,
    growthBytes: 32 * MB,
    quietUtilization: 0.05,
    quietIntervals: 3,
    quietRequests: 10,
    requests: () => readings.requests,
    logger: pino({ level: 'silent' }),
    resident: () => readings.resident,
    utilization: () => readings.utilization,
    collect: () => {
      steps.push('collect');
      collections++;
      // What the collection gives back.
      readings.resident = start.resident + 10 * MB;
    },
    trim: () => {
      steps.push('trim');
      return true;
    },
  });
  return { reclaim, readings, collections: () => collections, steps };
}

describe('memory reclaim after a burst of load', () => {
  it('collects once the event loop was quiet for the intervals asked and the process grew since the last collection', () => {
    const { reclaim, readings, collections } = observed({ resident: 150 * MB, utilization: 0.9 });
    readings.resident = 400 * MB;
    readings.utilization = 0.01;
    expect([reclaim.check(), reclaim.check(), reclaim.check()]).to.deep.equal([false, false, true]);
    expect(collections()).to.equal(1);
  });

  it("asks the C allocator for its free pages back after the collection, which frees the buffers' memory", () => {
    const { reclaim, readings, steps } = observed({ resident: 150 * MB, utilization: 0.01 });
    readings.resident = 400 * MB;
    reclaim.check();
    reclaim.check();
    reclaim.check();
    expect(steps).to.deep.equal(['collect', 'trim']);
  });

  it('does not collect in a lull shorter than the quiet intervals asked', () => {
    const { reclaim, readings, collections } = observed({ resident: 400 * MB, utilization: 0.01 });
    readings.resident = 500 * MB;
    for (let burst = 0; burst < 5; burst++) {
      readings.utilization = 0.01;
      expect([reclaim.check(), reclaim.check()]).to.deep.equal([false, false]);
      readings.utilization = 0.9;
      expect(reclaim.check()).to.equal(false);
    }
    expect(collections()).to.equal(0);
  });

  it('does not collect while the event loop is busy, however much the process grew', () => {
    const { reclaim, readings, collections } = observed({ resident: 150 * MB, utilization: 0.9 });
    readings.resident = 600 * MB;
    for (let i = 0; i < 5; i++) expect(reclaim.check()).to.equal(false);
    expect(collections()).to.equal(0);
  });

  it('does not collect again while the process stays near the size the last collection left', () => {
    const { reclaim, readings, collections } = observed({ resident: 150 * MB, utilization: 0.01 });
    readings.resident = 400 * MB;
    expect([reclaim.check(), reclaim.check(), reclaim.check()]).to.deep.equal([false, false, true]);
    // Idle after the collection, with a little growth under the threshold.
    readings.resident += 20 * MB;
    for (let i = 0; i < 5; i++) expect(reclaim.check()).to.equal(false);
    expect(collections()).to.equal(1);
  });

  it('does not collect while requests keep coming, however idle the event loop (a client asking for health back to back)', () => {
    const { reclaim, readings, collections } = observed({ resident: 150 * MB, utilization: 0.01 });
    readings.resident = 400 * MB;
    for (let i = 0; i < 6; i++) {
      readings.requests += 500;
      expect(reclaim.check()).to.equal(false);
    }
    expect(collections()).to.equal(0);
  });

  it("collects when the only requests are a monitor's few probes", () => {
    const { reclaim, readings, collections } = observed({ resident: 150 * MB, utilization: 0.9 });
    readings.resident = 400 * MB;
    readings.utilization = 0.01;
    const checks = [0, 1, 2].map(() => {
      readings.requests += 3;
      return reclaim.check();
    });
    expect(checks).to.deep.equal([false, false, true]);
    expect(collections()).to.equal(1);
  });

  it('does not collect a quiet process that has not grown by the threshold since it started', () => {
    const { reclaim, readings, collections } = observed({ resident: 150 * MB, utilization: 0.01 });
    readings.resident = 170 * MB;
    for (let i = 0; i < 5; i++) expect(reclaim.check()).to.equal(false);
    expect(collections()).to.equal(0);
  });

  it("V8's last-resort collection shrinks the young generation a burst of allocation grew", () => {
    const newSpace = () => v8.getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')!.space_size;
    const collect = lastResortCollection();
    collect();
    const before = newSpace();
    // Short-lived objects in bulk, as a burst of requests makes: the scavenger grows the young generation.
    let keep: object[] = [];
    for (let i = 0; i < 2_000_000; i++) {
      keep.push({ i, text: `item ${i}` });
      if (keep.length > 200_000) keep = [];
    }
    const grown = newSpace();
    expect(grown).to.be.greaterThan(before);
    collect();
    expect(newSpace()).to.be.lessThan(grown);
    expect(keep.length).to.be.greaterThan(0);
  });

  it('gives the pages of freed buffers back to the system where the C library is glibc', function () {
    if (!nativeHeapTrim()) this.skip();
    // A fresh process: a heap of 64 KiB buffers (malloc'd from the main heap, under glibc's mmap
    // threshold) with every sixteenth kept, the rest collected, as a burst of requests leaves it.
    const distTest = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
    const script = `
      const { lastResortCollection } = await import(${JSON.stringify(path.join(distTest, '../core/memory-reclaim.js'))});
      const { nativeHeapTrim } = await import(${JSON.stringify(path.join(distTest, '../core/native-heap.js'))});
      const collect = lastResortCollection();
      let buffers = [];
      for (let i = 0; i < 3200; i++) buffers.push(Buffer.allocUnsafeSlow(64 * 1024).fill(i));
      buffers = buffers.filter((_, i) => i % 16 === 0);
      collect();
      const before = process.memoryUsage.rss();
      const trimmed = nativeHeapTrim()();
      const after = process.memoryUsage.rss();
      console.log(JSON.stringify({ before, after, trimmed, kept: buffers.length }));
    `;
    const out = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })) as { before: number; after: number; trimmed: boolean };
    expect(out.trimmed).to.equal(true);
    // About 190 MiB were freed; at least half of it must leave the resident set.
    expect(out.before - out.after).to.be.greaterThan(100 * MB);
  });

  it('leaves no gc function to any other context', () => {
    lastResortCollection();
    expect(vm.runInNewContext('typeof gc')).to.equal('undefined');
    expect(typeof (globalThis as { gc?: unknown }).gc).to.equal(process.execArgv.includes('--expose-gc') ? 'function' : 'undefined');
  });
});
