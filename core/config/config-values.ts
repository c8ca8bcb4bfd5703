/**
 * What every block of a configuration file is read with: where a setting was written, the error that
 * names it, a block's keys checked against the ones it takes, and the readers of single values, each
 * as Vault reads it. The blocks themselves are config-file.ts's, listener-stanza.ts's and
 * audit-stanza.ts's.
 */
import { describeHclValue, type HclItem, type HclObject, type HclValue } from '../hcl.js';
import { CoercionError, parseBool, parseDurationExact, parseDurationSeconds } from '../framework/fields.js';
import type { ListenerTls, LogLevel } from './settings.js';

export class ConfigError extends Error {}

/** Where a setting was read: the file, the line, and the key's dotted path (`listener.tcp.address`). */
export interface Where {
  readonly file: string;
  readonly line: number;
  readonly key: string;
}

export interface Setting<T> {
  readonly value: T;
  readonly where: Where;
}

/** `file:line: key: problem`, the shape of every error about a setting. */
export function fail(where: Where, problem: string): never {
  throw new ConfigError(`${where.file}:${where.line}: ${where.key}: ${problem}`);
}

/** A file's name for messages, and the directory its relative paths resolve against. */
export interface SourceFile {
  readonly name: string;
  readonly dir: string;
}

/** Vault's log level names, "notice" and "err" included. */
export const LOG_LEVELS: Readonly<Record<string, LogLevel>> = {
  trace: 'trace', debug: 'debug', info: 'info', notice: 'info', warn: 'warn', warning: 'warn', error: 'error', err: 'error',
};

export interface Field {
  readonly value: HclValue;
  readonly where: Where;
}

export function whereOf(item: HclItem, prefix: string, source: SourceFile): Where {
  return { file: source.name, line: item.keyPos.line, key: prefix + item.key };
}

/** A block's items by key, refusing unknown keys, keys set twice, and `refused` keys with their reason. */
export function fieldsOf(
  items: readonly HclItem[],
  prefix: string,
  source: SourceFile,
  known: readonly string[],
  refused: Readonly<Record<string, string>> = {},
): Map<string, Field> {
  const fields = new Map<string, Field>();
  for (const item of items) {
    const where = whereOf(item, prefix, source);
    const why = refused[item.key];
    if (why) fail(where, `not supported: ${why}`);
    if (!known.includes(item.key)) fail(where, known.length === 0 ? 'unknown key; this block takes none' : `unknown key; expected one of ${known.join(', ')}`);
    const earlier = fields.get(item.key);
    if (earlier) fail(where, `set twice in this file (first on line ${earlier.where.line})`);
    fields.set(item.key, { value: item.value, where });
  }
  return fields;
}

/** A block's body: an object, or each object of a list (how HCL's JSON form repeats a block). */
export function blockBodies(value: HclValue, where: Where): readonly HclObject[] {
  if (value.kind === 'object') return [value];
  if (value.kind === 'list' && value.items.length > 0 && value.items.every((v) => v.kind === 'object')) return value.items as HclObject[];
  return fail(where, `expected a block { … }, got ${describeHclValue(value)}`);
}

/** The only body of a block that may appear once. */
export function singleBody(value: HclValue, where: Where): HclObject {
  const bodies = blockBodies(value, where);
  if (bodies.length > 1) fail(where, 'expected one block, got a list of them');
  return bodies[0]!;
}

export interface LabeledBlock {
  readonly label: string;
  readonly where: Where;
  readonly body: HclObject;
}

/** `name "label" { body }`, or its JSON form `"name": {"label": {body}}`: each label with its body. */
export function labeledBlocks(value: HclValue, where: Where, source: SourceFile): LabeledBlock[] {
  const blocks: LabeledBlock[] = [];
  for (const outer of blockBodies(value, where)) {
    if (outer.items.length === 0) fail(where, `expected a labeled block such as ${where.key} "${where.key === 'listener' ? 'tcp' : 'leveldb'}" { … }`);
    for (const labeled of outer.items) {
      const labelWhere = whereOf(labeled, `${where.key}.`, source);
      for (const body of blockBodies(labeled.value, labelWhere)) blocks.push({ label: labeled.key, where: labelWhere, body });
    }
  }
  return blocks;
}

