/**
 * What the host hands the audit broker for each request and response, and the JSON entries built
 * from it in Vault's audit format (one object per line; request and response matched by
 * `request.id`). Every sensitive string is HMAC'd with the device's salt unless the device logs raw;
 * the input objects are never modified, the entry is a deep copy.
 */
import type { RecordedHeader } from './request-headers.js';
import { hashStructure } from './hash-structure.js';
import { utf8Of, type AuditHmac } from './salt.js';
import { JsonText } from '../framework/json-text.js';

export { hashStructure } from './hash-structure.js';

/** A request as the host saw it, with the caller's token resolved (`auth`) when there was one. */
export interface AuditInput {
  readonly request: {
    readonly id: string; readonly operation: string; readonly path: string;
    readonly data?: Readonly<Record<string, unknown>> | null;
    readonly clientToken?: string; readonly clientTokenAccessor?: string;
    readonly mountPoint?: string; readonly mountType?: string; readonly mountAccessor?: string;
    readonly remoteAddress?: string; readonly remotePort?: number;
    /** The audited request headers it carried (sys/config/auditing/request-headers), by lower-case name. */
    readonly headers?: Readonly<Record<string, RecordedHeader>>;
  };
  readonly auth?: {
    readonly clientToken?: string; readonly accessor?: string; readonly displayName?: string;
    readonly policies?: readonly string[]; readonly tokenPolicies?: readonly string[];
    readonly metadata?: Readonly<Record<string, string>>; readonly entityId?: string;
    readonly tokenType?: string; readonly tokenTtl?: number; readonly tokenIssueTime?: string;
    readonly policyResults?: { readonly allowed: boolean; readonly grantingPolicies: readonly string[] };
  };
  /** Mount's audit_non_hmac_request_keys / audit_non_hmac_response_keys. */
  readonly nonHmacRequestKeys?: readonly string[];
  readonly nonHmacResponseKeys?: readonly string[];
}

/** The request again, with what answering it produced. */
export interface AuditResponseInput extends AuditInput {
  readonly response?: {
    readonly data?: Readonly<Record<string, unknown>> | null;
    readonly warnings?: readonly string[] | null;
    /** The auth block a login/token-create returned, in Vault's JSON shape (client_token, accessor, policies, metadata, ...). */
    readonly auth?: Readonly<Record<string, unknown>> | null;
    readonly status?: number;
    /** The answer was wrapped: its wrap_info, in place of the data (which went into the wrapping token's cubbyhole). */
    readonly wrapInfo?: AuditWrapInfo;
  };
  readonly error?: string;
}

/** Vault's `wrap_info` as a response entry records it. */
export interface AuditWrapInfo {
  readonly token: string;
  readonly accessor: string;
  readonly ttl: number;
  readonly creation_time: string;
  readonly creation_path: string;
  readonly wrapped_accessor?: string;
}

/**
 * A request's and response's data already hashed for one device (hash-structure.ts, in slices),
 * so a large body is hashed once per device, without stalling the event loop, and reused by the
 * response entry, which records the request again.
 */
export interface HashedData {
  readonly requestData?: JsonText;
  readonly responseData?: JsonText;
}

/** How one device renders entries (from its options and salt). */
export interface EntryFormat {
  /** The device's HMAC. Absent when the device logs raw (`log_raw`): values are written as they are. */
  readonly hmac?: AuditHmac;
  /** `hmac_accessor`: hash token accessors as well (Vault's default). */
  readonly hmacAccessor: boolean;
  /** `elide_list_responses`: on list operations, write how many `keys` / `key_info` there were instead of them. */
  readonly elideListResponses: boolean;
}

/** The `auth` section: who made the request. */
export interface AuditAuthSection {
  client_token?: string;
  accessor?: string;
  display_name?: string;
  policies?: string[];
  token_policies?: string[];
  metadata?: Record<string, string>;
  entity_id?: string;
  token_type?: string;
  token_ttl?: number;
  token_issue_time?: string;
  policy_results?: {
    allowed: boolean;
    granting_policies?: Array<{ name: string; namespace_id: string; type: 'acl' }>;
  };
}

