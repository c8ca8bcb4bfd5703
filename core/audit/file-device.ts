/**
 * The `file` audit device: appends one JSON line per entry to a file, to standard output
 * (`file_path` = `stdout` or `-`), or nowhere (`discard`, for tests and benchmarks).
 *
 * Entries are appended by group commit (group-commit.ts): those that arrive while a write is in
 * flight go out together in the next one, in order, so two entries never interleave and
 * `reopen`/`close` never cut a line in half. Each entry's write resolves only when the OS accepted
 * every byte of the write that carried it, so a full disk or a vanished file is reported to the
 * broker (for every entry of that write) instead of being lost. No fsync per write: like Vault, an
 * entry the OS accepted counts as written.
 *
 * Where a file may be and what becomes of its mode is rules.ts's: never inside plugin_directory,
 * never a mode that executes or lets others write, never a mode wider than an existing file had. An
 * API-created device opens only a regular file, never through a symbolic link at the file itself,
 * and never appends to a file that is executable or writable by others; a declared one may name
 * `/dev/stdout` or a link, as its operator chose.
 */
import { constants as fsConstants } from 'node:fs';
import { lstat, open, type FileHandle } from 'node:fs/promises';
import { BadRequestError } from '../errors.js';
import type { AuditEntry } from './entry.js';
import { parseCommonOptions, serializeEntry, type AuditDevice, type DeviceSettings } from './device.js';
import { GroupCommit } from './group-commit.js';
import { checkFileLocation, checkFileMode, FORBIDDEN_MODE_BITS, type DeviceContext } from './rules.js';

/** `path` is the older name of `file_path`, which Vault still reads when `file_path` is absent. */
export const FILE_DEVICE_OPTIONS = ['file_path', 'path', 'mode'] as const;

/** Where the lines go. */
export type FileTarget =
  | { readonly kind: 'file'; readonly path: string }
  | { readonly kind: 'stdout' }
  | { readonly kind: 'discard' };

const DEFAULT_MODE = 0o600;

const { O_WRONLY, O_APPEND, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK } = fsConstants;
/**
 * An API-created device's open: O_NOFOLLOW refuses a symbolic link at the file itself, and
 * O_NONBLOCK keeps a FIFO without a reader from holding one of libuv's few threads forever (its
 * open fails with ENXIO instead; one with a reader is refused once fstat shows what it is).
 */
const API_OPEN_FLAGS = O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK;
const CONFIG_OPEN_FLAGS = O_WRONLY | O_APPEND;

export class FileAuditDevice implements AuditDevice {
  private handle: FileHandle | undefined;
  private closed = false;
  private readonly commits = new GroupCommit((lines) => this.flush(lines));

  /**
   * @param mode permission bits for the file; 0 leaves an existing file's mode alone (Vault's
   *   "0000"), a new file then gets 0600.
   */
  constructor(
    readonly settings: DeviceSettings,
    readonly target: FileTarget,
    readonly mode: number,
    private readonly context: DeviceContext,
  ) {}

  /** Validates the `file` device's options (400 naming the bad one); the device is not opened yet. */
  static fromOptions(options: Readonly<Record<string, string>>, context: DeviceContext): FileAuditDevice {
    const settings = parseCommonOptions(options, FILE_DEVICE_OPTIONS, context);
    if (options.file_path !== undefined && options.path !== undefined && options.file_path !== options.path) {
      throw new BadRequestError('audit device options "file_path" and "path" (its older name) differ: give one');
    }
    return new FileAuditDevice(settings, parseTarget(options.file_path ?? options.path), parseMode(options.mode), context);
  }

  open(): Promise<void> {
    return this.commits.run(async () => {
      if (this.closed) throw new Error('audit device is closed');
      if (this.target.kind === 'file' && !this.handle) this.handle = await this.openFile(this.target.path);
    });
  }

  write(entry: AuditEntry): Promise<void> {
    let line: Buffer[];
    try {
      line = serializeEntry(entry, this.settings);
    } catch (err) {
      return Promise.reject(err);
    }
    return this.commits.append(line);
  }

  /** One group commit's lines, all at once. */
  private async flush(lines: readonly Buffer[]): Promise<void> {
    if (this.closed) throw new Error('audit device is closed');
    switch (this.target.kind) {
      case 'discard':
        return;
      case 'stdout':
        return writeStdout(lines);
      case 'file':
        // A file that could not be opened (at load, or by a failed reopen) is retried on every
        // write, so logging resumes by itself once the path is usable again.
        this.handle ??= await this.openFile(this.target.path);
        return writeAll(this.handle, lines);
    }
  }

  reopen(): Promise<void> {
    return this.commits.run(async () => {
      if (this.closed || this.target.kind !== 'file') return;
      const old = this.handle;
      this.handle = undefined;
      await old?.close().catch(() => undefined);
      this.handle = await this.openFile(this.target.path);
    });
  }

  close(): Promise<void> {
    return this.commits.run(async () => {
      this.closed = true;
      const handle = this.handle;
      this.handle = undefined;
      await handle?.close();
    });
  }

