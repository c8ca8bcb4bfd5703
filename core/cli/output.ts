/**
 * Output of CLI commands in vault's shapes: `-format=table` (aligned key/value rows, values as Go's
 * %v prints them, TTLs as durations), `-format=json` (a response as vault's api.Secret: request_id,
 * lease_id, lease_duration, renewable, data, warnings, auth) and `-format=yaml` (the same, as YAML
 * with sorted keys), and `-field` (one value, raw).
 */
import { createRequire } from 'node:module';
import { UsageError } from './client.js';

const require = createRequire(import.meta.url);

export type OutputFormat = 'table' | 'json' | 'yaml';

export interface Io {
  out(text: string): void;
  err(text: string): void;
  /** Reads all of standard input. */
  stdin(): Promise<string>;
  /** Prompts without echo (unseal keys); undefined when there is no terminal. */
  secret(prompt: string): Promise<string | undefined>;
  /** Whether standard output is a terminal: `-field` then ends its value with a newline, as vault does. */
  readonly isTerminal?: boolean;
  /** Whether standard error is a terminal: long transfers then show a progress bar there. */
  readonly errIsTerminal?: boolean;
}

/** -format's value; `yml` is vault's alias of yaml. */
export function parseFormat(raw: string | undefined): OutputFormat {
  if (raw === undefined || raw === 'table') return 'table';
  if (raw === 'json') return 'json';
  if (raw === 'yaml' || raw === 'yml') return 'yaml';
  throw new UsageError(`Invalid output format: ${raw} (use table, json or yaml)`);
}

/** A value as Go's %v prints it, which is what vault's tables show: `[a b]`, `map[k:v]`, `<nil>`. */
export function goValue(value: unknown): string {
  if (value === null || value === undefined) return '<nil>';
  if (Array.isArray(value)) return `[${value.map(goValue).join(' ')}]`;
  if (typeof value === 'object') {
    const record = value as Record<string, unknown>;
    return `map[${Object.keys(record)
      .sort()
      .map((k) => `${k}:${goValue(record[k])}`)
      .join(' ')}]`;
  }
  // What is left is a number, a boolean or a bigint.
  return String(value as number | boolean | bigint);
}

/** A list of strings as Go's %q prints it: `["a" "b"]`. */
function goQuoted(list: unknown): string {
  return `[${(Array.isArray(list) ? list : []).map((v) => JSON.stringify(String(v))).join(' ')}]`;
}

/** Seconds as vault prints a duration: 3600 → 1h, 90 → 1m30s, 3605 → 1h5s, 0 → 0s. */
export function humanDuration(seconds: number): string {
  if (seconds === 0) return '0s';
  const sign = seconds < 0 ? '-' : '';
  const total = Math.abs(seconds);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  // Go's Duration.String without the zero minutes and seconds vault strips.
  let text = h > 0 ? `${h}h${m}m${s}s` : m > 0 ? `${m}m${s}s` : `${s}s`;
  if (text.endsWith('m0s')) text = text.slice(0, -2);
  text = text.replace(/h0m/, 'h');
  return sign + text;
}

/** Keys vault prints as durations when their value is a whole number of seconds. */
function looksLikeDuration(key: string): boolean {
  return /(^|_)(period|ttl|duration)$/.test(key) || key === 'lease_max' || key === 'ttl_max';
}

function durationOr(key: string, value: unknown): unknown {
  return looksLikeDuration(key) && typeof value === 'number' && Number.isInteger(value) ? humanDuration(value) : value;
}

/** An empty cell reads n/a, as in vault's columns. */
function cell(value: unknown): string {
  const text = goValue(value);
  return text === '' ? 'n/a' : text;
}

/** Key/value rows under a header, in aligned columns: what `vault read` prints. */
export function table(rows: ReadonlyArray<readonly [string, unknown]>, headers: readonly [string, string] = ['Key', 'Value']): string {
  const width = Math.max(headers[0].length, ...rows.map(([k]) => k.length));
  const lines = [`${headers[0].padEnd(width)}    ${headers[1]}`, `${'-'.repeat(headers[0].length).padEnd(width)}    ${'-'.repeat(headers[1].length)}`];
  for (const [k, v] of rows) lines.push(`${k.padEnd(width)}    ${cell(v)}`);
  return `${lines.join('\n')}\n`;
}

/** The auth block as vault's api.SecretAuth has it. */
interface SecretAuth {
  readonly client_token: string;
  readonly accessor: string;
  readonly policies: string[] | null;
  readonly token_policies: string[] | null;
  readonly identity_policies: string[] | null;
  readonly metadata: Record<string, string> | null;
  readonly orphan: boolean;
  readonly entity_id: string;
  readonly lease_duration: number;
  readonly renewable: boolean;
  readonly mfa_requirement: unknown;
}

