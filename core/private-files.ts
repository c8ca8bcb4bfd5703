/**
 * Directories and files only the server's own user may touch: the LevelDB directory, dev mode's
 * unseal key, the CLI's token file. Modes are set explicitly instead of being left to the umask:
 * `keywarden server` sets a strict umask, but the server also runs inside other programs (tests,
 * embedders) whose umask it does not control.
 */
import { chmod, lstat, mkdir, open, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { UnavailableError } from './errors.js';

const PRIVATE_DIRECTORY_MODE = 0o700;
const PRIVATE_FILE_MODE = 0o600;
const GROUP_AND_OTHER = 0o077;

/**
 * Creates `dir` (missing parents included) 0700, or makes an existing one private. A directory that
 * group or others may enter, list or write loses those bits, and so do the regular files directly in
 * it (left by an older version, or created by an embedder with a loose umask); `warn` is told the
 * path and the old mode. A directory of another user is refused rather than changed: its owner could
 * open it up again at any time, so tightening it would only look safe.
 * @param label what the directory is, for messages ("storage directory").
 * @throws UnavailableError when the directory cannot be created, belongs to another user, or its
 *   mode cannot be changed.
 */
export async function ensurePrivateDirectory(dir: string, label: string, warn: (message: string) => void): Promise<void> {
  try {
    await mkdir(dir, { recursive: true, mode: PRIVATE_DIRECTORY_MODE });
  } catch (err) {
    throw new UnavailableError(`cannot create ${label} "${dir}": ${messageOf(err)}`, { cause: err });
  }
  // Windows has no POSIX modes: stat reports 0777 for every directory and chmod cannot narrow it.
  if (process.platform === 'win32') return;
  const info = await stat(dir);
  const mode = info.mode & 0o7777;
  if ((mode & GROUP_AND_OTHER) === 0) return;
  const uid = process.getuid!();
  if (info.uid !== uid) {
    throw new UnavailableError(
      `${label} "${dir}" is open to group or others (mode ${octal(mode)}) and belongs to user ${info.uid}, not to this process's user ${uid}: ` +
        'make it private (chmod 700) or run as its owner',
    );
  }
  let files: { path: string; mode: number }[];
  try {
    files = await looseFilesIn(dir);
    await chmod(dir, mode & ~GROUP_AND_OTHER);
    for (const file of files) await chmod(file.path, file.mode & ~GROUP_AND_OTHER);
  } catch (err) {
    throw new UnavailableError(`${label} "${dir}" is open to group or others (mode ${octal(mode)}) and cannot be made private: ${messageOf(err)}`, { cause: err });
  }
  warn(
    `${label} "${dir}" was open to group or others (mode ${octal(mode)}): changed it to ${octal(mode & ~GROUP_AND_OTHER)}` +
      (files.length > 0 ? ` and removed group and other access from ${files.length} file(s) in it` : ''),
  );
}

/**
 * Writes `data` to `file` with mode 0600, also when the file already existed with a wider mode
 * (writeFile's `mode` applies only to a file it creates).
 */
export async function writePrivateFile(file: string, data: string): Promise<void> {
  const handle = await open(file, 'w', PRIVATE_FILE_MODE);
  try {
    // Before writing, so the new content is never readable by others, not even for a moment.
    await handle.chmod(PRIVATE_FILE_MODE);
    await handle.writeFile(data);
  } finally {
    await handle.close();
  }
}

/** Regular files directly in `dir` with group or other bits; symbolic links are not followed. */
async function looseFilesIn(dir: string): Promise<{ path: string; mode: number }[]> {
  const loose: { path: string; mode: number }[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(dir, entry.name);
    const mode = (await lstat(file)).mode & 0o7777;
    if ((mode & GROUP_AND_OTHER) !== 0) loose.push({ path: file, mode });
  }
  return loose;
}

function octal(mode: number): string {
  return `0${mode.toString(8).padStart(3, '0')}`;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
