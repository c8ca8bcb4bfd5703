/** `key=value` arguments of read/write: `k=@file` reads a file, `k=-` reads standard input. */
import { readFile } from 'node:fs/promises';
import { UsageError } from './client.js';
import type { Io } from './output.js';

export async function parseKeyValues(args: readonly string[], io: Io): Promise<Record<string, unknown>> {
  const data: Record<string, unknown> = {};
  let stdinUsed = false;
  for (const arg of args) {
    const eq = arg.indexOf('=');
    if (eq <= 0) throw new UsageError(`expected key=value, got "${arg}"`);
    const key = arg.slice(0, eq);
    let value = arg.slice(eq + 1);
    if (value === '-') {
      if (stdinUsed) throw new UsageError('standard input can be read only once');
      stdinUsed = true;
      value = (await io.stdin()).replace(/\n$/, '');
    } else if (value.startsWith('@')) {
      try {
        value = (await readFile(value.slice(1), 'utf8')).replace(/\n$/, '');
      } catch (err) {
        throw new UsageError(`cannot read ${value.slice(1)}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
      }
    }
    // A repeated key becomes a list (`policies=a policies=b`).
    const existing = data[key];
    data[key] = existing === undefined ? value : Array.isArray(existing) ? [...existing, value] : [existing, value];
  }
  return data;
}
