/** Small helpers shared by the audit tests. */
import { createHmac } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino, type Logger } from 'pino';

/** The HMAC an audit device should write, computed here independently of the code under test. */
export function expectedHmac(salt: string, value: string): string {
  return 'hmac-sha256:' + createHmac('sha256', Buffer.from(salt, 'utf8')).update(Buffer.from(value, 'utf8')).digest('hex');
}

/** A temporary directory, removed by the returned cleanup. */
export async function tempDir(): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'keywarden-audit-'));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** A pino logger whose lines are kept in memory, parsed, for assertions about what was logged. */
export function capturingLogger(): { logger: Logger; lines: Array<Record<string, unknown>>; text: () => string } {
  const raw: string[] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => void raw.push(line) });
  return {
    logger,
    get lines() {
      return raw.map((line) => JSON.parse(line) as Record<string, unknown>);
    },
    text: () => raw.join(''),
  };
}

/** The JSON lines of an audit file, parsed; `prefix` is stripped from each line first. */
export async function readEntries(path: string, prefix = ''): Promise<Array<Record<string, any>>> {
  const content = await readFile(path, 'utf8');
  if (content === '') return [];
  if (!content.endsWith('\n')) throw new Error('audit file does not end with a newline');
  return content
    .slice(0, -1)
    .split('\n')
    .map((line) => {
      if (!line.startsWith(prefix)) throw new Error(`line does not start with prefix "${prefix}": ${line}`);
      return JSON.parse(line.slice(prefix.length)) as Record<string, any>;
    });
}

/** The error a promise rejects with; fails the test if it resolves. */
export async function caught(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof Error) return err;
    throw new Error(`rejected with a non-Error: ${String(err)}`);
  }
  throw new Error('expected a rejection, but the promise resolved');
}
