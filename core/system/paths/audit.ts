/**
 * `sys/audit` (list), `sys/audit/:path` (enable, disable) and `sys/audit-hash/:path`: the audit
 * devices and the HMAC a device writes for a given value. Listing and changing devices is
 * root-protected (sudo), as in Vault; hashing is not. Devices are declared in the configuration
 * file; enabling one here is refused unless the file allows it (see core/audit/rules.ts).
 */
import { definePath, type AnyPathDefinition } from '../../framework/index.js';
import type { AuditBroker } from '../../audit/broker.js';
import { parseOptions } from './mount-config.js';

const pathField = {
  type: 'string',
  description: 'The path of the audit device, e.g. "file" (stored with a trailing slash).',
  required: true,
} as const;

export function auditPaths(getBroker: () => AuditBroker): AnyPathDefinition[] {
  const list = definePath({
    pattern: 'audit',
    fields: {},
    sudo: true,
    operations: {
      read: {
        summary: 'List the enabled audit devices.',
        handler: async () => {
          const data: Record<string, unknown> = {};
          for (const device of getBroker().list()) {
            data[device.path] = {
              type: device.type,
              description: device.description,
              options: device.options,
              local: device.local,
              path: device.path,
            };
          }
          return { data };
        },
      },
    },
    synopsis: 'List the enabled audit devices.',
    description:
      'Every audit device keyed by its path (with a trailing slash), with its type, description, options and ' +
      'whether it is local. An empty object when auditing is off.',
  });

  const device = definePath({
    pattern: 'audit/:path+',
    fields: {
      path: pathField,
      type: {
        type: 'string',
        description: 'The device type; required when enabling: "file", "socket" or "syslog".',
      },
      description: { type: 'string', description: 'A human-friendly description of the device.' },
      options: {
        type: 'map',
        description:
          'Device options (string values). file: file_path (required; "stdout" or "-" for standard output, ' +
          '"discard" for none; a regular file, never a symbolic link, outside plugin_directory and the storage directory), ' +
          'mode (octal, default "0600"; "0000" leaves the mode alone; never executable, setuid, setgid or sticky, ' +
          'or writable by group or others, and an existing file is only ever narrowed). socket: address ' +
          '(required; host:port, or a path for unix; one the configuration\'s api_audit_socket_allowlist lists), ' +
          'socket_type ("tcp", "udp" or "unix"; default "tcp"), ' +
          'write_timeout (default "2s", at most "1m"; a write that fails or stalls is retried once). syslog: facility (default "AUTH"), tag (default "keywarden"), ' +
          'socket_path (a unix socket; default the first of /dev/log, /var/run/syslog, /var/run/log; another only when ' +
          'api_audit_socket_allowlist lists it). Every type: format ' +
          '("json"), log_raw (default false: never turn on outside debugging, tokens and secrets are then ' +
          'written in the clear), hmac_accessor (default true), prefix (only when the configuration sets ' +
          'allow_audit_log_prefixing), elide_list_responses (default false).',
      },
      local: {
        type: 'bool',
        description: 'Accepted for compatibility: there is no replication, every device is local to this server.',
        default: false,
      },
    },
    sudo: true,
    operations: {
      update: {
        summary: 'Enable an audit device at the path.',
        handler: async (_req, input) => {
          await getBroker().enable(input.path, {
            type: input.type ?? '',
            description: input.description ?? '',
            options: parseOptions(input.options) ?? {},
            local: input.local,
          });
          return null;
        },
      },
      delete: {
        summary: 'Disable the audit device at the path.',
        handler: async (_req, input) => {
          await getBroker().disable(input.path);
          return null;
        },
      },
    },
    synopsis: 'Enable or disable an audit device.',
    description:
      'Audit devices are declared in the server\'s configuration file (audit "<type>" "<path>" { … }). POST is ' +
      'refused with 400 unless the configuration sets unsafe_allow_api_audit_creation; then it enables a device ' +
      'of the given type: its options are checked (400 naming the option), its sink is opened or connected at once ' +
      '(400 naming the target and the OS error when it cannot be), a random salt is created for its HMACs, and from ' +
      'then on every request and response is written to it. 409 when the path overlaps an enabled device. When ' +
      'devices are enabled and none can record a request, the request is refused with 503, except this DELETE by a ' +
      'token with sudo here, so a device whose sink is gone can be disabled (the server log names the device and the ' +
      'caller\'s accessor). DELETE disables an API-created device and deletes its salt, so its old hashes can no ' +
      'longer be reproduced; a declared device is refused with 400 (remove its stanza and reload instead); ' +
      'disabling a path with no device does nothing.',
  });

  const hash = definePath({
    pattern: 'audit-hash/:path+',
    fields: {
      path: pathField,
      input: {
        type: 'string',
        description: 'The value to hash, as it would appear in a request or response.',
        required: true,
        sensitive: true,
      },
    },
    operations: {
      update: {
        summary: 'Hash a value with the salt of the audit device.',
        handler: async (_req, input) => ({ data: { hash: await getBroker().hash(input.path, input.input) } }),
      },
    },
    synopsis: 'The HMAC an audit device writes for a value.',
    description:
      'Returns "hmac-sha256:" followed by the hex HMAC-SHA256 of the input keyed with the device\'s salt: ' +
      'the same text the device writes in place of that value, so a known token or secret can be found in ' +
      'the log without the log holding it. 400 when no device is enabled at the path.',
  });

  return [list, device, hash];
}
