/**
 * Fields Vault defines that a path does not honour. A request that sets one is refused with a 400
 * naming the field and why; one that sends it with a zero value asks for nothing and passes, as
 * clients (the vault CLI, hvac, Terraform) send `false`, `""`, `null` or `[]` for every setting
 * their user left alone.
 */
import { BadRequestError } from '../errors.js';
import { isUnset, parseBool } from './fields.js';

/**
 * Whether a value asks for nothing: unset, or a zero value (Go's, as Vault reads a field it was
 * not given) in any spelling Vault's weak typing accepts (`false`, `"false"`, `0`, `"0"`, `[]`, `{}`).
 */
export function asksNothing(value: unknown): boolean {
  if (isUnset(value) || value === 0) return true;
  if (Array.isArray(value)) return value.length === 0;
  if (typeof value === 'object') return Object.keys(value as object).length === 0;
  try {
    return parseBool(value) === false;
  } catch {
    return false;
  }
}

/**
 * 400 for the first refused field `data` sets (in name order, so the answer does not depend on
 * the order the client wrote its fields in); `prefix` names the object they sit in (`config: `).
 */
export function refuseUnhonoured(refused: Readonly<Record<string, string>>, data: Readonly<Record<string, unknown>>, prefix = ''): void {
  for (const name of Object.keys(data).sort()) {
    if (Object.hasOwn(refused, name) && !asksNothing(data[name])) {
      throw new BadRequestError(`${prefix}field "${name}" is not supported here: ${refused[name]}`);
    }
  }
}
