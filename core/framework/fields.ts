/**
 * Field types as Vault's framework has them, with Vault's weak typing: a client may send `"true"`
 * for a bool, `"12"` for an int, `"1h"` for a duration, and `null` or `""` to mean "unset".
 * Each type has one coercion function; the ajv keyword in schema.ts calls it, so what a field's
 * type says is what the handler gets.
 */
import { AsciiText } from '../large-text.js';

export type FieldType =
  | 'string'
  | 'large-string'
  | 'lowercase-string'
  | 'name'
  | 'int'
  | 'bool'
  | 'duration'
  | 'comma-string-list'
  | 'string-list'
  | 'comma-int-list'
  | 'map'
  | 'header-map'
  | 'object-list';

/** The TypeScript type a handler receives for each field type. */
export interface FieldTypeMap {
  string: string;
  /** A string of megabytes may come as an AsciiText (core/large-text.ts): the handler reads it in windows. */
  'large-string': string | AsciiText;
  'lowercase-string': string;
  name: string;
  int: number;
  bool: boolean;
  duration: number;
  'comma-string-list': string[];
  'string-list': string[];
  'comma-int-list': number[];
  map: Record<string, unknown>;
  'header-map': Record<string, string[]>;
  'object-list': Record<string, unknown>[];
}

export interface FieldSpec<T extends FieldType = FieldType> {
  readonly type: T;
  /** Shown in help and OpenAPI; required for every field. */
  readonly description: string;
  readonly default?: FieldTypeMap[T];
  readonly required?: boolean;
  /** For string-like types: the accepted values. */
  readonly allowedValues?: readonly string[];
  /** For int and duration: inclusive bounds (duration in seconds). */
  readonly minimum?: number;
  readonly maximum?: number;
  /** Never echo this field's value in errors (keys, plaintexts). */
  readonly sensitive?: boolean;
  /** Hidden from help/OpenAPI listings (deprecated aliases). */
  readonly deprecated?: boolean;
}

export type FieldSpecs = Readonly<Record<string, FieldSpec>>;

/** Handler input derived from a path's field specs: fields with a default or `required` are always set. */
export type FieldValues<F extends FieldSpecs> = {
  [K in keyof F]: F[K] extends { readonly required: true } | { readonly default: unknown }
    ? FieldTypeMap[F[K]['type']]
    : FieldTypeMap[F[K]['type']] | undefined;
};

/** Thrown by a coercion with a message that names the problem (the caller adds the field name). */
export class CoercionError extends Error {}

/** Whether a raw value counts as "not given": Vault clients send null and "" for unset fields. */
export function isUnset(raw: unknown): boolean {
  return raw === undefined || raw === null || raw === '';
}

const NAME_PATTERN = /^\w(?:[\w.-]*\w)?$/;

/** Go's strconv.ParseBool vocabulary, which Vault clients rely on ("True" from Python, "1" from node). */
const TRUE_WORDS = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const FALSE_WORDS = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False']);

export function parseBool(raw: unknown): boolean {
  if (typeof raw === 'boolean') return raw;
  if (typeof raw === 'number' && (raw === 0 || raw === 1)) return raw === 1;
  if (typeof raw === 'string') {
    if (TRUE_WORDS.has(raw)) return true;
    if (FALSE_WORDS.has(raw)) return false;
  }
  throw new CoercionError(`expected a boolean, got ${describe(raw)}`);
}

function parseInt64(raw: unknown): number {
  let n: number;
  if (typeof raw === 'number') n = raw;
  else if (typeof raw === 'string' && /^[+-]?\d+$/.test(raw.trim())) n = Number(raw.trim());
  else if (typeof raw === 'boolean') n = raw ? 1 : 0;
  else throw new CoercionError(`expected an integer, got ${describe(raw)}`);
  if (!Number.isSafeInteger(n)) throw new CoercionError(`expected an integer, got ${describe(raw)}`);
  return n;
}

/** Nanoseconds per unit: whole numbers, so "4.1m" is 246 s exactly, as in Go, not 245.99… s. */
const DURATION_UNIT_NANOS: Record<string, bigint> = {
  ns: 1n, us: 1_000n, 'µs': 1_000n, ms: 1_000_000n, s: 1_000_000_000n, m: 60_000_000_000n, h: 3_600_000_000_000n, d: 86_400_000_000_000n,
};
const NANOS_PER_SECOND = 1_000_000_000n;