export interface AuditRequestSection {
  id?: string;
  operation?: string;
  mount_point?: string;
  mount_type?: string;
  mount_accessor?: string;
  client_token?: string;
  client_token_accessor?: string;
  path?: string;
  data?: Record<string, unknown> | JsonText;
  remote_address?: string;
  remote_port?: number;
  headers?: Record<string, string[]>;
}

export interface AuditResponseSection {
  mount_point?: string;
  mount_type?: string;
  mount_accessor?: string;
  auth?: Record<string, unknown>;
  data?: Record<string, unknown> | JsonText;
  warnings?: string[];
  wrap_info?: Record<string, unknown>;
}

export interface AuditRequestEntry {
  time: string;
  type: 'request';
  auth?: AuditAuthSection;
  request: AuditRequestSection;
}

export interface AuditResponseEntry {
  time: string;
  type: 'response';
  auth?: AuditAuthSection;
  request: AuditRequestSection;
  response?: AuditResponseSection;
  error?: string;
}

export type AuditEntry = AuditRequestEntry | AuditResponseEntry;

/** The entry written before a request is handled. */
export function formatRequestEntry(input: AuditInput, format: EntryFormat, time: Date, hashed: HashedData = {}): AuditRequestEntry {
  return withoutEmpty({
    time: time.toISOString(),
    type: 'request',
    auth: authSection(input.auth, format),
    request: requestSection(input, format, hashed),
  });
}

/** The entry written after a request was handled (or refused): the request once more, and its outcome. */
export function formatResponseEntry(input: AuditResponseInput, format: EntryFormat, time: Date, hashed: HashedData = {}): AuditResponseEntry {
  const hmac = format.hmac;
  return withoutEmpty({
    time: time.toISOString(),
    type: 'response',
    auth: authSection(input.auth, format),
    request: requestSection(input, format, hashed),
    response: responseSection(input, format, hashed),
    error: input.error !== undefined && input.error !== '' && hmac ? hmac.one(input.error) : input.error,
  });
}

function authSection(auth: AuditInput['auth'], format: EntryFormat): AuditAuthSection | undefined {
  if (!auth) return undefined;
  const results = auth.policyResults;
  return withoutEmpty({
    client_token: hashToken(auth.clientToken, format),
    accessor: hashAccessor(auth.accessor, format),
    display_name: auth.displayName,
    policies: auth.policies ? [...auth.policies] : undefined,
    token_policies: auth.tokenPolicies ? [...auth.tokenPolicies] : undefined,
    metadata: auth.metadata ? { ...auth.metadata } : undefined,
    entity_id: auth.entityId,
    token_type: auth.tokenType,
    token_ttl: auth.tokenTtl,
    token_issue_time: auth.tokenIssueTime,
    policy_results: results
      ? withoutEmpty({
          allowed: results.allowed,
          granting_policies: results.grantingPolicies.map((name) => ({ name, namespace_id: 'root', type: 'acl' as const })),
        })
      : undefined,
  });
}

function requestSection(input: AuditInput, format: EntryFormat, hashed: HashedData): AuditRequestSection {
  const req = input.request;
  return withoutEmpty({
    id: req.id,
    operation: req.operation,
    mount_point: req.mountPoint,
    mount_type: req.mountType,
    mount_accessor: req.mountAccessor,
    client_token: hashToken(req.clientToken, format),
    client_token_accessor: hashAccessor(req.clientTokenAccessor, format),
    path: req.path,
    data: req.data ? (hashed.requestData ?? (hashStructure(req.data, format.hmac, input.nonHmacRequestKeys) as Record<string, unknown>)) : undefined,
    remote_address: req.remoteAddress,
    remote_port: req.remotePort,
    headers: req.headers ? recordedHeaders(req.headers, format) : undefined,
  });
}

/** Each header's values, HMAC'd where its setting says so (and the device hashes at all: not with log_raw). */
function recordedHeaders(headers: Readonly<Record<string, RecordedHeader>>, format: EntryFormat): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [name, { values, hmac }] of Object.entries(headers)) {
    out[name] = values.map((value) => (hmac && format.hmac ? format.hmac.one(value) : value));
  }
  return out;
}

