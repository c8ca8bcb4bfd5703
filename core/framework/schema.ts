/**
 * Compiles a path's field specs to one ajv validator (once, when a mount's backend is built).
 * Weak typing lives in the `kwField` keyword, which coerces each value in place by the field's
 * type and then checks its allowed values and bounds; ajv's own `required` does the rest.
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
    properties[name] = { kwField: spec };
    if (spec.required) required.push(name);
  }
  const validate: ValidateFunction = ajv.compile({ type: 'object', properties, required, additionalProperties: true });
  const known = new Set(Object.keys(fields));
  // Defaults that are objects are copied for each request (a handler may change its input); primitives need no copy.
  const defaults = Object.entries(fields)
    .filter(([, spec]) => spec.default !== undefined)
    .map(([name, spec]) => [name, spec.default, typeof spec.default === 'object' && spec.default !== null] as const);

  return {
    parse(raw, params) {
      const input: Record<string, unknown> = {};
      const unknown: string[] = [];
      for (const key of Object.keys(raw)) {
        if (params && Object.hasOwn(params, key)) continue;
        if (!known.has(key)) {
          unknown.push(key);
          continue;
        }
        const value = raw[key];
        if (!isUnset(value)) input[key] = value;
      }
      if (params) {
        for (const key of Object.keys(params)) {
          if (!known.has(key)) unknown.push(key);
          else if (!isUnset(params[key])) input[key] = params[key];
        }
      }
      if (!validate(input)) {
        throw new BadRequestError(describeError(validate.errors?.[0]));
      }
      for (const [name, value, copy] of defaults) {
        if (input[name] === undefined) input[name] = copy ? structuredClone(value) : value;
      }
      return { input, unknown: unknown.sort() };
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
