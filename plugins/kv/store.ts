/**
 * How a kv mount keeps its data, for both versions. Version 1 keeps one JSON object per path.
 * Version 2 keeps, per path, a metadata record (every version's times and state, the key's
 * settings) and one value per live version; the mount's settings sit in one config record.
 */
import { createHash } from 'node:crypto';
import { BadRequestError, ExactNumber, InternalError, exactBody, parseExact, stringifyExact, type BatchOp, type LogicalRequest, type Storage } from '../../sdk/index.js';

/** Version 1: the object written at `<path>`, under this prefix so it never meets version 2's records. */
export const V1_PREFIX = 'v1/';
/** Version 2: the mount's settings (max_versions, cas_required, delete_version_after). */
export const CONFIG_KEY = 'config';
/** Version 2: one metadata record per secret, by its path, so that listing a folder is listing storage. */
export const METADATA_PREFIX = 'metadata/';
/**
 * Version 2: the data of each version, at `<sha-256 of the path>/<version>`: a fixed-length name,
 * so no path, however long or deep, makes a version key longer or collides with another's.
 */
export const VERSIONS_PREFIX = 'versions/';

/** Vault's default when neither the key nor the mount sets max_versions. */
export const DEFAULT_MAX_VERSIONS = 10;

export interface KvConfig {
  /** 0: the default (10). */
  readonly maxVersions: number;
  readonly casRequired: boolean;
  /** Seconds; 0: versions are never deleted by age. */
  readonly deleteVersionAfter: number;
}

export const DEFAULT_CONFIG: KvConfig = { maxVersions: 0, casRequired: false, deleteVersionAfter: 0 };

export interface VersionState {
  /** RFC 3339 UTC. */
  readonly createdTime: string;
  /** RFC 3339 UTC, or "" while not deleted; may lie in the future (delete_version_after). */
  deletionTime: string;
  destroyed: boolean;
}

export interface KeyMetadata {
  readonly createdTime: string;
  updatedTime: string;
  currentVersion: number;
  /** The oldest version still kept (0 until max_versions first drops one), as Vault reports it. */
  oldestVersion: number;
  /** 0: the mount's setting. */
  maxVersions: number;
  casRequired: boolean;
  /** Seconds; 0: the mount's setting. */
  deleteVersionAfter: number;
  customMetadata: Record<string, string> | null;
  /** By version number. */
  versions: Record<string, VersionState>;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Numbers a client wrote with more digits than a double keeps are stored, and read, with every digit (as Vault keeps them). */
export function encodeJson(value: unknown): Uint8Array {
  return encoder.encode(stringifyExact(value));
}

export async function readJson<T>(storage: Storage, key: string): Promise<T | undefined> {
  const raw = await storage.get(key);
  if (raw === undefined) return undefined;
  try {
    return parseExact(decoder.decode(raw)) as T;
  } catch {
    throw new InternalError(`kv: the record at ${key} is not JSON`);
  }
}

/**
 * A secret's path as a client gives it: not empty, and not ending in "/" (that names a folder,
 * which only LIST reads).
 */
export function secretPath(path: string): string {
  if (path === '' || path.endsWith('/')) throw new BadRequestError(`invalid secret path "${path}": a secret's path must not be empty or end in "/"`);
  return path;
}

export function versionKey(path: string, version: number): string {
  return `${VERSIONS_PREFIX}${createHash('sha256').update(path).digest('hex')}/${version}`;
}

export async function readConfig(storage: Storage): Promise<KvConfig> {
  return { ...DEFAULT_CONFIG, ...(await readJson<Partial<KvConfig>>(storage, CONFIG_KEY)) };
}

/**
 * The mount's settings as last read or written here. Every write of a version reads them, and with
 * several workers each read is a round trip to the process that owns the store; they change only
 * through `config`, here or (HA, another worker) reported through `forget`.
 */
export class KvConfigCache {
  private cached: KvConfig | undefined;
  /** Bumped by every change: a read that started before one does not keep what it read. */
  private generation = 0;

  constructor(private readonly storage: Storage) {}

  async get(): Promise<KvConfig> {
    if (this.cached) return this.cached;
    const generation = this.generation;
    const config = await readConfig(this.storage);
    if (generation === this.generation) this.cached = config;
    return config;
  }

  /** Stores `next` and keeps it. */
  async put(next: KvConfig): Promise<void> {
    this.forget();
    await this.storage.put(CONFIG_KEY, encodeJson(next));
    this.generation++;
    this.cached = next;
  }

