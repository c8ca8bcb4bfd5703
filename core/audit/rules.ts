/**
 * What audit devices may do, decided by the configuration file and never by the API. An audit
 * device writes bytes the server chooses to a place its creator chooses, so creating one through
 * the API is a way to write files and reach sockets as the server's user: Vault's HCSEC-2025-14
 * (https://discuss.hashicorp.com/t/hcsec-2025-14-privileged-vault-operator-may-execute-code-on-the-underlying-host/76033)
 * and OpenBao's CVE-2025-54997 (https://github.com/openbao/openbao/security/advisories/GHSA-xp75-r577-cvhp).
 * As in OpenBao (https://openbao.org/docs/rfcs/config-audit-devices), devices are declared in the
 * configuration file; the API creates them only when the file says `unsafe_allow_api_audit_creation`,
 * and even then within the limits checked here.
 */
import { readlink, realpath } from 'node:fs/promises';
import { isIP } from 'node:net';
import path from 'node:path';
import { BadRequestError } from '../errors.js';

/** A device declared by an `audit "<type>" "<path>" { … }` stanza of the configuration file. */
export interface DeclaredAuditDevice {
  /** Normalized, with a trailing slash: `to-file/`. */
  readonly path: string;
  readonly type: string;
  readonly description: string;
  readonly local: boolean;
  readonly options: Readonly<Record<string, string>>;
  /** `file:line` of the stanza, for messages. */
  readonly declaredAt: string;
}

/** The audit settings of the configuration file. */
export interface AuditConfig {
  /** The declared devices, in the order of the files. */
  readonly devices: readonly DeclaredAuditDevice[];
  /** `unsafe_allow_api_audit_creation`: `POST sys/audit/:path` may create devices. */
  readonly unsafeAllowApiAuditCreation: boolean;
  /** `allow_audit_log_prefixing`: devices may take the `prefix` option. */
  readonly allowAuditLogPrefixing: boolean;
  /**
   * `api_audit_socket_allowlist`, normalized (see normalizeAllowedAddress): the only addresses
   * API-created `socket` devices may connect to, and the unix sockets API-created `syslog` devices
   * may name besides the platform's standard ones.
   */
  readonly apiAuditSocketAllowlist: readonly string[];
}

export const DEFAULT_AUDIT_CONFIG: AuditConfig = {
  devices: [],
  unsafeAllowApiAuditCreation: false,
  allowAuditLogPrefixing: false,
  apiAuditSocketAllowlist: [],
};

/** The rules devices are built under: the configuration's, and the directories no audit file may enter. */
export interface AuditRules {
  readonly unsafeAllowApiAuditCreation: boolean;
  readonly allowAuditLogPrefixing: boolean;
  readonly apiAuditSocketAllowlist: readonly string[];
  /** `plugin_directory`: no device writes there (Vault refuses it for every device). */
  readonly pluginDirectory?: string;
  /** The LevelDB directory: no API-created device writes there. */
  readonly dataDirectory?: string;
}

export const DEFAULT_AUDIT_RULES: AuditRules = {
  unsafeAllowApiAuditCreation: false,
  allowAuditLogPrefixing: false,
  apiAuditSocketAllowlist: [],
};

/**
 * Who made a device: `config` for a declared one (the operator wrote it, so it may name
 * `/dev/stdout` or a symbolic link), `api` for one created through `sys/audit` (stored tables
 * without the mark are API-created).
 */
export type DeviceOrigin = 'config' | 'api';

/** What a device is built with besides its options. */
export interface DeviceContext {
  readonly origin: DeviceOrigin;
  readonly rules: AuditRules;
}

/** OpenBao's texts for the refusals, so scripts written against it read the same errors. */
export const API_CREATION_REFUSED = 'cannot enable audit device via API; use declarative, config-based audit device management instead';
export const CONFIG_DEVICE_DISABLE_REFUSED = 'cannot disable configuration-managed audit device';
export const PREFIX_REFUSED = 'audit log prefixing is not allowed';

/**
 * Mode bits no audit file may get: setuid, setgid and sticky, execute for anyone, and write for
 * group or others. An executable audit file is how HCSEC-2025-14 turned log lines into code.
 */
export const FORBIDDEN_MODE_BITS = 0o7133;

