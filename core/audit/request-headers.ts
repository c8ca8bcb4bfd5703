/**
 * Which request headers audit entries record (`sys/config/auditing/request-headers`), each with
 * whether its values are HMAC'd. Kept behind the barrier like the audit table and, like it, read
 * again when another node of a cluster changes it.
 *
 * Names are stored lower-case (HTTP header names are case-insensitive; Node hands them over
 * lower-case). The headers that carry a token are always HMAC'd: recording one in the clear would
 * put a working credential in the log, so `hmac: false` is refused for them.
 */
import { BadRequestError } from '../errors.js';
import { SerialQueue } from '../seal/serial.js';
import type { Storage } from '../../storage/storage.js';

/** Storage key of the audited headers, JSON `{ headers: { [lower-case name]: { hmac } } }`. */
export const AUDITED_HEADERS_KEY = 'core/audited-headers';

/** Headers that carry a client token: recorded only as HMACs. */
const TOKEN_HEADERS = new Set(['x-vault-token', 'x-service-token', 'authorization', 'proxy-authorization', 'cookie']);

export interface HeaderSetting {
  readonly hmac: boolean;
}

/** A recorded header: its values as received and whether they are to be HMAC'd. */
export interface RecordedHeader {
  readonly values: readonly string[];
  readonly hmac: boolean;
}

export class AuditedHeaders {
  private settings = new Map<string, HeaderSetting>();
  /** Changes run one at a time, so two concurrent writes both land. */
  private readonly mutation = new SerialQueue();

  constructor(private readonly storage: Storage) {}

  /** Reads the configuration (after unseal, and when another node changed it). */
  async load(): Promise<void> {
    const raw = await this.storage.get(AUDITED_HEADERS_KEY);
    const next = new Map<string, HeaderSetting>();
    if (raw) {
      const parsed = JSON.parse(Buffer.from(raw).toString('utf8')) as { headers: Record<string, HeaderSetting> };
      for (const [name, setting] of Object.entries(parsed.headers)) next.set(name, { hmac: setting.hmac === true });
    }
    this.settings = next;
  }

  /** Forgets the configuration (seal): nothing is recorded until the next load. */
  clear(): void {
    this.settings = new Map();
  }

  /** Every audited header, by lower-case name. */
  list(): Record<string, HeaderSetting> {
    return Object.fromEntries([...this.settings.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => [k, { ...v }]));
  }

  get(name: string): HeaderSetting | undefined {
    const setting = this.settings.get(normalizeHeaderName(name));
    return setting ? { ...setting } : undefined;
  }

  /** Adds or changes a header; 400 for a name that is not a header name, or a token header in the clear. */
  async set(name: string, setting: HeaderSetting): Promise<void> {
    const key = normalizeHeaderName(name);
    if (TOKEN_HEADERS.has(key) && !setting.hmac) {
      throw new BadRequestError(`header "${key}" carries a token and can be audited only with "hmac": true`);
    }
    await this.mutation.run(async () => {
      const next = new Map(this.settings);
      next.set(key, { hmac: setting.hmac });
      await this.persist(next);
      this.settings = next;
    });
  }

  /** Stops recording a header; no-op when it was not recorded. */
  async delete(name: string): Promise<void> {
    const key = normalizeHeaderName(name);
    await this.mutation.run(async () => {
      if (!this.settings.has(key)) return;
      const next = new Map(this.settings);
      next.delete(key);
      await this.persist(next);
      this.settings = next;
    });
  }

  /** The configured headers a request carries, by lower-case name; undefined when there are none. */
  select(headers: Readonly<Record<string, string | string[] | undefined>>): Record<string, RecordedHeader> | undefined {
    if (this.settings.size === 0) return undefined;
    let out: Record<string, RecordedHeader> | undefined;
    for (const [name, value] of Object.entries(headers)) {
      if (value === undefined) continue;
      const setting = this.settings.get(name.toLowerCase());
      if (!setting) continue;
      out ??= {};
      out[name.toLowerCase()] = { values: Array.isArray(value) ? [...value] : [value], hmac: setting.hmac || TOKEN_HEADERS.has(name.toLowerCase()) };
    }
    return out;
  }

  private async persist(settings: ReadonlyMap<string, HeaderSetting>): Promise<void> {
    const headers = Object.fromEntries([...settings.entries()].sort(([a], [b]) => a.localeCompare(b)));
    await this.storage.put(AUDITED_HEADERS_KEY, Buffer.from(JSON.stringify({ headers }), 'utf8'));
  }
}

/** Lower-case; refuses what RFC 9110 does not allow in a field name. */
function normalizeHeaderName(name: string): string {
  if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) throw new BadRequestError(`"${name}" is not an HTTP header name`);
  return name.toLowerCase();
}
