/**
 * The audit device seam: what every device type implements, and the options all types share
 * (Vault's `format`, `log_raw`, `hmac_accessor`, `prefix`, `elide_list_responses`).
 */
import { BadRequestError } from '../errors.js';
import { CoercionError, parseBool } from '../framework/fields.js';
import { entryBytes, type AuditEntry } from './entry.js';
import { PREFIX_REFUSED, type DeviceContext } from './rules.js';

export interface AuditDevice {
  readonly settings: DeviceSettings;
  /** Opens the sink. Throws BadRequestError naming the target and the OS error code when it cannot. */
  open(): Promise<void>;
  /** Resolves once the sink accepted the whole entry; rejects when it did not. */
  write(entry: AuditEntry): Promise<void>;
  /** Closes and opens the sink again, for log rotation (SIGHUP). */
  reopen(): Promise<void>;
  /** Waits for pending writes, then releases the sink; later writes are refused. */
  close(): Promise<void>;
}

/** The options every device type understands, parsed. */
export interface DeviceSettings {
  readonly format: 'json';
  /**
   * Write every value as it is, with no HMAC. Vault allows it and so do we, for debugging: tokens
   * and secrets then sit in the log in the clear, so the log must be guarded like the secrets.
   */
  readonly logRaw: boolean;
  readonly hmacAccessor: boolean;
  /**
   * Written before each JSON line (e.g. for a log shipper's routing). Free text the server writes
   * first on every line is how HCSEC-2025-14 made a log file a script, so it is refused unless the
   * configuration sets `allow_audit_log_prefixing`.
   */
  readonly prefix: string;
  readonly elideListResponses: boolean;
}

export const COMMON_OPTIONS = ['format', 'log_raw', 'hmac_accessor', 'prefix', 'elide_list_responses'] as const;

/** Parses the shared options; a device type passes the names of its own options so unknown ones are refused. */
export function parseCommonOptions(options: Readonly<Record<string, string>>, ownOptions: readonly string[], context: DeviceContext): DeviceSettings {
  const known = new Set<string>([...COMMON_OPTIONS, ...ownOptions]);
  const unknown = Object.keys(options).filter((key) => !known.has(key)).sort();
  if (unknown.length > 0) {
    throw new BadRequestError(
      `unknown audit device option(s) ${unknown.map((k) => `"${k}"`).join(', ')}; accepted: ${[...known].sort().join(', ')}`,
    );
  }
  for (const [key, value] of Object.entries(options)) {
    if (typeof value !== 'string') throw new BadRequestError(`audit device option "${key}" must be a string`);
  }
  // Present at all, even empty, as OpenBao decides it.
  if (Object.hasOwn(options, 'prefix') && !context.rules.allowAuditLogPrefixing) {
    throw new BadRequestError(`audit device option "prefix": ${PREFIX_REFUSED} (the configuration file's allow_audit_log_prefixing is false)`);
  }
  const format = options.format ?? 'json';
  if (format !== 'json') throw new BadRequestError(`audit device option "format": unsupported format "${format}"; only "json" is supported`);
  return {
    format,
    logRaw: boolOption(options, 'log_raw', false),
    hmacAccessor: boolOption(options, 'hmac_accessor', true),
    prefix: options.prefix ?? '',
    elideListResponses: boolOption(options, 'elide_list_responses', false),
  };
}

/**
 * One entry as the line a device writes, as UTF-8 in parts (a large body's hashed data is its own
 * part, encoded once for both of a request's entries): `head` (a syslog header), the prefix, the
 * JSON object, a newline.
 */
export function serializeEntry(entry: AuditEntry, settings: DeviceSettings, head = ''): Buffer[] {
  return entryBytes(entry, `${head}${settings.prefix}`, '\n');
}

/** A line in one Buffer, for a sink that sends each entry alone (a datagram). */
export function oneBuffer(parts: readonly Buffer[]): Buffer {
  return parts.length === 1 ? parts[0]! : Buffer.concat(parts);
}

/** Go's ParseBool vocabulary, as Vault parses these options; "" means the default. */
function boolOption(options: Readonly<Record<string, string>>, name: string, fallback: boolean): boolean {
  const raw = options[name];
  if (raw === undefined || raw === '') return fallback;
  try {
    return parseBool(raw);
  } catch (err) {
    if (err instanceof CoercionError) throw new BadRequestError(`audit device option "${name}": ${err.message}`);
    throw err;
  }
}