  /** The stored settings changed elsewhere (another node or worker, a restore): read them again next time. */
  forget(): void {
    this.generation++;
    this.cached = undefined;
  }
}

export function readMetadata(storage: Storage, path: string): Promise<KeyMetadata | undefined> {
  return readJson<KeyMetadata>(storage, METADATA_PREFIX + path);
}

export function putMetadata(path: string, meta: KeyMetadata): BatchOp {
  return { type: 'put', key: METADATA_PREFIX + path, value: encodeJson(meta) };
}

/** The data of one version, or undefined when it was destroyed or trimmed. */
export async function readVersion(storage: Storage, path: string, version: number): Promise<Record<string, unknown> | undefined> {
  return (await readJson<{ data: Record<string, unknown> }>(storage, versionKey(path, version)))?.data;
}

export function putVersion(path: string, version: number, data: Record<string, unknown>): BatchOp {
  return { type: 'put', key: versionKey(path, version), value: encodeJson({ data }) };
}

/** A fresh metadata record for a secret first written (or configured) at `now`. */
export function newMetadata(now: string): KeyMetadata {
  return {
    createdTime: now,
    updatedTime: now,
    currentVersion: 0,
    oldestVersion: 0,
    maxVersions: 0,
    casRequired: false,
    deleteVersionAfter: 0,
    customMetadata: null,
    versions: {},
  };
}

/** Whether a version reads as gone: destroyed, or deleted at a time that has come. */
export function isGone(state: VersionState, now: Date): boolean {
  return state.destroyed || (state.deletionTime !== '' && Date.parse(state.deletionTime) <= now.getTime());
}

/** The version metadata as every data answer shows it. */
export function versionInfo(meta: KeyMetadata, version: number): Record<string, unknown> {
  const state = meta.versions[String(version)]!;
  return {
    created_time: state.createdTime,
    custom_metadata: meta.customMetadata,
    deletion_time: state.deletionTime,
    destroyed: state.destroyed,
    version,
  };
}

/**
 * One version of a secret as a read sees it (0: the current one): its metadata, and its data unless
 * it is deleted or destroyed (then `data` is undefined). Undefined when the secret or the version
 * does not exist.
 */
export async function readSecretVersion(
  storage: Storage,
  rawPath: string,
  requested: number,
  now: Date,
): Promise<{ metadata: Record<string, unknown>; data: Record<string, unknown> | undefined } | undefined> {
  const path = secretPath(rawPath);
  const meta = await readMetadata(storage, path);
  if (!meta) return undefined;
  const version = requested || meta.currentVersion;
  const state = meta.versions[String(version)];
  if (!state) return undefined;
  const metadata = versionInfo(meta, version);
  if (isGone(state, now)) return { metadata, data: undefined };
  const data = await readVersion(storage, path, version);
  if (!data) throw new InternalError(`kv: version ${version} of a secret has metadata but no data`);
  return { metadata, data };
}

/**
 * Vault's limits on custom_metadata: at most 64 pairs, keys up to 128 bytes, values up to 512
 * bytes, every value a string (numbers and booleans are taken as their text).
 */
export function parseCustomMetadata(raw: Record<string, unknown>): Record<string, string> {
  const entries = Object.entries(raw);
  if (entries.length > 64) throw new BadRequestError(`custom_metadata: at most 64 keys, got ${entries.length}`);
  const out: Record<string, string> = {};
  for (const [key, value] of entries) {
    if (key === '') throw new BadRequestError('custom_metadata: a key must not be empty');
    if (Buffer.byteLength(key) > 128) throw new BadRequestError(`custom_metadata: key "${key.slice(0, 32)}…" is longer than 128 bytes`);
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean' && !(value instanceof ExactNumber)) {
      throw new BadRequestError(`custom_metadata: the value of "${key}" must be a string`);
    }
    const text = value instanceof ExactNumber ? value.text : String(value);
    if (Buffer.byteLength(text) > 512) throw new BadRequestError(`custom_metadata: the value of "${key}" is longer than 512 bytes`);
    setOwn(out, key, text);
  }
  return out;
}

/** Whether a value is a JSON object (not an array, and not an ExactNumber, which is a number). */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
}

/**
 * An object field of the request body with every digit of its numbers (exactBody), when the body
 * had a number JSON.parse would change; otherwise the field as the schema coerced it.
 */
export function exactObjectField(req: LogicalRequest, name: string, coerced: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  const exact = exactBody(req.data)?.[name];
  return isJsonObject(exact) ? exact : coerced;
}

/** Sets an own property, even one named `__proto__` (a client's key must never reach a prototype). */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** The time as every record and answer has it: RFC 3339 in UTC. */
export function timestamp(now: Date): string {
  return now.toISOString();
}
