/**
 * Data that crosses the isolation boundary in a request or a response. The structured clone
 * algorithm copies plain objects, arrays and primitives, refuses functions and drops symbol-keyed
 * properties, so three things the framework puts into data would not cross as they are: a
 * JsonText (a batch's results written as text; it holds a function, and the clone of a response
 * holding one fails), an ExactNumber (a JsonText too), and the JSON text an exact body keeps
 * under a symbol for `exactBody`. Each crosses as a Map, a value no JSON body holds, and is
 * rebuilt on the other side. A JsonText's text is parsed before the host uses it, so a plugin's
 * process cannot put anything but one well-formed JSON value into the host's answer.
 */
import { JsonText } from '../../framework/json-text.js';
import { ExactNumber, exactTextOf, keepExactText } from '../../framework/exact-json.js';
import { InternalError } from '../../errors.js';
import { AsciiText } from '../../large-text.js';

const TEXT = 'keywarden:json-text';
const EXACT = 'keywarden:exact-number';
const SOURCE = 'keywarden:exact-source';
const VALUE = 'keywarden:value';

/** A JSON number literal (RFC 8259 section 6). */
const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/**
 * `value` as it can be cloned; the same value when nothing in it needed a change. An AsciiText (a
 * long string kept as bytes) crosses as its string: the other side sees what a string field gave
 * before, and the host never takes bytes from a plugin's process to write unchecked into JSON.
 */
export function toWireValue(value: unknown): unknown {
  if (value instanceof AsciiText) return value.toString();
  if (value instanceof JsonText) return new Map([[value instanceof ExactNumber ? EXACT : TEXT, value.text]]);
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item = toWireValue(value[i]);
      if (item !== value[i]) (out ??= value.slice())[i] = item;
    }
    return out ?? value;
  }
  if (!isPlainObject(value)) return value;
  let out: Record<string, unknown> | undefined;
  for (const key of Object.keys(value)) {
    const member = toWireValue(value[key]);
    if (member !== value[key]) (out ??= { ...value })[key] = member;
  }
  const source = exactTextOf(value);
  return source === undefined ? (out ?? value) : new Map<string, unknown>([[SOURCE, source], [VALUE, out ?? value]]);
}

/**
 * A value as `toWireValue` sent it, rebuilt in place (a clone is this side's own copy).
 * @throws InternalError when a JsonText's text is not one JSON value, or an exact number's not a number.
 */
export function fromWireValue(value: unknown): unknown {
  if (value instanceof Map) return rebuilt(value);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = fromWireValue(value[i]);
  } else if (isPlainObject(value)) {
    for (const key of Object.keys(value)) value[key] = fromWireValue(value[key]);
  }
  return value;
}

function rebuilt(map: Map<unknown, unknown>): unknown {
  const text = map.get(TEXT);
  if (map.size === 1 && typeof text === 'string') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new InternalError('the plugin answered with JSON text that does not parse');
    }
    return new JsonText(text, () => parsed);
  }
  const exact = map.get(EXACT);
  if (map.size === 1 && typeof exact === 'string') {
    if (!JSON_NUMBER.test(exact)) throw new InternalError('the plugin answered with an exact number that is not a JSON number');
    return new ExactNumber(exact);
  }
  const source = map.get(SOURCE);
  const inner = map.get(VALUE);
  if (map.size === 2 && typeof source === 'string' && isPlainObject(inner)) return keepExactText(fromWireValue(inner) as object, source);
  return map;
}