/**
 * The longest duration any field, header or setting takes, in whole seconds: Go's time.Duration
 * (int64 nanoseconds, https://pkg.go.dev/time#Duration) ends at 2562047h47m16s, so Vault can hold
 * no longer one either. It also keeps `now + duration` a valid Date for a quarter of a million
 * years (a Date reaches 8.64e15 ms past 1970), where a million years made kv writes throw.
 */
export const MAX_DURATION_SECONDS = 9_223_372_036;
const TOO_LONG = `at most ${MAX_DURATION_SECONDS} seconds (2562047h47m16s) is accepted`;

/**
 * The moment `seconds` after `now`, the duration capped at MAX_DURATION_SECONDS: a duration stored
 * before durations were bounded (a kv delete_version_after of a million years) still gives a
 * valid Date instead of one that throws when it is written out.
 */
export function afterDuration(now: Date, seconds: number): Date {
  return new Date(now.getTime() + Math.min(seconds, MAX_DURATION_SECONDS) * 1000);
}

/**
 * A duration in whole seconds: an integer (seconds), a numeric string (seconds), or Go-style
 * `1h30m`, `90s`, `2d`, `1.5h`. Negative durations are refused, and so are durations longer than
 * MAX_DURATION_SECONDS.
 */
export function parseDurationSeconds(raw: unknown): number {
  if (typeof raw === 'number') return Math.floor(checkSeconds(raw));
  return Number(parseDurationNanos(raw) / NANOS_PER_SECOND);
}

/** Like parseDurationSeconds, keeping fractions of a second (`250ms` → 0.25). */
export function parseDurationExact(raw: unknown): number {
  if (typeof raw === 'number') return checkSeconds(raw);
  const nanos = parseDurationNanos(raw);
  return Number(nanos / NANOS_PER_SECOND) + Number(nanos % NANOS_PER_SECOND) / 1e9;
}

/** Seconds as Go prints a time.Duration (`0s`, `5m0s`, `300h0m0s`), the form Vault clients read. */
export function goDuration(seconds: number): string {
  if (seconds <= 0) return '0s';
  const hours = Math.floor(seconds / 3600);
  const minutes = Math.floor((seconds % 3600) / 60);
  const rest = seconds % 60;
  if (hours > 0) return `${hours}h${minutes}m${rest}s`;
  if (minutes > 0) return `${minutes}m${rest}s`;
  return `${rest}s`;
}

function checkSeconds(raw: number): number {
  if (!Number.isFinite(raw) || raw < 0) throw new CoercionError(`expected a non-negative duration, got ${describe(raw)}`);
  if (raw > MAX_DURATION_SECONDS) throw new CoercionError(`duration ${describe(raw)} is out of range: ${TOO_LONG}`);
  return raw;
}

/** A duration string in nanoseconds, counted in integers; a fraction below 1 ns is dropped, as Go does. */
function parseDurationNanos(raw: unknown): bigint {
  if (typeof raw !== 'string') throw new CoercionError(`expected a duration, got ${describe(raw)}`);
  const text = raw.trim();
  if (text.length === 0) throw new CoercionError('expected a duration, got an empty string');
  let total = 0n;
  if (/^\d+$/.test(text)) {
    total = BigInt(text) * NANOS_PER_SECOND;
  } else {
    const part = /(\d*)(?:\.(\d+))?(ns|us|µs|ms|s|m|h|d)/y;
    let pos = 0;
    while (pos < text.length) {
      part.lastIndex = pos;
      const m = part.exec(text);
      if (!m || (m[1] === '' && m[2] === undefined)) {
        throw new CoercionError(`expected a duration such as "30s", "15m" or "1h", got ${describe(raw)}`);
      }
      const unit = DURATION_UNIT_NANOS[m[3]!]!;
      const fraction = m[2] ?? '';
      total += BigInt(m[1] || '0') * unit + (BigInt(fraction || '0') * unit) / 10n ** BigInt(fraction.length);
      pos = part.lastIndex;
    }
  }
  if (total > BigInt(MAX_DURATION_SECONDS) * NANOS_PER_SECOND) throw new CoercionError(`duration ${describe(raw)} is out of range: ${TOO_LONG}`);
  return total;
}

function asString(raw: unknown): string {
  if (typeof raw === 'string') return raw;
  // A field that does not take the bytes of a long string gets the string.
  if (raw instanceof AsciiText) return raw.toString();
  if (typeof raw === 'number' || typeof raw === 'boolean') return String(raw);
  throw new CoercionError(`expected a string, got ${describe(raw)}`);
}

