/**
 * The `file` audit device: appends one JSON line per entry to a file, to standard output
 * (`file_path` = `stdout` or `-`), or nowhere (`discard`, for tests and benchmarks).
 *
 * Writes are queued one after another, so two entries never interleave and `reopen`/`close` never
 * cut a line in half; each write resolves only when the OS accepted every byte, so a full disk or a
 * vanished file is reported to the broker instead of being lost. No fsync per entry: like Vault, an
 * entry the OS accepted counts as written.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { BadRequestError } from '../errors.js';
import type { AuditEntry } from './entry.js';
import { parseCommonOptions, serializeEntry, type AuditDevice, type DeviceSettings } from './device.js';

export const FILE_DEVICE_OPTIONS = ['file_path', 'mode'] as const;

/** Where the lines go. */
export type FileTarget =
  | { readonly kind: 'file'; readonly path: string }
  | { readonly kind: 'stdout' }
  | { readonly kind: 'discard' };

const DEFAULT_MODE = 0o600;

export class FileAuditDevice implements AuditDevice {
  private handle: FileHandle | undefined;
  private closed = false;
  private queue: Promise<unknown> = Promise.resolve();

  /**
   * @param mode permission bits for the file; 0 leaves an existing file's mode alone (Vault's
   *   "0000"), a new file then gets 0600.
   */
  constructor(
    readonly settings: DeviceSettings,
    readonly target: FileTarget,
    readonly mode: number = DEFAULT_MODE,
  ) {}

  /** Validates the `file` device's options (400 naming the bad one); the device is not opened yet. */
  static fromOptions(options: Readonly<Record<string, string>>): FileAuditDevice {
    const settings = parseCommonOptions(options, FILE_DEVICE_OPTIONS);
    return new FileAuditDevice(settings, parseTarget(options.file_path), parseMode(options.mode));
  }

  open(): Promise<void> {
    return this.enqueue(async () => {
      if (this.closed) throw new Error('audit device is closed');
      if (this.target.kind === 'file' && !this.handle) this.handle = await this.openFile(this.target.path);
    });
  }

  write(entry: AuditEntry): Promise<void> {
    let line: Buffer;
    try {
      line = Buffer.from(serializeEntry(entry, this.settings), 'utf8');
    } catch (err) {
      return Promise.reject(err);
    }
    return this.enqueue(async () => {
      if (this.closed) throw new Error('audit device is closed');
      switch (this.target.kind) {
        case 'discard':
          return;
        case 'stdout':
          return writeStdout(line);
        case 'file':
          // A file that could not be opened (at load, or by a failed reopen) is retried on every
          // write, so logging resumes by itself once the path is usable again.
          this.handle ??= await this.openFile(this.target.path);
          return writeAll(this.handle, line);
      }
    });
  }

  reopen(): Promise<void> {
    return this.enqueue(async () => {
      if (this.closed || this.target.kind !== 'file') return;
      const old = this.handle;
      this.handle = undefined;
      await old?.close().catch(() => undefined);
      this.handle = await this.openFile(this.target.path);
    });
  }

  close(): Promise<void> {
    return this.enqueue(async () => {
      this.closed = true;
      const handle = this.handle;
      this.handle = undefined;
      await handle?.close();
    });
  }

  /** Opens for appending (created if missing) and applies the mode to a regular file only — never to a device node. */
  private async openFile(path: string): Promise<FileHandle> {
    let handle: FileHandle | undefined;
    try {
      handle = await open(path, 'a', this.mode || DEFAULT_MODE);
      const stat = await handle.stat();
      if (this.mode !== 0 && stat.isFile() && (stat.mode & 0o7777) !== this.mode) await handle.chmod(this.mode);
      return handle;
    } catch (err) {
      await handle?.close().catch(() => undefined);
      throw new BadRequestError(`cannot open audit file "${path}": ${errorCode(err)}`);
    }
  }

  private enqueue<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work, work);
    this.queue = run.catch(() => undefined);
    return run;
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
  return parseInt(raw, 8);
}

async function writeAll(handle: FileHandle, data: Buffer): Promise<void> {
  let offset = 0;
  while (offset < data.length) {
    const { bytesWritten } = await handle.write(data, offset, data.length - offset);
    offset += bytesWritten;
  }
}

function writeStdout(data: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    process.stdout.write(data, (err) => (err ? reject(err) : resolve()));
  });
}

/** The OS error code (ENOENT, EACCES, EISDIR, ...) when there is one; the message otherwise. */
export function errorCode(err: unknown): string {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (typeof code === 'string') return code;
  return err instanceof Error ? err.message : String(err);
}
