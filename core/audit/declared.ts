/**
 * What applying the configuration's `audit` stanzas to the device table means, decided before
 * anything changes (https://openbao.org/docs/configuration/audit): a declared device missing from
 * the table is enabled; one there must be exactly as declared, since a device is never modified in
 * place; a declared device whose stanza is gone is disabled; an API-created device is never touched,
 * and a stanza may not take its path.
 */
import { UnavailableError } from '../errors.js';
import type { DeclaredAuditDevice, DeviceOrigin } from './rules.js';

/** A device of the table, as far as the plan needs it. */
export interface EnabledDevice {
  readonly path: string;
  readonly type: string;
  readonly description: string;
  readonly options: Readonly<Record<string, string>>;
  readonly local: boolean;
  readonly origin?: DeviceOrigin;
}

export interface DeclaredPlan {
  /** Declared devices to enable, in stanza order. */
  readonly enable: readonly DeclaredAuditDevice[];
  /** Paths of declared devices whose stanza is gone. */
  readonly disable: readonly string[];
}

/**
 * @throws UnavailableError naming every stanza that differs from its device (and how) or collides
 *   with an API-created device, so the operator sees all of them at once.
 */
export function planDeclared(table: readonly EnabledDevice[], declared: readonly DeclaredAuditDevice[]): DeclaredPlan {
  const byPath = new Map(table.map((device) => [device.path, device]));
  const declaredPaths = new Set(declared.map((device) => device.path));
  const disable = table.filter((device) => device.origin === 'config' && !declaredPaths.has(device.path)).map((device) => device.path);
  const staying = table.filter((device) => !disable.includes(device.path));
  const problems: string[] = [];
  const enable: DeclaredAuditDevice[] = [];
  for (const device of declared) {
    const existing = byPath.get(device.path);
    if (!existing) {
      const overlap = staying.find((other) => other.path.startsWith(device.path) || device.path.startsWith(other.path));
      if (overlap) problems.push(`audit device "${device.path}" declared at ${device.declaredAt} overlaps the ${originName(overlap)} device at "${overlap.path}"`);
      else enable.push(device);
    } else if (existing.origin !== 'config') {
      problems.push(
        `audit device "${device.path}" declared at ${device.declaredAt} collides with the API-created device at "${existing.path}": ` +
          `disable that one (DELETE sys/audit/${existing.path.slice(0, -1)}) before declaring it in the configuration`,
      );
    } else {
      const changes = differences(existing, device);
      if (changes.length > 0) {
        problems.push(
          `modifications to audit devices are not allowed: "${device.path}" declared at ${device.declaredAt} differs from the enabled device in ` +
            `${changes.join(', ')}; to change it, remove its stanza and reload (the device is disabled), then declare it again`,
        );
      }
    }
  }
  if (problems.length > 0) throw new UnavailableError(problems.join('; '));
  return { enable, disable };
}

/** How a stanza differs from its device: `type ("file" enabled, "socket" declared)`, `option "mode" (unset enabled, "0640" declared)`. */
function differences(enabled: EnabledDevice, declared: DeclaredAuditDevice): string[] {
  const changes: string[] = [];
  const differ = (what: string, a: unknown, b: unknown) => {
    if (a !== b) changes.push(`${what} (${shown(a)} enabled, ${shown(b)} declared)`);
  };
  differ('type', enabled.type, declared.type);
  differ('description', enabled.description, declared.description);
  differ('local', enabled.local, declared.local);
  const keys = [...new Set([...Object.keys(enabled.options), ...Object.keys(declared.options)])].sort();
  const option = (options: Readonly<Record<string, string>>, key: string) => (Object.hasOwn(options, key) ? options[key] : undefined);
  for (const key of keys) differ(`option "${key}"`, option(enabled.options, key), option(declared.options, key));
  return changes;
}

function shown(value: unknown): string {
  return value === undefined ? 'unset' : JSON.stringify(value);
}

function originName(device: EnabledDevice): string {
  return device.origin === 'config' ? 'declared' : 'API-created';
}