  /**
   * Opens for appending, created if missing. Its place is checked on every open (a reopen after
   * rotation too), before anything is opened. A file this open created gets the configured mode;
   * an existing regular file is only ever narrowed to the bits it had and the mode allows, so a
   * device can never open an existing file up. A device node or FIFO keeps its mode.
   */
  private async openFile(path: string): Promise<FileHandle> {
    const api = this.context.origin === 'api';
    await checkFileLocation(path, this.context);
    if (api) await refuseUnsafeExisting(path);
    let handle: FileHandle | undefined;
    try {
      const opened = await openForAppend(path, api ? API_OPEN_FLAGS : CONFIG_OPEN_FLAGS, this.mode || DEFAULT_MODE);
      handle = opened.handle;
      const stat = await handle.stat();
      const current = stat.mode & 0o7777;
      if (api && !stat.isFile()) throw notRegular(path);
      if (api && !opened.created && (current & FORBIDDEN_MODE_BITS) !== 0) throw unsafeMode(path, current);
      if (this.mode !== 0 && stat.isFile()) {
        const wanted = opened.created ? this.mode : this.mode & current;
        if (wanted !== current) await handle.chmod(wanted);
      }
      return handle;
    } catch (err) {
      await handle?.close().catch(() => undefined);
      if (err instanceof BadRequestError) throw err;
      if (api && errorCode(err) === 'ELOOP') throw symbolicLink(path);
      throw new BadRequestError(`cannot open audit file "${path}": ${errorCode(err)}`);
    }
  }
}

function parseTarget(filePath: string | undefined): FileTarget {
  if (filePath === undefined || filePath === '') throw new BadRequestError('audit device option "file_path" is required');
  if (filePath === 'stdout' || filePath === '-') return { kind: 'stdout' };
  if (filePath === 'discard') return { kind: 'discard' };
  return { kind: 'file', path: filePath };
}

function parseMode(raw: string | undefined): number {
  if (raw === undefined || raw === '') return DEFAULT_MODE;
  if (!/^[0-7]{1,4}$/.test(raw)) throw new BadRequestError(`audit device option "mode": "${raw}" is not an octal file mode such as "0600"`);
  const mode = parseInt(raw, 8);
  checkFileMode(mode, raw);
  return mode;
}

/**
 * Opens `path` with `flags`, creating it with `mode` when it is missing; `created` says whether
 * this open made it (O_EXCL first, so a file that already existed is never taken for a new one).
 */
async function openForAppend(path: string, flags: number, mode: number): Promise<{ handle: FileHandle; created: boolean }> {
  try {
    return { handle: await open(path, flags | O_CREAT | O_EXCL, mode), created: true };
  } catch (err) {
    if (errorCode(err) !== 'EEXIST') throw err;
  }
  return { handle: await open(path, flags | O_CREAT, mode), created: false };
}

/**
 * The clear refusal, before anything is opened, of what an API-created device never writes to: a
 * symbolic link, a FIFO, a socket or a device node, or an existing file that is executable or
 * writable by others. Only the message: the open's O_NOFOLLOW and the fstat after it are what hold
 * when the path changes in between.
 */
async function refuseUnsafeExisting(path: string): Promise<void> {
  const stat = await lstat(path).catch(() => undefined);
  // A directory fails the open itself (EISDIR), touching nothing.
  if (!stat || stat.isDirectory()) return;
  if (stat.isSymbolicLink()) throw symbolicLink(path);
  if (!stat.isFile()) throw notRegular(path);
  if ((stat.mode & FORBIDDEN_MODE_BITS) !== 0) throw unsafeMode(path, stat.mode & 0o7777);
}

function symbolicLink(path: string): BadRequestError {
  return new BadRequestError(`audit device option "file_path": "${path}" is a symbolic link; an API-created device does not follow one`);
}

function notRegular(path: string): BadRequestError {
  return new BadRequestError(`audit device option "file_path": "${path}" is not a regular file`);
}

function unsafeMode(path: string, mode: number): BadRequestError {
  return new BadRequestError(
    `audit device option "file_path": the existing file "${path}" is executable or writable by group or others (mode ${octal(mode)}); ` +
      'an API-created device does not append to it',
  );
}

function octal(mode: number): string {
  return `0${mode.toString(8).padStart(3, '0')}`;
}

/** Writes `lines` with gathered writes (writev), going on after a short one from the first byte not written. */
async function writeAll(handle: FileHandle, lines: readonly Buffer[]): Promise<void> {
  let rest = lines;
  for (;;) {
    let { bytesWritten } = await handle.writev(rest as Buffer[]);
    let done = 0;
    while (done < rest.length && bytesWritten >= rest[done]!.length) bytesWritten -= rest[done++]!.length;
    if (done === rest.length) return;
    rest = [rest[done]!.subarray(bytesWritten), ...rest.slice(done + 1)];
  }
}

/** The lines in one corked write: the stream hands them to the OS together. */
function writeStdout(lines: readonly Buffer[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const stdout = process.stdout;
    stdout.cork();
    for (let i = 0; i < lines.length - 1; i++) stdout.write(lines[i]!);
    stdout.write(lines[lines.length - 1]!, (err) => (err ? reject(err) : resolve()));
    stdout.uncork();
  });
}

/** The OS error code (ENOENT, EACCES, EISDIR, ...) when there is one; the message otherwise. */
export function errorCode(err: unknown): string {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (typeof code === 'string') return code;
  return err instanceof Error ? err.message : String(err);
}
