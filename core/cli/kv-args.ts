/**
 * The data arguments of read/write and the other commands that take them, as the vault CLI reads
 * them: `key=value`; `key=@file` (the file's text) and `key=-` (standard input's); `key=\@x` for a
 * value that starts with "@"; and, alone, `@file.json` or `-`: a JSON object whose fields are
 * merged into the data (how Vault's docs pass a whole request body).
 */
import { readFile } from 'node:fs/promises';
import { UsageError } from './client.js';
import type { Io } from './output.js';

/**
 * Fields whose value, read from a file or standard input, is sent as the JSON it holds rather than
 * as a string: a batch is a list of objects, and sent as one escaped string it grows by a backslash
 * before every quote on its way to the server's max_request_size.
 */
const JSON_VALUED_FIELDS: ReadonlySet<string> = new Set(['batch_input']);

export async function parseKeyValues(args: readonly string[], io: Io): Promise<Record<string, unknown>> {
  const data: Record<string, unknown> = {};
  let stdinUsed = false;
  const readStdin = async (): Promise<string> => {
    if (stdinUsed) throw new UsageError('standard input can be read only once ("-" given twice)');
    stdinUsed = true;
    return io.stdin();
  };
  for (const arg of args) {
    if (arg === '-' || (arg.startsWith('@') && !arg.includes('='))) {
      const source = arg === '-' ? 'standard input' : arg.slice(1);
      Object.assign(data, jsonObject(arg === '-' ? await readStdin() : await readArgFile(arg.slice(1)), source));
      continue;
    }
    const eq = arg.indexOf('=');
    if (eq <= 0) throw new UsageError(`expected key=value, got "${arg}" (or @file.json, or - for a JSON object on standard input)`);
    const key = arg.slice(0, eq);
    const raw = arg.slice(eq + 1);
    let value: unknown = raw;
    let source: string | undefined;
    if (raw === '-') {
      source = 'standard input';
      value = (await readStdin()).replace(/\n$/, '');
    } else if (raw.startsWith('@')) {
      source = raw.slice(1);
      value = (await readArgFile(source)).replace(/\n$/, '');
    } else if (raw.startsWith('\\@')) {
      value = raw.slice(1);
    }
    if (source !== undefined && JSON_VALUED_FIELDS.has(key)) value = jsonList(value as string, key, source);
    // A repeated key becomes a list (`policies=a policies=b`).
    const existing = data[key];
    data[key] = existing === undefined ? value : Array.isArray(existing) ? [...existing, value] : [existing, value];
  }
  return data;
}

async function readArgFile(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
}

function parseJson(text: string, source: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${source} is not valid JSON: ${(err as Error).message}`);
  }
}

function jsonObject(text: string, source: string): Record<string, unknown> {
  const parsed = parseJson(text, source);
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new UsageError(`${source} must hold a JSON object (the request's fields), not ${Array.isArray(parsed) ? 'a list' : JSON.stringify(parsed)}`);
  }
  return parsed as Record<string, unknown>;
}

function jsonList(text: string, key: string, source: string): unknown[] {
  const parsed = parseJson(text, `${key}: ${source}`);
  if (!Array.isArray(parsed)) throw new UsageError(`${key}: ${source} must hold a JSON list of objects`);
  return parsed;
}