function asStringList(raw: unknown, splitCommas: boolean): string[] {
  const items = Array.isArray(raw) ? raw : [raw];
  const out: string[] = [];
  for (const item of items) {
    if (item === null || item === undefined) continue;
    const text = asString(item);
    if (splitCommas) {
      for (const piece of text.split(',')) {
        const trimmed = piece.trim();
        if (trimmed !== '') out.push(trimmed);
      }
    } else {
      out.push(text);
    }
  }
  return out;
}

function asMap(raw: unknown): Record<string, unknown> {
  if (typeof raw === 'string') {
    try {
      raw = JSON.parse(raw);
    } catch {
      throw new CoercionError('expected an object or a JSON-encoded object');
    }
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new CoercionError(`expected an object, got ${describe(raw)}`);
  return raw as Record<string, unknown>;
}

/**
 * Vault's TypeHeader: an object (API clients); a string holding JSON or base64 of JSON (hvac sends
 * `iam_request_headers` so); or a list of `Name:value` strings (the CLI).
 */
function asHeaderMap(raw: unknown): Record<string, string[]> {
  if (typeof raw === 'string' && !raw.trim().startsWith('{')) {
    const decoded = Buffer.from(raw, 'base64').toString('utf8');
    if (decoded.trim().startsWith('{')) raw = decoded;
  }
  if (Array.isArray(raw) && raw.every((item) => typeof item === 'string')) {
    const pairs: Record<string, string[]> = {};
    for (const item of raw as string[]) {
      const colon = item.indexOf(':');
      if (colon <= 0) throw new CoercionError(`expected "Name:value", got ${describe(item)}`);
      (pairs[item.slice(0, colon).trim()] ??= []).push(item.slice(colon + 1).trim());
    }
    return pairs;
  }
  const map = asMap(raw);
  const out: Record<string, string[]> = {};
  for (const [key, value] of Object.entries(map)) {
    if (Array.isArray(value)) out[key] = value.map((v) => asString(v));
    else out[key] = [asString(value)];
  }
  return out;
}

/** A list of objects (transit's batch_input); a JSON-encoded list is accepted too (CLI `k=@file`). */
function asObjectList(raw: unknown): Record<string, unknown>[] {
  if (typeof raw === 'string') {
    try {
      raw = JSON.parse(raw);
    } catch {
      throw new CoercionError('expected a list of objects or a JSON-encoded list');
    }
  }
  if (!Array.isArray(raw)) throw new CoercionError(`expected a list of objects, got ${describe(raw)}`);
  raw.forEach((item, i) => {
    if (item === null || typeof item !== 'object' || Array.isArray(item)) throw new CoercionError(`item ${i} is not an object`);
  });
  return raw as Record<string, unknown>[];
}

/** Coerces a given (not unset) raw value to the field's type. */
export function coerceField(spec: FieldSpec, raw: unknown): unknown {
  switch (spec.type) {
    case 'string':
      return asString(raw);
    case 'large-string':
      return raw instanceof AsciiText ? raw : asString(raw);
    case 'lowercase-string':
      return asString(raw).toLowerCase();
    case 'name': {
      const name = asString(raw);
      if (!NAME_PATTERN.test(name)) throw new CoercionError('must contain only letters, digits, "_", "-" and ".", and start and end with a letter or digit');
      return name;
    }
    case 'int':
      return parseInt64(raw);
    case 'bool':
      return parseBool(raw);
    case 'duration':
      return parseDurationSeconds(raw);
    case 'comma-string-list':
      return asStringList(raw, true);
    case 'string-list':
      return asStringList(raw, false);
    case 'comma-int-list':
      return asStringList(raw, true).map((s) => parseInt64(s));
    case 'map':
      return asMap(raw);
    case 'header-map':
      return asHeaderMap(raw);
    case 'object-list':
      return asObjectList(raw);
  }
}

function describe(raw: unknown): string {
  if (raw === null) return 'null';
  if (raw instanceof AsciiText) return `a ${raw.length}-character string`;
  if (Array.isArray(raw)) return 'a list';
  if (typeof raw === 'object') return 'an object';
  if (typeof raw === 'string') return raw.length > 40 ? `a ${raw.length}-character string` : JSON.stringify(raw);
  if (typeof raw === 'function') return 'a function';
  return String(raw as number | boolean | bigint | symbol | undefined);
}

/** Go's strconv.Atoi: optional sign, decimal digits, within int range (version fields, URL byte counts). */
export function parseGoInt(text: string): number | undefined {
  if (!/^[+-]?\d+$/.test(text)) return undefined;
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : undefined;
}
