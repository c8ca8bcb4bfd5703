/**
 * The audit broker: the table of enabled devices (persisted behind the barrier), each device's
 * salt, and the fan-out of every request and response entry to all devices.
 *
 * Blocking rule: when at least one device is enabled and none of them recorded an entry, logging
 * throws AuditUnavailableError and the host refuses the request — nothing is done unaudited.
 * One failing device among working ones is only logged.
 *
 * Devices come from two places (rules.ts says why): the configuration file's `audit` stanzas
 * (`declare`, on the active node after unseal and on SIGHUP) and, only when the configuration
 * allows it, `POST sys/audit/:path` (`enable`). Each table entry remembers which; the API cannot
 * disable a declared device, and a declared device can be changed only by removing its stanza.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { BadRequestError, ConflictError, UnavailableError } from '../errors.js';
import { systemClock, type Clock } from '../clock.js';
import { SerialQueue } from '../seal/serial.js';
import type { Storage } from '../../storage/storage.js';
import { deletePrefix } from '../../storage/view.js';
import type { AuditDevice } from './device.js';
import type { AuditInput, AuditResponseInput } from './entry.js';
import { AuditMemo, entryFor, live, type AuditDeviceInfo, type AuditTableEntry, type LiveDevice } from './device-entries.js';
import { AuditedHeaders } from './request-headers.js';
import { buildDevice, UnusableDevice } from './device-types.js';
import { identifiedHmac, newSalt, type HmacKernel } from './salt.js';
import { planDeclared } from './declared.js';
import {
  API_CREATION_REFUSED,
  CONFIG_DEVICE_DISABLE_REFUSED,
  DEFAULT_AUDIT_RULES,
  type AuditRules,
  type DeclaredAuditDevice,
  type DeviceOrigin,
} from './rules.js';

/** 503: devices are enabled and not one of them could record the entry. */
export class AuditUnavailableError extends UnavailableError {
  constructor() {
    super('no audit device could record the request');
  }
}

/** Storage key of the audit table, JSON `{ entries: AuditTableEntry[] }`: the devices to open at unseal. */
export const AUDIT_TABLE_KEY = 'core/audit';
const TABLE_KEY = AUDIT_TABLE_KEY;
/**
 * Each device's own storage, under its UUID rather than its path, so a path disabled and enabled
 * again gets a fresh salt and never inherits the old one.
 */
const deviceStoragePrefix = (uuid: string): string => `audit/${uuid}/`;
/** The salt's key in a device's storage (Vault's `salt.DefaultLocation`): the UUID string as UTF-8. */
const SALT_KEY = 'salt';

export interface EnableAuditInput {
  readonly type: string;
  readonly description?: string;
  readonly options?: Record<string, string>;
  readonly local?: boolean;
}


export { AuditMemo, type AuditDeviceInfo } from './device-entries.js';

/** A device disabled while an entry for it was being hashed: it neither recorded nor failed. */
const GONE = Symbol('device disabled meanwhile');

export class AuditBroker {
  private readonly devices = new Map<string, LiveDevice>();
  /** Changes to the table (load, enable, disable, declare, close) run one at a time. */
  private readonly mutation = new SerialQueue();
  /** The request headers entries record (`sys/config/auditing/request-headers`). */
  readonly headers: AuditedHeaders;

  /**
   * @param storage the barrier (or a view of it): the table and the salts are secrets' neighbours.
   * @param clock the time written into entries.
   * @param rules what devices may do (the configuration's); API creation is off by default.
   */
  constructor(
    private readonly storage: Storage,
    private readonly logger: Logger,
    private readonly clock: Clock = systemClock,
    private rules: AuditRules = DEFAULT_AUDIT_RULES,
    /** Hashes entries' strings in batches (the WASM core); node:crypto one by one without it. */
    private readonly kernel?: HmacKernel,
  ) {
    this.headers = new AuditedHeaders(storage);
  }

  /** New rules (SIGHUP): they apply to devices enabled from now on, and to every device at the next load. */
  configure(rules: AuditRules): void {
    this.rules = rules;
  }

  /**
   * Reads the table and opens every device. A device whose sink cannot be opened is logged and
   * kept: it retries on each write, and until it succeeds it counts as failing for the blocking rule.
   */
  async load(): Promise<void> {
    await this.mutation.run(async () => {
      await this.closeAll();
      await this.headers.load();
      for (const entry of await this.readTable()) {
        const salt = await this.readSalt(entry);
        let device: AuditDevice;
        try {
          // A stored device is held to today's rules: one created before them with, say, an
          // executable mode stays in the table but records nothing, so requests are refused
          // (never done unaudited) until it is disabled.
          device = buildDevice(entry.type, entry.options, { origin: entry.origin ?? 'api', rules: this.rules });
        } catch (err) {
          this.logger.error({ device: entry.path, type: entry.type, err: errorText(err) }, 'audit device could not be built');
          device = new UnusableDevice(`audit device "${entry.path}" could not be built: ${errorText(err)}`);
        }
        try {
          await device.open();
        } catch (err) {
          this.logger.error({ device: entry.path, type: entry.type, err: errorText(err) }, 'audit device could not be opened');
        }
        this.devices.set(entry.path, live(entry, salt, device, this.kernel));
      }
    });
  }