/** A response as vault's api.Secret has it: what `-format=json` prints. */
interface Secret {
  readonly request_id: string;
  readonly lease_id: string;
  readonly lease_duration: number;
  readonly renewable: boolean;
  readonly data: Record<string, unknown> | null;
  readonly warnings: string[] | null;
  readonly auth?: SecretAuth;
  readonly wrap_info?: WrapInfo;
  readonly mount_type?: string;
}

/** A wrapped answer's wrap_info, as vault's api.SecretWrapInfo has it. */
interface WrapInfo {
  readonly token: string;
  readonly accessor: string;
  readonly ttl: number;
  readonly creation_time: string;
  readonly creation_path: string;
  readonly wrapped_accessor: string;
}

type Json = Record<string, any>;

function asAuth(a: Json): SecretAuth {
  return {
    client_token: a.client_token ?? '',
    accessor: a.accessor ?? '',
    policies: a.policies ?? null,
    token_policies: a.token_policies ?? null,
    identity_policies: a.identity_policies ?? null,
    metadata: a.metadata ?? null,
    orphan: a.orphan ?? false,
    entity_id: a.entity_id ?? '',
    lease_duration: a.lease_duration ?? 0,
    renewable: a.renewable ?? false,
    mfa_requirement: a.mfa_requirement ?? null,
  };
}

function asWrapInfo(w: Json): WrapInfo {
  return {
    token: w.token ?? '',
    accessor: w.accessor ?? '',
    ttl: w.ttl ?? 0,
    creation_time: w.creation_time ?? '',
    creation_path: w.creation_path ?? '',
    wrapped_accessor: w.wrapped_accessor ?? '',
  };
}

/**
 * A response body as vault's CLI reads it: the envelope's fields, and for a body that has none of
 * them (sys/seal-status and the like answer bare JSON) the whole body as data.
 */
function asSecret(body: unknown): Secret {
  const b: Json = body !== null && typeof body === 'object' ? (body as Json) : {};
  const isEnvelope =
    Boolean(b.request_id) || Boolean(b.lease_id) || Boolean(b.lease_duration) || b.renewable === true || (b.data !== null && b.data !== undefined) ||
    (b.warnings !== null && b.warnings !== undefined) || Boolean(b.auth) || Boolean(b.mount_type) || Boolean(b.wrap_info);
  return {
    request_id: b.request_id ?? '',
    lease_id: b.lease_id ?? '',
    lease_duration: b.lease_duration ?? 0,
    renewable: b.renewable ?? false,
    data: isEnvelope ? (b.data ?? null) : Object.keys(b).length > 0 ? b : null,
    warnings: b.warnings ?? null,
    ...(b.auth ? { auth: asAuth(b.auth) } : {}),
    ...(b.wrap_info ? { wrap_info: asWrapInfo(b.wrap_info) } : {}),
    ...(b.mount_type ? { mount_type: b.mount_type } : {}),
  };
}

function secretRows(secret: Secret): [string, unknown][] {
  const rows: [string, unknown][] = [];
  if (secret.lease_duration > 0) {
    if (secret.lease_id) {
      rows.push(['lease_id', secret.lease_id], ['lease_duration', humanDuration(secret.lease_duration)], ['lease_renewable', secret.renewable]);
    } else {
      // A lease without an id is a refresh hint (the generic secret store's ttl), as vault shows it.
      rows.push(['refresh_interval', humanDuration(secret.lease_duration)]);
    }
  }
  const a = secret.auth;
  if (a) {
    rows.push(
      ['token', a.client_token],
      ['token_accessor', a.accessor],
      // A root token never expires.
      ['token_duration', a.lease_duration === 0 ? '∞' : humanDuration(a.lease_duration)],
      ['token_renewable', a.renewable],
      ['token_policies', goQuoted(a.token_policies)],
      ['identity_policies', goQuoted(a.identity_policies)],
      ['policies', goQuoted(a.policies)],
    );
    for (const k of Object.keys(a.metadata ?? {}).sort()) rows.push([`token_meta_${k}`, a.metadata![k]]);
  }
  const data = secret.data ?? {};
  for (const k of Object.keys(data).sort()) rows.push([k, durationOr(k, data[k])]);
  const w = secret.wrap_info;
  if (w) {
    // vault's own row names for a wrapped answer, colons included.
    rows.push(
      ['wrapping_token:', w.token],
      ['wrapping_accessor:', w.accessor],
      ['wrapping_token_ttl:', humanDuration(w.ttl)],
      ['wrapping_token_creation_time:', w.creation_time],
      ['wrapping_token_creation_path:', w.creation_path],
    );
    if (w.wrapped_accessor) rows.push(['wrapped_accessor:', w.wrapped_accessor]);
  }
  return rows;
}

