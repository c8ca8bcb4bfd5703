/**
 * Directories and files only the server's own user may touch: the LevelDB directory, dev mode's
 * unseal key, the CLI's token file. Modes are set explicitly instead of being left to the umask:
 * `keywarden server` sets a strict umask, but the server also runs inside other programs (tests,
 * embedders) whose umask it does not control.
 */
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { chmod, lstat, mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { UnavailableError, errorMessage } from './errors.js';

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

/** Created new, never through a link (O_NOFOLLOW is absent on Windows, where O_EXCL alone refuses an existing path). */
const NEW_FILE = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0);

/**
 * Writes `data` to `file` with mode 0600, never through a link: the data goes into a new file
 * beside it, created exclusively and 0600 before anything is written, which then replaces `file`
 * in one rename. Opening `file` itself would follow a symbolic link planted there and overwrite
 * (and chmod) whatever it points at, or write into a file hard-linked elsewhere. A `file` that is a
 * symbolic link, or not a regular file, is refused rather than replaced: it was put there by
 * someone, and the error says so. A link planted after that check is replaced by the rename, its
 * target untouched.
 * @throws UnavailableError when `file` is a symbolic link or not a regular file.
 */
export async function writePrivateFile(file: string, data: string): Promise<void> {
  const existing = await lstat(file).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
  if (existing?.isSymbolicLink()) throw new UnavailableError(`"${file}" is a symbolic link: refusing to write through it (remove it, or choose another file)`);
  if (existing && !existing.isFile()) throw new UnavailableError(`"${file}" is not a regular file: refusing to replace it`);
  const temporary = path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(temporary, NEW_FILE, PRIVATE_FILE_MODE);
  try {
    try {
      // The umask may have narrowed the mode given to open further; never widened, but set it exactly.
      await handle.chmod(PRIVATE_FILE_MODE);
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, file);
  } catch (err) {
    await rm(temporary, { force: true });
    throw err;
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
  return errorMessage(err);
}
