/**
 * LevelDB on a full disk, on a real size-limited filesystem (a tmpfs the test mounts; see
 * test/helpers/small-disk.ts): writes that hit ENOSPC fail with a 503-class error that says so,
 * what was written before is intact (also after a restart), reads go on, and writes resume once
 * space is freed.
 */
import { expect } from 'chai';
import path from 'node:path';
import { UnavailableError } from '../../core/errors.js';
import { LevelDbStorage } from '../../storage/leveldb.js';
import { useSmallDisk } from '../helpers/small-disk.js';
import { bytes, text } from './helpers.js';

describe('LevelDbStorage on a full disk', function () {
  this.timeout(60_000);
  const smallDisk = useSmallDisk(32 * 1024 * 1024);

  it('refuses writes with a clear 503 when the disk is full, keeps what was written and serves reads, and writes again once space is freed', async () => {
    const dir = path.join(smallDisk().path, 'store');
    let storage = await LevelDbStorage.open(dir);
    const value = (i: number) => bytes(`${i}:`.padEnd(4096, 'x'));
    const acknowledged: number[] = [];
    try {
      await smallDisk().fill(256 * 1024);
      let refused: unknown;
      for (let i = 0; i < 10_000 && refused === undefined; i++) {
        try {
          await storage.put(`k/${String(i).padStart(6, '0')}`, value(i));
          acknowledged.push(i);
        } catch (err) {
          refused = err;
        }
      }
      expect(refused, 'the disk never filled').to.be.instanceOf(UnavailableError);
      expect((refused as Error).message).to.match(/no space left on device/);
      expect(acknowledged.length).to.be.greaterThan(0);
      // Still full: refused again, at once, and reads go on.
      const again = await storage.put('k/again', value(0)).then(() => undefined, (err: unknown) => err);
      expect(again).to.be.instanceOf(UnavailableError);
      for (const i of acknowledged) expect(text(await storage.get(`k/${String(i).padStart(6, '0')}`)), `entry ${i} while full`).to.equal(text(value(i)));
      expect((await storage.list('k/')).length).to.equal(acknowledged.length);

      await smallDisk().release();
      const after: number[] = [];
      for (let i = 100_000; i < 100_200; i++) {
        await storage.put(`k/${i}`, value(i));
        after.push(i);
      }
      await storage.close();
      // Everything acknowledged, before and after the full disk, survives a restart.
      storage = await LevelDbStorage.open(dir);
      for (const i of acknowledged) expect(text(await storage.get(`k/${String(i).padStart(6, '0')}`)), `entry ${i} after restart`).to.equal(text(value(i)));
      for (const i of after) expect(text(await storage.get(`k/${i}`)), `entry ${i} after restart`).to.equal(text(value(i)));
    } finally {
      await storage.close().catch(() => undefined);
      await smallDisk().release();
    }
  });
});