  /**
   * `POST sys/audit/:path`: 400 unless the configuration allows API creation; 409 when the path
   * overlaps an enabled device; 400 for an unknown type, options the rules refuse, or a sink that
   * cannot be opened.
   */
  async enable(rawPath: string, input: EnableAuditInput): Promise<void> {
    if (!this.rules.unsafeAllowApiAuditCreation) throw new BadRequestError(API_CREATION_REFUSED);
    if (!input.type) throw new BadRequestError('missing required field "type"');
    await this.mutation.run(() => this.add(normalizeAuditPath(rawPath), input, 'api'));
  }

  /**
   * `DELETE sys/audit/:path`: removes the device and its salt, so hashes it wrote can no longer be
   * reproduced. No-op when absent; 400 for a declared device (its stanza is what removes it).
   */
  async disable(rawPath: string): Promise<void> {
    await this.mutation.run(async () => {
      const path = normalizeAuditPath(rawPath);
      const found = this.devices.get(path);
      if (!found) return;
      if (found.entry.origin === 'config') throw new BadRequestError(CONFIG_DEVICE_DISABLE_REFUSED);
      await this.remove(path, found);
    });
  }

  /**
   * Makes the table match the configuration's stanzas: a declared device missing from the table is
   * enabled, a declared device whose stanza is gone is disabled (without needing it to work), and
   * one that is there must match its stanza. Nothing changes when a stanza differs from its device
   * or collides with an API-created one.
   * @throws UnavailableError naming every such device and what differs, or the device that could not be enabled.
   */
  async declare(declared: readonly DeclaredAuditDevice[]): Promise<void> {
    await this.mutation.run(async () => {
      const plan = planDeclared([...this.devices.values()].map((d) => d.entry), declared);
      for (const path of plan.disable) {
        await this.remove(path, this.devices.get(path)!);
        this.logger.info({ device: path }, 'audit device no longer in the configuration: disabled');
      }
      for (const device of plan.enable) {
        try {
          await this.add(device.path, device, 'config');
        } catch (err) {
          throw new UnavailableError(`audit device "${device.path}" declared at ${device.declaredAt} could not be enabled: ${errorText(err)}`);
        }
      }
    });
  }

  private async add(path: string, input: EnableAuditInput, origin: DeviceOrigin): Promise<void> {
    for (const existing of this.devices.keys()) {
      if (existing.startsWith(path) || path.startsWith(existing)) {
        throw new ConflictError(`path is already in use at ${existing}`);
      }
    }
    const options = { ...(input.options ?? {}) };
    const device = buildDevice(input.type, options, { origin, rules: this.rules });
    await device.open();

    const entry: AuditTableEntry = {
      path,
      type: input.type,
      description: input.description ?? '',
      options,
      local: input.local ?? false,
      uuid: randomUUID(),
      origin,
    };
    const salt = newSalt();
    try {
      await this.storage.put(deviceStoragePrefix(entry.uuid) + SALT_KEY, Buffer.from(salt, 'utf8'));
      this.devices.set(path, live(entry, salt, device, this.kernel));
      await this.persist();
    } catch (err) {
      this.devices.delete(path);
      await device.close().catch(() => undefined);
      await deletePrefix(this.storage, deviceStoragePrefix(entry.uuid)).catch(() => undefined);
      throw err;
    }
    this.logger.info({ device: path, type: entry.type, origin }, 'audit device enabled');
  }

  private async remove(path: string, found: LiveDevice): Promise<void> {
    this.devices.delete(path);
    try {
      await this.persist();
    } catch (err) {
      this.devices.set(path, found);
      throw err;
    }
    await found.device.close().catch((err: unknown) => {
      this.logger.warn({ device: path, err: errorText(err) }, 'audit device did not close cleanly');
    });
    await deletePrefix(this.storage, deviceStoragePrefix(found.entry.uuid));
    this.logger.info({ device: path, type: found.entry.type }, 'audit device disabled');
  }

  /** Every enabled device, sorted by path. */
  list(): AuditDeviceInfo[] {
    return [...this.devices.values()]
      .map(({ entry }) => ({
        path: entry.path,
        type: entry.type,
        description: entry.description,
        options: { ...entry.options },
        local: entry.local,
      }))
      .sort((a, b) => a.path.localeCompare(b.path));
  }

  /** `sys/audit-hash`: the HMAC the device at `path` writes for `input`. 400 when there is no such device. */
  async hash(rawPath: string, input: string): Promise<string> {
    const path = normalizeAuditPath(rawPath);
    const found = this.devices.get(path);
    if (!found) throw new BadRequestError(`no audit device at "${path}"`);
    return identifiedHmac(found.salt, input);
  }