/** JSON indented by two spaces (Go's MarshalIndent), or YAML with sorted keys and unindented lists (ghodss/yaml's). */
function serialized(format: 'json' | 'yaml', value: unknown): string {
  if (format === 'json') return JSON.stringify(value ?? null, null, 2);
  // Required when first asked for: the server loads every CLI module, and has no use for YAML.
  const YAML = require('yaml') as typeof import('yaml');
  return YAML.stringify(value ?? null, { sortMapEntries: true, indentSeq: false }).trim();
}

/** A response as `vault read` prints it on standard output (warnings go to standard error: see warningsOf). */
export function render(format: OutputFormat, body: unknown): string {
  const secret = asSecret(body);
  if (format !== 'table') return `${serialized(format, secret)}\n`;
  const rows = secretRows(secret);
  return rows.length > 0 ? table(rows) : '';
}

/** The response's warnings as vault prints them above a table, or '' when there are none. */
export function warningsOf(body: unknown): string {
  const warnings = asSecret(body).warnings ?? [];
  return warnings.length > 0 ? `WARNING! The following warnings were returned from the server:\n\n${warnings.map((w) => `  * ${w}\n\n`).join('')}` : '';
}

/** Output that is not a response envelope (vault's OutputData): JSON or YAML of the value, or the command's own table. */
export function renderData(format: OutputFormat, value: unknown, tableText: () => string): string {
  return format === 'table' ? tableText() : `${serialized(format, value)}\n`;
}

/** A list response: sorted keys under a header, or the keys as a JSON or YAML list. */
export function renderList(format: OutputFormat, body: unknown): string {
  const keys = [...((asSecret(body).data?.keys as string[] | undefined) ?? [])].sort();
  return renderData(format, keys, () => `Keys\n----\n${keys.map((k) => `${k}\n`).join('')}`);
}

/** Auth fields `-field` reads from the auth block (vault's RawField); list fields read [] when absent. */
const AUTH_FIELDS: Readonly<Record<string, (a: SecretAuth) => unknown>> = {
  token: (a) => a.client_token,
  token_accessor: (a) => a.accessor,
  token_duration: (a) => a.lease_duration,
  token_renewable: (a) => a.renewable,
  token_policies: (a) => a.token_policies ?? [],
  identity_policies: (a) => a.identity_policies ?? [],
  policies: (a) => a.policies ?? [],
};

/** Fields `-field` reads from a wrapped answer's wrap_info (vault's RawField). */
const WRAP_FIELDS: Readonly<Record<string, (w: WrapInfo) => unknown>> = {
  wrapping_token: (w) => w.token,
  wrapping_accessor: (w) => w.accessor,
  wrapping_token_ttl: (w) => w.ttl,
  wrapping_token_creation_time: (w) => w.creation_time,
  wrapping_token_creation_path: (w) => w.creation_path,
  wrapped_accessor: (w) => w.wrapped_accessor,
};

const ENVELOPE_FIELDS: Readonly<Record<string, (s: Secret) => unknown>> = {
  lease_duration: (s) => s.lease_duration,
  lease_id: (s) => s.lease_id,
  request_id: (s) => s.request_id,
  renewable: (s) => s.renewable,
  refresh_interval: (s) => s.lease_duration,
  data: (s) => s.data?.data ?? s.data,
};

/**
 * The value `-field=NAME` picks, as vault's RawField does: from the auth block when there is one
 * (`token`, `token_accessor`, …), else the envelope's own fields, else `data[NAME]`. Undefined when
 * the response has no such field.
 */
export function fieldOf(body: unknown, field: string): unknown {
  const secret = asSecret(body);
  const fromWrap = secret.wrap_info ? WRAP_FIELDS[field] : undefined;
  if (fromWrap) return fromWrap(secret.wrap_info!);
  const fromAuth = secret.auth ? AUTH_FIELDS[field] : undefined;
  const fromEnvelope = secret.auth ? undefined : ENVELOPE_FIELDS[field];
  const value = fromAuth ? fromAuth(secret.auth!) : fromEnvelope ? fromEnvelope(secret) : secret.data?.[field];
  return value === null ? undefined : value;
}

/** One field's value: raw (Go's %v) for table, else JSON or YAML; no newline unless `terminal`. */
export function renderField(format: OutputFormat, value: unknown, terminal: boolean): string {
  const text = format === 'table' ? goValue(value) : serialized(format, value);
  return terminal ? `${text}\n` : text;
}