function responseSection(input: AuditResponseInput, format: EntryFormat, hashed: HashedData): AuditResponseSection | undefined {
  const resp = input.response;
  const data = responseDataSource(input, format);
  const section = withoutEmpty<AuditResponseSection>({
    mount_point: input.request.mountPoint,
    mount_type: input.request.mountType,
    mount_accessor: input.request.mountAccessor,
    auth: resp?.auth ? responseAuth(resp.auth, format) : undefined,
    data: data ? (hashed.responseData ?? (hashStructure(data, format.hmac, input.nonHmacResponseKeys) as Record<string, unknown>)) : undefined,
    warnings: resp?.warnings ? [...resp.warnings] : undefined,
    wrap_info: resp?.wrapInfo ? wrapInfoSection(resp.wrapInfo, format) : undefined,
  });
  return resp || Object.keys(section).length > 0 ? section : undefined;
}

/** A login's auth block: like Vault, only its token and accessor are hashed; policies and metadata stay readable. */
function responseAuth(auth: Readonly<Record<string, unknown>>, format: EntryFormat): Record<string, unknown> {
  const copy = hashStructure(auth, undefined) as Record<string, unknown>;
  if (typeof copy.client_token === 'string') copy.client_token = hashToken(copy.client_token, format);
  if (typeof copy.accessor === 'string') copy.accessor = hashAccessor(copy.accessor, format);
  return copy;
}

/**
 * What of a response's data the entry records, before hashing: the data itself, or, with
 * `elide_list_responses` on a list, the counts in place of the lists (nothing left to hash there).
 */
export function responseDataSource(input: AuditResponseInput, format: EntryFormat): Readonly<Record<string, unknown>> | undefined {
  const data = input.response?.data;
  if (!data) return undefined;
  if (!format.elideListResponses || input.request.operation !== 'list') return data;
  const elided: Record<string, unknown> = { ...data };
  if (Array.isArray(data.keys)) elided.keys = data.keys.length;
  const info = data.key_info;
  if (info !== null && typeof info === 'object' && !Array.isArray(info)) elided.key_info = Object.keys(info).length;
  return elided;
}

/** As Vault records it: the wrapping token always as its HMAC, the accessors as `hmac_accessor` says. */
function wrapInfoSection(info: AuditWrapInfo, format: EntryFormat): Record<string, unknown> {
  return withoutEmpty({
    token: hashToken(info.token, format),
    accessor: hashAccessor(info.accessor, format),
    ttl: info.ttl,
    creation_time: info.creation_time,
    creation_path: info.creation_path,
    wrapped_accessor: hashAccessor(info.wrapped_accessor, format),
  });
}

function hashToken(token: string | undefined, format: EntryFormat): string | undefined {
  return token && format.hmac ? format.hmac.one(token) : token;
}

function hashAccessor(accessor: string | undefined, format: EntryFormat): string | undefined {
  return accessor && format.hmac && format.hmacAccessor ? format.hmac.one(accessor) : accessor;
}

/** Go's `omitempty` as Vault's entry structs use it: unset, empty and zero fields are left out. */
function withoutEmpty<T extends object>(fields: T): T {
  const out: Record<string, unknown> = {};
  for (const key in fields) {
    const value: unknown = fields[key];
    if (value === undefined || value === null || value === '' || value === 0) continue;
    if (value instanceof JsonText) {
      // Hashed data is looked at by its length first, so that a large one's runs are not joined.
      if ((value instanceof EncodedJson && value.length !== 2) || value.text !== '{}') out[key] = value;
      continue;
    }
    if (Array.isArray(value) && value.length === 0) continue;
    if (typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 0) continue;
    out[key] = value;
  }
  return out as T;
}

/**
 * Hashed data's JSON text, held in the runs the HMAC pass made it in (hash-structure.ts), with its
 * UTF-8 bytes made once, a Buffer per run: a request's data appears in both of its entries, and a
 * batch's is the bulk of them, so it is encoded once and the lines carry the same bytes. The text
 * of a 100,000-item batch's data is 18 MB in some fifty runs; joined and encoded in one go it held
 * the event loop (bench/README.md, "Large requests"), so the runs are joined only when something
 * reads `text` (a device's line never does).
 *
 * Data hashed within one slice comes as text and is encoded when a line first needs its bytes.
 * Data hashed in slices comes as bytes, each run encoded by the pass as it was made, and holds no
 * text: what reads `text` or `pieces` (a device that does not write bytes) decodes it then.
 */