  hasDevices(): boolean {
    return this.devices.size > 0;
  }

  /**
   * Records a request before it is handled; throws AuditUnavailableError when no device could.
   * `memo` (one per request) keeps the hashed request data for the response entry.
   */
  async logRequest(input: AuditInput, memo?: AuditMemo): Promise<void> {
    await this.broadcast('request', input, memo);
  }

  /** Records how a request ended; throws AuditUnavailableError when no device could. */
  async logResponse(input: AuditResponseInput, memo?: AuditMemo): Promise<void> {
    await this.broadcast('response', input, memo);
  }

  /** Rotation (SIGHUP): every device reopens its sink. A failure is logged; that device retries on its next write. */
  async reopen(): Promise<void> {
    await Promise.all(
      [...this.devices.values()].map((d) =>
        d.device.reopen().catch((err: unknown) => {
          this.logger.error({ device: d.entry.path, err: errorText(err) }, 'audit device could not be reopened');
        }),
      ),
    );
  }

  /** Closes every device (seal, shutdown); the table stays in storage for the next load. */
  async close(): Promise<void> {
    await this.mutation.run(() => this.closeAll());
    this.headers.clear();
  }

  /**
   * Formats one entry per device (each has its own salt and options) and writes them all. An entry
   * whose data is small is hashed at once and its write queued before anything is awaited, so a
   * device being disabled still records what was handed to it before it closes; a large one is
   * hashed in slices (hash-structure.ts), and a device disabled meanwhile is left out.
   */
  private async broadcast(kind: 'request' | 'response', input: AuditResponseInput, memo: AuditMemo | undefined): Promise<void> {
    if (this.devices.size === 0) return;
    const time = this.clock.now();
    const targets = [...this.devices.values()];
    const results = await Promise.allSettled(
      targets.map((d): Promise<void | typeof GONE> => {
        try {
          const entry = entryFor(kind, d, input, time, memo);
          if (!(entry instanceof Promise)) return d.device.write(entry);
          return entry.then<void | typeof GONE>((made) => (this.devices.get(d.entry.path) === d ? d.device.write(made) : GONE));
        } catch (err) {
          return Promise.reject(err);
        }
      }),
    );
    let recorded = 0;
    let failed = 0;
    results.forEach((result, i) => {
      if (result.status === 'fulfilled') {
        if (result.value !== GONE) recorded++;
      } else {
        failed++;
        // The error text only: an entry (even hashed) never goes to the server log.
        this.logger.error({ device: targets[i]!.entry.path, err: errorText(result.reason) }, 'audit device failed to record an entry');
      }
    });
    if (recorded === 0 && failed > 0) {
      this.logger.error({ devices: targets.length }, 'no audit device could record the request; refusing it');
      throw new AuditUnavailableError();
    }
  }

  private async readTable(): Promise<AuditTableEntry[]> {
    const raw = await this.storage.get(TABLE_KEY);
    if (!raw) return [];
    const parsed = JSON.parse(Buffer.from(raw).toString('utf8')) as { entries: AuditTableEntry[] };
    return parsed.entries;
  }

  /** The stored salt; one that went missing (a crash between salt and table writes) is replaced and said so. */
  private async readSalt(entry: AuditTableEntry): Promise<string> {
    const key = deviceStoragePrefix(entry.uuid) + SALT_KEY;
    const raw = await this.storage.get(key);
    if (raw && raw.length > 0) return Buffer.from(raw).toString('utf8');
    const salt = newSalt();
    await this.storage.put(key, Buffer.from(salt, 'utf8'));
    this.logger.warn({ device: entry.path }, 'audit device salt was missing; a new one was created and earlier hashes no longer match');
    return salt;
  }

  private async persist(): Promise<void> {
    const entries = [...this.devices.values()].map((d) => d.entry).sort((a, b) => a.path.localeCompare(b.path));
    await this.storage.put(TABLE_KEY, Buffer.from(JSON.stringify({ entries }), 'utf8'));
  }

  private async closeAll(): Promise<void> {
    const all = [...this.devices.values()];
    this.devices.clear();
    await Promise.all(
      all.map((d) =>
        d.device.close().catch((err: unknown) => {
          this.logger.warn({ device: d.entry.path, err: errorText(err) }, 'audit device did not close cleanly');
        }),
      ),
    );
  }
}

/** `file`, `/file/`, `file/` → `file/`; refuses empty, relative and odd segments. */
export function normalizeAuditPath(raw: string): string {
  const trimmed = raw.replace(/^\/+/, '').replace(/\/+$/, '');
  if (trimmed === '') throw new BadRequestError('audit device path must not be empty');
  for (const segment of trimmed.split('/')) {
    if (segment === '.' || segment === '..' || !/^[\w.-]+$/.test(segment)) {
      throw new BadRequestError(`invalid audit device path "${raw}": segments may hold letters, digits, "_", "-" and "."`);
    }
  }
  return `${trimmed}/`;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
