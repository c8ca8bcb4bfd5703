/**
 * Each enabled device's entry for a request or response: the device as the broker holds it (its
 * salt's HMAC and its options), the entry formatted for it, and the request data hashed once per
 * device for both of a request's entries.
 */
import type { AuditDevice } from './device.js';
import type { DeviceOrigin } from './rules.js';
import {
  formatRequestEntry,
  formatResponseEntry,
  responseDataSource,
  type AuditEntry,
  type AuditResponseInput,
  type EntryFormat,
  EncodedJson,
} from './entry.js';
import { hashToJsonRuns } from './hash-structure.js';
import { AuditHmac, type HmacKernel } from './salt.js';
import { JsonText } from '../framework/json-text.js';

/** A device as `sys/audit` lists it. */
export interface AuditDeviceInfo {
  /** With a trailing slash: `file/`. */
  readonly path: string;
  readonly type: string;
  readonly description: string;
  readonly options: Readonly<Record<string, string>>;
  readonly local: boolean;
}

/** A device as the table stores it. */
export interface AuditTableEntry extends AuditDeviceInfo {
  readonly uuid: string;
  /** Absent from entries written before devices could be declared: those were created through the API. */
  readonly origin?: DeviceOrigin;
}

/** An open device with what formatting its entries takes. */
export interface LiveDevice {
  readonly entry: AuditTableEntry;
  readonly salt: string;
  readonly device: AuditDevice;
  readonly format: EntryFormat;
}

/**
 * One request's hashed data per device, made for its request entry and reused by its response
 * entry (which records the request again): a large body is hashed once per device, not twice.
 */
export class AuditMemo {
  readonly requestData = new Map<LiveDevice, JsonText | Promise<JsonText>>();
  /** Each device's format for this request, with an HMAC that hashes a value seen again (the token, in both entries) once. */
  private readonly formats = new Map<LiveDevice, EntryFormat>();

  formatFor(d: LiveDevice): EntryFormat {
    let format = this.formats.get(d);
    if (!format) {
      format = d.format.hmac ? { ...d.format, hmac: d.format.hmac.remembering() } : d.format;
      this.formats.set(d, format);
    }
    return format;
  }
}

/** The live form of a table entry: its device and its salt's HMAC (none when it logs raw). */
export function live(entry: AuditTableEntry, salt: string, device: AuditDevice, kernel: HmacKernel | undefined): LiveDevice {
  const settings = device.settings;
  return {
    entry,
    salt,
    device,
    format: {
      ...(settings.logRaw ? {} : { hmac: new AuditHmac(salt, kernel) }),
      hmacAccessor: settings.hmacAccessor,
      elideListResponses: settings.elideListResponses,
    },
  };
}

/** One device's entry: at once when its data fits a slice of hashing, else a promise of it. */
export function entryFor(kind: 'request' | 'response', d: LiveDevice, input: AuditResponseInput, time: Date, memo: AuditMemo | undefined): AuditEntry | Promise<AuditEntry> {
  const format = memo ? memo.formatFor(d) : d.format;
  const hmac = format.hmac;
  const request = input.request.data;
  let requestData: JsonText | Promise<JsonText> | undefined;
  if (request) {
    requestData = memo?.requestData.get(d);
    if (requestData === undefined) {
      requestData = hashedText(hashToJsonRuns(request, hmac, input.nonHmacRequestKeys));
      memo?.requestData.set(d, requestData);
    }
  }
  const source = kind === 'response' ? responseDataSource(input, format) : undefined;
  const responseData = source ? hashedText(hashToJsonRuns(source, hmac, input.nonHmacResponseKeys)) : undefined;
  const build = (requestHashed: JsonText | undefined, responseHashed: JsonText | undefined): AuditEntry => {
    const hashed = {
      ...(requestHashed ? { requestData: requestHashed } : {}),
      ...(responseHashed ? { responseData: responseHashed } : {}),
    };
    return kind === 'request' ? formatRequestEntry(input, format, time, hashed) : formatResponseEntry(input, format, time, hashed);
  };
  if (requestData instanceof Promise || responseData instanceof Promise) {
    return Promise.all([requestData, responseData]).then(([requestHashed, responseHashed]) => build(requestHashed, responseHashed));
  }
  return build(requestData, responseData);
}

/**
 * Hashed data's text as an entry holds it (request and response data are objects, never left
 * out). Data hashed in slices is large, and comes as the bytes its runs were encoded to as the pass
 * made them.
 */
function hashedText(runs: string[] | undefined | Promise<Buffer[] | undefined>): JsonText | Promise<JsonText> {
  if (runs instanceof Promise) return runs.then((bytes) => (bytes ? new EncodedJson({ bytes }) : jsonText(undefined)));
  return jsonText(runs);
}

/** Text (and its bytes) a line carries as it is; anything else that reads the entry gets it parsed. */
function jsonText(runs: string[] | undefined): EncodedJson {
  return new EncodedJson(runs ?? ['null']);
}