/**
 * An allowlist entry or a device's target in the one form they are compared in: an absolute unix
 * socket path as written (normalized, never resolved through links), or `host:port` with the host
 * lower-cased and an IPv6 address in its canonical form in brackets. A host name is never
 * resolved: it matches only the same name.
 * @throws BadRequestError when the text is neither.
 */
export function normalizeAllowedAddress(raw: string): string {
  if (raw.startsWith('/')) return path.normalize(raw);
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]/\s]+)):(\d{1,5})$/.exec(raw);
  const port = match ? Number(match[3]) : NaN;
  if (!match || port < 1 || port > 65535) {
    throw new BadRequestError(`"${raw}" is neither host:port (with [addr]:port for IPv6) nor an absolute unix socket path`);
  }
  return hostPort(match[1] ?? match[2]!, port);
}

/** `host:port` as normalizeAllowedAddress writes it. */
export function hostPort(host: string, port: number): string {
  if (isIP(host) === 6) return `${new URL(`http://[${host}]/`).hostname}:${port}`;
  return `${host.toLowerCase()}:${port}`;
}

/**
 * Refuses an API-created `socket` device's target that the configuration does not list
 * (`target` as normalizeAllowedAddress writes it).
 */
export function checkApiSocketTarget(target: string, option: string, rules: AuditRules): void {
  if (rules.apiAuditSocketAllowlist.includes(target)) return;
  throw new BadRequestError(
    `audit device option "${option}": "${target}" is not in the configuration's api_audit_socket_allowlist; ` +
      'API-created devices connect only to addresses the configuration file lists',
  );
}

/** Refuses a `mode` with a forbidden bit (0 means "leave the mode alone" and passes). */
export function checkFileMode(mode: number, raw: string): void {
  if ((mode & FORBIDDEN_MODE_BITS) === 0) return;
  throw new BadRequestError(
    `audit device option "mode": "${raw}" is refused: an audit file may not be executable, setuid, setgid or sticky, ` +
      'or writable by group or others; use "0600", "0640" or "0644"',
  );
}

/**
 * Refuses an audit file inside a directory no device may write to, comparing real paths: the parent
 * directory is resolved through its symbolic links, so `..`, a linked parent or a relative path
 * cannot reach around the check. A declared device may follow a link at the file itself (the
 * operator wrote it), so where that link leads is checked too, even to a file not there yet; an
 * API-created device never follows one (file-device.ts opens it with O_NOFOLLOW).
 * @throws BadRequestError naming `file_path`; an unresolvable parent is reported with its OS error code.
 */
export async function checkFileLocation(filePath: string, context: DeviceContext): Promise<void> {
  const real = await realTarget(path.resolve(filePath), context.origin === 'config', filePath);
  const forbidden: Array<[string, string | undefined]> = [['plugin_directory', context.rules.pluginDirectory]];
  if (context.origin === 'api') forbidden.push(['the storage directory', context.rules.dataDirectory]);
  for (const [name, dir] of forbidden) {
    if (dir === undefined) continue;
    const realDir = await realpath(dir).catch(() => path.resolve(dir));
    if (real === realDir || real.startsWith(realDir.endsWith(path.sep) ? realDir : realDir + path.sep)) {
      throw new BadRequestError(`audit device option "file_path": "${filePath}" is inside ${name}; audit files may not be written there`);
    }
  }
}

/** Past the kernel's own limit of links in a row the open fails with ELOOP anyway. */
const MAX_LINK_HOPS = 40;

/**
 * Where writing to `absolute` lands: its parent resolved through every link, and, when
 * `followLinks`, the file itself followed link by link, also to a target that does not exist yet
 * (opening with O_CREAT would create it there).
 */
async function realTarget(absolute: string, followLinks: boolean, filePath: string, hops = 0): Promise<string> {
  const parent = await realpath(path.dirname(absolute)).catch(unresolvable(filePath));
  const candidate = path.join(parent, path.basename(absolute));
  if (!followLinks || hops >= MAX_LINK_HOPS) return candidate;
  const link = await readlink(candidate).catch(() => undefined);
  return link === undefined ? candidate : realTarget(path.resolve(parent, link), true, filePath, hops + 1);
}

function unresolvable(filePath: string): (err: unknown) => never {
  return (err) => {
    const code = (err as NodeJS.ErrnoException | undefined)?.code ?? String(err);
    throw new BadRequestError(`cannot open audit file "${filePath}": ${code}`);
  };
}
