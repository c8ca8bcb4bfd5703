/**
 * Compiles a path's field specs to one ajv validator (once, when a mount's backend is built): ajv
 * checks `required` fields and fills in defaults (`useDefaults`: a fresh copy of an object default
 * for each request, https://ajv.js.org/guide/modifying-data.html#assigning-defaults), and the
 * `kwField` keyword coerces each value in place by the field's type, then checks its allowed values
 * and bounds.
 *
 * Coercion is that keyword's, not ajv's `coerceTypes` (https://ajv.js.org/coercion.html): Vault's
 * weak typing is Go's, and ajv's rules are JSON Schema's. ajv reads `"t"`, `"T"` or `"TRUE"` as no
 * boolean where Go's strconv.ParseBool (and so Vault) takes them; it has no durations (`"1h30m"`
 * is seconds), no comma-separated lists (`"a,b"` is two items), no header maps and no Go integer
 * bounds; and it turns `null` into `0` or `""` where Vault means "unset". So each field type has
 * one coercion function (fields.ts), and ajv compiles the call to it into the validator.
 */
import { Ajv, type ValidateFunction, type ErrorObject } from 'ajv';
import { BadRequestError } from '../errors.js';
import { CoercionError, coerceField, isUnset, type FieldSpec, type FieldSpecs } from './fields.js';

const ajv = new Ajv({ allErrors: false, strict: true, useDefaults: true, coerceTypes: false });

ajv.addKeyword({
  keyword: 'kwField',
  modifying: true,
  errors: true,
  schemaType: 'object',
  validate: function kwField(
    this: unknown,
    spec: FieldSpec,
    data: unknown,
    _parentSchema?: unknown,
    cxt?: { parentData: Record<string, unknown>; parentDataProperty: string | number },
  ): boolean {
    // A default ajv filled in is already of the field's type and within its bounds; so is any
    // value the same as it (only primitives compare equal: an object default is a fresh copy).
    if (data === spec.default) return true;
    const self = kwField as unknown as { errors: Partial<ErrorObject>[] | null };
    try {
      let value: unknown;
      try {
        value = coerceField(spec, data);
      } catch (err) {
        // Coercion messages quote the value; a sensitive field's value (a key, a plaintext) stays out of them.
        if (err instanceof CoercionError && spec.sensitive) throw new CoercionError(`expected a value of type ${spec.type}`);
        throw err;
      }
      checkConstraints(spec, value);
      if (cxt) cxt.parentData[cxt.parentDataProperty] = value;
      return true;
    } catch (err) {
      if (!(err instanceof CoercionError)) throw err;
      self.errors = [{ keyword: 'kwField', message: err.message, params: {} }];
      return false;
    }
  },
});

function checkConstraints(spec: FieldSpec, value: unknown): void {
  if (spec.allowedValues && typeof value === 'string' && !spec.allowedValues.includes(value)) {
    throw new CoercionError(`must be one of ${spec.allowedValues.map((v) => `"${v}"`).join(', ')}`);
  }
  if (typeof value === 'number') {
    if (spec.minimum !== undefined && value < spec.minimum) throw new CoercionError(`must be at least ${spec.minimum}`);
    if (spec.maximum !== undefined && value > spec.maximum) throw new CoercionError(`must be at most ${spec.maximum}`);
  }
}

/** A compiled field validator for one path. */
export interface CompiledFields {
  /**
   * Returns the handler input: given fields coerced, defaults applied, unset fields absent, and
   * the names of parameters the path does not know. `params` (the path's segments) win over
   * fields of `raw` of the same name. Throws BadRequestError naming the field.
   */
  parse(raw: Readonly<Record<string, unknown>>, params?: Readonly<Record<string, string>>): { input: Record<string, unknown>; unknown: string[] };
}

export function compileFields(fields: FieldSpecs): CompiledFields {
  const properties: Record<string, object> = {};
  const required: string[] = [];
  for (const [name, spec] of Object.entries(fields)) {
    // ajv fills defaults in before it checks `required`, which would then never fail.
    if (spec.required && spec.default !== undefined) throw new Error(`field "${name}" is both required and defaulted`);
    properties[name] = spec.default === undefined ? { kwField: spec } : { kwField: spec, default: spec.default };
    if (spec.required) required.push(name);
  }
  const validate: ValidateFunction = ajv.compile({ type: 'object', properties, required, additionalProperties: true });
  const known = new Set(Object.keys(fields));

  return {
    parse(raw, params) {
      // The input is built field by field rather than handed to ajv whole: unset values (null, "")
      // are dropped first, so a default applies to them as Vault's does, and every unknown name is
      // collected for the warning, where ajv (allErrors off) would stop at the first.
      const input: Record<string, unknown> = {};
      let unknown: string[] | undefined;
      for (const key of Object.keys(raw)) {
        if (params && Object.hasOwn(params, key)) continue;
        if (!known.has(key)) {
          (unknown ??= []).push(key);
          continue;
        }
        const value = raw[key];
        if (!isUnset(value)) input[key] = value;
      }
      if (params) {
        for (const key of Object.keys(params)) {
          if (!known.has(key)) (unknown ??= []).push(key);
          else if (!isUnset(params[key])) input[key] = params[key];
        }
      }
      if (!validate(input)) {
        throw new BadRequestError(describeError(validate.errors?.[0]));
      }
      return { input, unknown: unknown ? unknown.sort() : [] };
    },
  };
}

function describeError(error: ErrorObject | undefined): string {
  if (!error) return 'invalid request';
  if (error.keyword === 'required') {
    return `missing required field "${(error.params as { missingProperty: string }).missingProperty}"`;
  }
  const field = error.instancePath.replace(/^\//, '').replace(/~1/g, '/').replace(/~0/g, '~');
  return field ? `invalid value for field "${field}": ${error.message ?? 'invalid'}` : error.message ?? 'invalid request';
}
