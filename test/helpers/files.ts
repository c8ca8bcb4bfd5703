/** What a server left on disk, as permission bits. */
import { expect } from 'chai';
import { chmod, lstat, readdir } from 'node:fs/promises';
import path from 'node:path';

/** The permission bits of `dir` ('.') and of everything under it, by path relative to `dir`. */
export async function modesUnder(dir: string): Promise<Map<string, number>> {
  const modes = new Map<string, number>();
  const visit = async (relative: string): Promise<void> => {
    const full = path.join(dir, relative);
    const info = await lstat(full);
    modes.set(relative, info.mode & 0o7777);
    if (info.isDirectory()) for (const name of await readdir(full)) await visit(path.join(relative, name));
  };
  await visit('.');
  return modes;
}

/** Asserts that `dir` holds files and that neither it nor anything under it is open to group or others. */
export async function expectPrivateTree(dir: string): Promise<void> {
  const modes = await modesUnder(dir);
  expect(modes.size, `entries under ${dir}`).to.be.greaterThan(1);
  const open = [...modes].filter(([, mode]) => (mode & 0o077) !== 0).map(([name, mode]) => `${name} ${octal(mode)}`);
  expect(open, `open to group or others under ${dir}`).to.deep.equal([]);
}

/** Opens `dir` and the files directly in it to everyone's reading, as an older Keywarden left them. */
export async function openUp(dir: string): Promise<void> {
  await chmod(dir, 0o755);
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.isFile()) await chmod(path.join(dir, entry.name), 0o644);
  }
}

export function octal(mode: number): string {
  return `0${mode.toString(8).padStart(3, '0')}`;
}

/** Whether this process may chown files to another user (root), so ownership checks can be tested. */
export function canChown(): boolean {
  return process.getuid?.() === 0;
}
