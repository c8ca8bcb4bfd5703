/**
 * External plugin modules on disk: who may change `plugin_directory`, where a catalog entry's
 * `command` may point (a regular file inside the directory, symlinks resolved and kept inside it)
 * and the SHA-256 check that gates every load. The bytes checked are the bytes run: the plugin's
 * process is handed them, so a file swapped between the check and the import cannot slip in.
 */
import type { Stats } from 'node:fs';
import { createHash, timingSafeEqual } from 'node:crypto';
import { lstat, readdir, readFile, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { BadRequestError } from '../errors.js';
import { ConfigError } from '../config/config-file.js';
import { PluginError } from './registry.js';

const GROUP_WRITE = 0o020;
const OTHER_WRITE = 0o002;

/**
 * Why a file or directory of the plugin directory cannot be trusted, or undefined: it must belong
 * to the server's user or to root, and neither group nor others may write it, or another user could
 * put in code the catalog would then be asked to run. Vault checks the same when
 * VAULT_ENABLE_FILE_PERMISSIONS_CHECK is set (https://developer.hashicorp.com/vault/docs/configuration#plugin_file_uid);
 * here the check is always on, and root's files pass as Vault's `plugin_file_uid = 0` lets them.
 */
export function untrusted(info: Pick<Stats, 'uid' | 'mode'>, what: string): string | undefined {
  // Windows has no POSIX owners or modes to check.
  if (process.platform === 'win32') return undefined;
  const uid = process.getuid!();
  if (info.uid !== uid && info.uid !== 0) return `${what} belongs to user ${info.uid}, not to the server's user (${uid}) or root`;
  const writable = [info.mode & GROUP_WRITE ? 'its group' : '', info.mode & OTHER_WRITE ? 'other users' : ''].filter(Boolean);
  if (writable.length > 0) return `${what} is writable by ${writable.join(' and ')} (mode ${(info.mode & 0o7777).toString(8).padStart(4, '0')})`;
  return undefined;
}

/**
 * Checks `plugin_directory` when the server starts: it exists, and it and everything in it belong
 * to the server's user or root and are writable by neither group nor others. Symbolic links are
 * not followed here; where one leads is checked when a catalog entry names it.
 * @throws ConfigError naming the first path that fails.
 */
export async function checkPluginDirectory(directory: string): Promise<void> {
  const fail = (why: string): never => {
    throw new ConfigError(`plugin_directory: ${why}`);
  };
  const info = await stat(directory).catch(() => fail(`${directory} does not exist or cannot be read`));
  if (!info.isDirectory()) fail(`${directory} is not a directory`);
  const own = untrusted(info, directory);
  if (own) fail(`${own}: make it the server's own (chown) and writable by it alone (chmod go-w)`);
  for (const name of await readdir(directory, { recursive: true })) {
    const entry = path.join(directory, name);
    const entryInfo = await lstat(entry);
    if (entryInfo.isSymbolicLink()) continue;
    const why = untrusted(entryInfo, entry);
    if (why) fail(`${why}: a plugin module and the folders holding it must be writable by the server's user alone (chmod go-w)`);
  }
}

/** A module file read and checked against its registered checksum. */
export interface VerifiedModule {
  /** The real path of the file (symlinks resolved). */
  readonly file: string;
  readonly source: Buffer;
}

/**
 * The real path of `command` inside `directory`. Refuses absolute paths, `..`, and symlinks that
 * lead out of the directory: a catalog entry may only name what the operator put there.
 */
export async function pluginFilePath(directory: string | undefined, command: string): Promise<string> {
  if (!directory) throw new BadRequestError('no plugin_directory is configured: external plugins cannot be registered or run');
  if (command === '' || path.isAbsolute(command) || command.split(/[\\/]/).some((s) => s === '..')) {
    throw new BadRequestError(`command "${command}" must be a file name relative to the plugin directory`);
  }
  const root = await realpath(directory).catch(() => {
    throw new BadRequestError(`the plugin directory ${directory} cannot be read`);
  });
  const real = await realpath(path.join(root, command)).catch(() => {
    throw new BadRequestError(`command "${command}" does not exist in the plugin directory`);
  });
  if (!real.startsWith(root + path.sep)) throw new BadRequestError(`command "${command}" leads out of the plugin directory`);
  const info = await stat(real);
  if (!info.isFile()) throw new BadRequestError(`command "${command}" is not a file`);
  // The file and every folder from the plugin directory down to it, as they are now: the check at
  // start-up saw them then.
  let refused = untrusted(info, `command "${command}"`);
  for (let dir = path.dirname(real); !refused; dir = path.dirname(dir)) {
    refused = untrusted(await stat(dir), dir === root ? 'the plugin directory' : `the folder "${path.relative(root, dir)}" of the plugin directory`);
    if (dir === root) break;
  }
  if (refused) throw new BadRequestError(`${refused}: it must be writable by the server's user alone`);
  return real;
}

/** Hex SHA-256 of a file's bytes, as `sha256sum` prints it. */
export function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * Reads `command` and checks it against `sha256` (hex) in constant time.
 * @throws PluginError when the file's checksum differs from the registered one.
 */
export async function readVerifiedModule(directory: string | undefined, command: string, sha256: string, name: string): Promise<VerifiedModule> {
  const file = await pluginFilePath(directory, command);
  const source = await readFile(file);
  const actual = createHash('sha256').update(source).digest();
  const expected = Buffer.from(sha256, 'hex');
  if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) {
    throw new PluginError(`plugin "${name}" is refused: the SHA-256 of ${command} does not match the one registered in the catalog`);
  }
  return { file, source };
}
