/**
 * The device types `sys/audit` and the configuration's `audit` stanzas can name, and how a device
 * is built from its type, options and context.
 */
import { BadRequestError } from '../errors.js';
import type { AuditDevice, DeviceSettings } from './device.js';
import { FileAuditDevice } from './file-device.js';
import type { DeviceContext } from './rules.js';
import { SocketAuditDevice } from './socket-device.js';
import { SyslogAuditDevice } from './syslog-device.js';

/** Device types that can be enabled, by `type`; each validates its options when built. */
const DEVICE_TYPES: Readonly<Record<string, (options: Readonly<Record<string, string>>, context: DeviceContext) => AuditDevice>> = {
  file: (options, context) => FileAuditDevice.fromOptions(options, context),
  socket: (options, context) => SocketAuditDevice.fromOptions(options, context),
  syslog: (options, context) => SyslogAuditDevice.fromOptions(options, context),
};

/** Builds a device of `type`; 400 naming the type or the option that is refused. */
export function buildDevice(type: string, options: Readonly<Record<string, string>>, context: DeviceContext): AuditDevice {
  const factory = Object.hasOwn(DEVICE_TYPES, type) ? DEVICE_TYPES[type] : undefined;
  if (!factory) throw new BadRequestError(`unknown audit device type "${type}"; supported: ${Object.keys(DEVICE_TYPES).join(', ')}`);
  return factory(options, context);
}

/**
 * Checks a device's type and options under its context's rules without opening anything (the configuration
 * loader checks each stanza this way, so a mistake stops start-up with its file and line).
 * @throws BadRequestError naming the option and the problem.
 */
export function checkDeviceOptions(type: string, options: Readonly<Record<string, string>>, context: DeviceContext): void {
  buildDevice(type, options, context);
}

/**
 * Stands in for a stored device that can no longer be built (its type or options are refused now):
 * it keeps its place so requests are refused rather than done unaudited, until it is disabled.
 */
export class UnusableDevice implements AuditDevice {
  readonly settings: DeviceSettings = { format: 'json', logRaw: false, hmacAccessor: true, prefix: '', elideListResponses: false };

  constructor(private readonly reason: string) {}

  async open(): Promise<void> {}

  async write(): Promise<void> {
    throw new Error(this.reason);
  }

  async reopen(): Promise<void> {}

  async close(): Promise<void> {}
}
