/**
 * A small size-limited filesystem for full-disk tests: a tmpfs mounted on a fresh directory. It
 * needs the right to mount (root, as CI runs); elsewhere `mountSmallDisk` says why it cannot and
 * the test skips itself with that reason.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, statfs, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface SmallDisk {
  readonly path: string;
  /** Bytes still free. */
  free(): Promise<number>;
  /** Takes all but `leaveBytes` of the free space with a filler file. */
  fill(leaveBytes: number): Promise<void>;
  /** Removes the filler. */
  release(): Promise<void>;
  unmount(): Promise<void>;
}

export async function mountSmallDisk(sizeBytes: number): Promise<SmallDisk | string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'keywarden-small-disk-'));
  try {
    await run('mount', ['-t', 'tmpfs', '-o', `size=${sizeBytes},mode=0700`, 'tmpfs', dir]);
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    return `cannot mount a tmpfs here (${(err as { stderr?: string }).stderr?.trim() || String(err)})`;
  }
  const filler = path.join(dir, 'filler');
  const free = async () => {
    const s = await statfs(dir);
    return s.bavail * s.bsize;
  };
  return {
    path: dir,
    free,
    fill: async (leaveBytes) => writeFile(filler, Buffer.alloc(Math.max(0, (await free()) - leaveBytes))),
    release: () => rm(filler, { force: true }),
    unmount: async () => {
      await run('umount', [dir]).catch(() => run('umount', ['-l', dir]));
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A small disk of `sizeBytes` for the enclosing describe: mounted before its tests (which skip,
 * saying why, where no tmpfs can be mounted) and unmounted after them. Read it inside the tests.
 */
export function useSmallDisk(sizeBytes: number): () => SmallDisk {
  let disk: SmallDisk | undefined;
  before(async function () {
    const mounted = await mountSmallDisk(sizeBytes);
    if (typeof mounted === 'string') {
      console.log(`      skipped: ${mounted}`);
      this.skip();
    }
    disk = mounted;
  });
  after(async () => {
    await disk?.unmount();
  });
  return () => disk!;
}
