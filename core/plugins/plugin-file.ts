/**
 * External plugin modules on disk: where a catalog entry's `command` may point (a regular file
 * inside `plugin_directory`, symlinks resolved and kept inside it) and the SHA-256 check that
 * gates every load. The bytes checked are the bytes run: the worker is handed them, so a file
 * swapped between the check and the import cannot slip in.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { readFile, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { BadRequestError } from '../errors.js';
import { PluginError } from './registry.js';

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
  if (!(await stat(real)).isFile()) throw new BadRequestError(`command "${command}" is not a file`);
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