export class EncodedJson extends JsonText {
  private encoded: readonly Buffer[] | undefined;
  private readonly runs: readonly string[] | undefined;

  /**
   * @param runs the text in runs, or the runs' UTF-8 bytes (whose `length` then counts bytes: the
   *   same as characters for hashed data, which is ASCII unless a key or a raw value is not)
   */
  constructor(runs: readonly string[] | { readonly bytes: readonly Buffer[] }) {
    super(isText(runs) ? runs : decodedLater(runs.bytes), (text) => JSON.parse(text));
    if (isText(runs)) this.runs = runs;
    else this.encoded = runs.bytes;
  }

  /** The text's UTF-8, a Buffer per run. */
  get bytes(): readonly Buffer[] {
    return (this.encoded ??= this.runs!.map((run) => utf8Of(run)));
  }
}

const isText = (runs: readonly string[] | { readonly bytes: readonly Buffer[] }): runs is readonly string[] => Array.isArray(runs);

/** JsonText's lazy form of text held as bytes: their length, and the runs decoded only if read. */
function decodedLater(bytes: readonly Buffer[]): { length: number; pieces: () => string[] } {
  let length = 0;
  for (const run of bytes) length += run.length;
  return { length, pieces: () => bytes.map((run) => run.toString('utf8')) };
}

/**
 * An entry's JSON text, as `JSON.stringify` writes the same entry with its hashed data in place:
 * members in order, undefined ones left out. The hashed data goes in as the text it already is.
 */
export function entryJson(value: unknown): string {
  if (value instanceof JsonText) return value.text;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return JSON.stringify(value);
  let out = '{';
  for (const [key, member] of Object.entries(value)) {
    if (member === undefined) continue;
    out += `${out.length > 1 ? ',' : ''}${JSON.stringify(key)}:${entryJson(member)}`;
  }
  return `${out}}`;
}

/**
 * The UTF-8 of `head`, the entry's JSON text (as `entryJson` writes it) and `tail`, in parts: the
 * text around hashed data encoded here, the hashed data's own bytes (EncodedJson) as they are, so
 * a large body is neither encoded again nor copied into the line.
 */
export function entryBytes(entry: AuditEntry, head: string, tail: string): Buffer[] {
  const parts: Buffer[] = [];
  const text = { pending: head };
  writeParts(entry, parts, text);
  parts.push(Buffer.from(text.pending + tail, 'utf8'));
  return parts;
}

/** Hashed data shorter than this (UTF-16 code units) goes into the text around it: a Buffer of its own costs more than it saves. */
const OWN_PART_CHARS = 4096;

function writeParts(value: unknown, parts: Buffer[], text: { pending: string }): void {
  if (value instanceof EncodedJson && value.length >= OWN_PART_CHARS) {
    if (text.pending !== '') parts.push(Buffer.from(text.pending, 'utf8'));
    parts.push(...value.bytes);
    text.pending = '';
    return;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value) || value instanceof JsonText) {
    text.pending += entryJson(value);
    return;
  }
  let first = true;
  text.pending += '{';
  for (const [key, member] of Object.entries(value)) {
    if (member === undefined) continue;
    text.pending += `${first ? '' : ','}${memberName(key)}`;
    first = false;
    writeParts(member, parts, text);
  }
  text.pending += '}';
}

/** `"name":` for the names of an entry's own fields, made once; other keys (metadata, headers) as they come. */
const MEMBER_NAMES = new Map(
  [
    'time', 'type', 'auth', 'request', 'response', 'error', 'client_token', 'accessor', 'display_name', 'policies',
    'token_policies', 'metadata', 'entity_id', 'token_type', 'token_ttl', 'token_issue_time', 'policy_results', 'allowed',
    'granting_policies', 'id', 'operation', 'mount_point', 'mount_type', 'mount_accessor', 'client_token_accessor', 'path',
    'data', 'remote_address', 'remote_port', 'headers', 'warnings', 'wrap_info', 'token', 'ttl', 'creation_time',
    'creation_path', 'wrapped_accessor',
  ].map((name) => [name, `${JSON.stringify(name)}:`]),
);

function memberName(key: string): string {
  return MEMBER_NAMES.get(key) ?? `${JSON.stringify(key)}:`;
}