export type Reader<T> = (value: HclValue, where: Where) => T;

export const string: Reader<string> = (value, where) => (value.kind === 'string' ? value.value : fail(where, `expected a string, got ${describeHclValue(value)}`));

export const nonEmptyString: Reader<string> = (value, where) => string(value, where) || fail(where, 'must not be empty');

/** A list of strings (`["a", "b"]`). */
export const stringList: Reader<readonly string[]> = (value, where) =>
  value.kind === 'list' ? value.items.map((item) => string(item, where)) : fail(where, `expected a list of strings, got ${describeHclValue(value)}`);

/** As Vault reads booleans: true or false, 0 or 1, or a word of Go's ParseBool ("true", "1", "f", …). */
export const boolean: Reader<boolean> = (value, where) => {
  try {
    return parseBool(scalar(value, where));
  } catch (err) {
    return fail(where, problemOf(err));
  }
};

/** A whole number, or a string of one ("1024"), as Vault's parseutil reads integers. */
export const integer: Reader<number> = (value, where) => {
  if (value.kind === 'number' && Number.isSafeInteger(value.value)) return value.value;
  if (value.kind === 'string' && /^-?\d{1,15}$/.test(value.value)) return Number(value.value);
  return fail(where, `expected a whole number, got ${value.kind === 'number' ? value.value : describeHclValue(value)}`);
};

/** Seconds, or undefined for "" and 0 (Vault's "use the default"). */
export const leaseTtl: Reader<number | undefined> = (value, where) => {
  if (value.kind === 'string' && value.value === '') return undefined;
  return durationIn(parseDurationSeconds)(value, where) || undefined;
};

/** A duration ("15m", or whole seconds) in whole seconds. */
export const durationSeconds: Reader<number> = (value, where) => durationIn(parseDurationSeconds)(value, where);

/** A duration ("250ms", "1m30s", or whole seconds) in milliseconds, fractions of a second kept. */
export const durationMillis: Reader<number> = (value, where) => Math.round(durationIn(parseDurationExact)(value, where) * 1000);

function durationIn(parse: (raw: unknown) => number): Reader<number> {
  return (value, where) => {
    if (value.kind === 'number' && !Number.isSafeInteger(value.value)) {
      fail(where, `expected a duration such as "30s" or a whole number of seconds, got ${value.value}`);
    }
    try {
      return parse(scalar(value, where));
    } catch (err) {
      return fail(where, problemOf(err));
    }
  };
}

export const logLevel: Reader<LogLevel> = (value, where) => {
  const text = string(value, where);
  return LOG_LEVELS[text.trim().toLowerCase()] ?? fail(where, `expected trace, debug, info, warn or error, got "${text}"`);
};

export const tlsVersion: Reader<ListenerTls['minVersion']> = (value, where) => {
  const text = string(value, where);
  if (text === 'tls12') return 'TLSv1.2';
  if (text === 'tls13') return 'TLSv1.3';
  if (text === 'tls10' || text === 'tls11') return fail(where, `"${text}" is not accepted: TLS 1.0 and 1.1 are deprecated (RFC 8996); use "tls12" or "tls13"`);
  return fail(where, `expected "tls12" or "tls13", got "${text}"`);
};

function scalar(value: HclValue, where: Where): string | number | boolean {
  if (value.kind === 'string' || value.kind === 'number' || value.kind === 'bool') return value.value;
  return fail(where, `expected a single value, got ${describeHclValue(value)}`);
}

function problemOf(err: unknown): string {
  if (err instanceof CoercionError) return err.message;
  throw err;
}
