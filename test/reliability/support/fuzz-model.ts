/**
 * The fuzzer's model of the API, read from the server's own OpenAPI document (which the framework
 * generates from every mounted backend's path definitions), and the fast-check arbitraries that
 * turn it into malformed requests: wrong types, missing and extra fields, huge and empty strings,
 * invalid base64, deep nesting, numbers out of range, odd unicode, `..` and encoded slashes in path
 * segments, bodies that are not objects or not JSON, and odd methods.
 */
import fc from 'fast-check';
import type { RawRequest } from './http.js';

export type FieldKind = 'string' | 'integer' | 'boolean' | 'duration' | 'string-list' | 'integer-list' | 'object' | 'object-list';

export interface FieldModel {
  readonly name: string;
  readonly kind: FieldKind;
  readonly required: boolean;
  readonly enum?: readonly string[];
}

export type FuzzMethod = 'GET' | 'LIST' | 'POST' | 'DELETE' | 'PATCH';

export interface OperationModel {
  readonly method: FuzzMethod;
  /** Body fields for POST and PATCH, query parameters for GET and DELETE. */
  readonly fields: readonly FieldModel[];
}

export interface PathModel {
  /** The mount's route prefix without the slash, as the document tags it (`sys`, `auth/token`). */
  readonly mount: string;
  /** `/transit/keys/{name}`. */
  readonly template: string;
  readonly params: readonly FieldModel[];
  readonly operations: readonly OperationModel[];
}

/** Stands for the fuzzer's current token in generated requests; the sender puts the real one in. */
export const FUZZER_TOKEN = '<fuzzer-token>';

/** One request of the fuzzer, with what it was meant to test. */
export interface FuzzCase {
  readonly target: string;
  readonly mode: string;
  readonly request: RawRequest;
}

function fieldKind(schema: any): FieldKind {
  switch (schema?.type) {
    case 'integer':
      return 'integer';
    case 'boolean':
      return 'boolean';
    case 'object':
      return 'object';
    case 'array':
      return schema.items?.type === 'integer' ? 'integer-list' : schema.items?.type === 'object' ? 'object-list' : 'string-list';
    default:
      return schema?.format === 'duration' ? 'duration' : 'string';
  }
}

function fieldOf(name: string, schema: any, required: boolean): FieldModel {
  return { name, kind: fieldKind(schema), required, ...(Array.isArray(schema?.enum) ? { enum: schema.enum as string[] } : {}) };
}

/** Every path and operation of the document, grouped by path. */
export function modelFromOpenApi(doc: any): PathModel[] {
  const out: PathModel[] = [];
  for (const [template, item] of Object.entries<any>(doc.paths ?? {})) {
    const params = ((item.parameters ?? []) as any[]).map((p) => fieldOf(p.name, p.schema, true));
    const operations: OperationModel[] = [];
    let mount = '';
    const query = (op: any): FieldModel[] =>
      ((op.parameters ?? []) as any[]).filter((p) => p.in === 'query' && p.name !== 'list').map((p) => fieldOf(p.name, p.schema, false));
    const body = (op: any): FieldModel[] => {
      const schema = op.requestBody?.content?.['application/json']?.schema;
      const required = new Set<string>(schema?.required ?? []);
      return Object.entries<any>(schema?.properties ?? {}).map(([name, s]) => fieldOf(name, s, required.has(name)));
    };
    if (item.get) {
      mount = item.get.tags?.[0] ?? mount;
      if (item.get['x-vault-list']) operations.push({ method: 'LIST', fields: query(item.get['x-vault-list']) });
      if (item.get.operationId?.startsWith('list-')) operations.push({ method: 'LIST', fields: query(item.get) });
      else operations.push({ method: 'GET', fields: query(item.get) });
    }
    if (item.post) {
      mount = item.post.tags?.[0] ?? mount;
      operations.push({ method: 'POST', fields: body(item.post) });
    }
    if (item.delete) {
      mount = item.delete.tags?.[0] ?? mount;
      operations.push({ method: 'DELETE', fields: query(item.delete) });
    }
    if (item.patch) {
      mount = item.patch.tags?.[0] ?? mount;
      operations.push({ method: 'PATCH', fields: body(item.patch) });
    }
    out.push({ mount, template, params, operations });
  }
  return out;
}

/** A JSON fragment written verbatim into a body: numbers JSON.stringify cannot produce, very deep nesting. */
export class RawJson {
  constructor(readonly text: string) {}
}

/** JSON text of a value that may hold RawJson leaves (and is itself never deep, so no recursion limit is near). */
export function serialize(value: unknown): string {
  if (value instanceof RawJson) return value.text;
  if (Array.isArray(value)) return `[${value.map(serialize).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}:${serialize(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** Values the fuzzer knows to be valid for a field or path segment name (existing keys, mounts, tokens…). */
export type KnownValues = Readonly<Record<string, readonly unknown[]>>;

const ODD_UNICODE = [
  '\u0000', 'a\u0000b', '\ud800', '\udfff', 'x\ud83d', '\u202etxt.exe', '\u200b\u200d\u2060', '\ufeff', '\uffff\ufffe',
  '\u2028\u2029', '😀👩‍👩‍👧‍👦', 'e\u0301\u0301\u0301', 'İıǅ', '\u0085\u00a0', 'ﬃ', '\\', '"\'`', '<script>alert(1)</script>',
  '${jndi:ldap://127.0.0.1/a}', '%s%n%x', '../../etc/passwd', 'Ω'.repeat(300), '\r\nX-Injected: 1',
];

const INVALID_BASE64 = ['!!!!', '====', 'a', 'ab=c', 'YW Jj', '@@@=', '-_-_', 'YQ==YQ==', 'Zm9v\u0000', 'vault:v1:!!!', 'vault:v0:AAAA',
  'vault:v99999999999999999999:AAAA', 'vault:v-1:AAAA', 'vault:', 'vault:v1:', 'vault:v1', 'vault:vX:QUFB', 'vault:v1:QUFB:extra'];

const OUT_OF_RANGE = [
  new RawJson('1e400'), new RawJson('-1e400'), new RawJson('123456789012345678901234567890'), new RawJson('-0'), new RawJson('1e-400'),
  2 ** 53 + 2, -(2 ** 63), 2 ** 64, -1, -2147483649, 4294967296, 0.5, Number.MAX_VALUE, -Number.MAX_VALUE, Number.MIN_VALUE,
];

const deepObject = (depth: number) => new RawJson(`${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`);
const deepArray = (depth: number) => new RawJson(`${'['.repeat(depth)}1${']'.repeat(depth)}`);

export const hugeString: fc.Arbitrary<string> = fc
  .tuple(fc.constantFrom(64 * 1024, 300 * 1024, 2 * 1024 * 1024), fc.constantFrom('A', 'é', '\u0000', '😀', '/'))
  .map(([bytes, unit]) => unit.repeat(Math.ceil(bytes / Buffer.byteLength(unit))));

export const deepNesting: fc.Arbitrary<RawJson | string> = fc
  .tuple(fc.constantFrom(64, 1_000, 20_000), fc.boolean(), fc.boolean())
  .map(([depth, object, encoded]) => {
    const raw = object ? deepObject(depth) : deepArray(depth);
    // Map and object-list fields also accept their value as a JSON-encoded string.
    return encoded ? raw.text : raw;
  });

/** A value of the wrong type for the field. */
function wrongType(kind: FieldKind): fc.Arbitrary<unknown> {
  const common: unknown[] = [{}, [], [[]], { a: { b: [1] } }, true, 42, 'text'];
  const byKind: Record<FieldKind, unknown[]> = {
    string: [{}, [], [[]], { a: 1 }, [1, 2]],
    integer: ['abc', '1.5', 1.5, '', ' 12 ', '0x10', '1e3', 'NaN', 'Infinity', [], {}, ...OUT_OF_RANGE],
    boolean: ['maybe', 2, -1, 'yes', 'on', [], {}, 0.5],
    duration: ['-1h', '1y', 'abc', '1h-', '1.5.5h', 'µ', 'h', '9999999999999999h', '1e3s', -5, 1.5, [], {}, ...OUT_OF_RANGE],
    'string-list': [{}, [{}], [[1]], [null, null], 'a,,b,', [true, {}]],
    'integer-list': [['x'], 'a,b', [1.5], [OUT_OF_RANGE[0]], '1,,2', [[]], {}],
    object: ['not json', '[1]', '{"a":', [1], 5, true, 'null', '{"__proto__":{"polluted":1}}'],
    'object-list': [{}, [1], ['x'], '[{]', [[]], [null], 'null', { 0: {} }],
  };
  return fc.constantFrom(...byKind[kind], ...common);
}

/** Any of the issue's malformed values. */
export function malformedValue(kind: FieldKind): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 4, arbitrary: wrongType(kind) },
    { weight: 1, arbitrary: hugeString },
    { weight: 2, arbitrary: fc.constant('') },
    { weight: 3, arbitrary: fc.constantFrom(...INVALID_BASE64) },
    { weight: 2, arbitrary: deepNesting },
    { weight: 3, arbitrary: fc.constantFrom(...OUT_OF_RANGE) },
    { weight: 3, arbitrary: fc.constantFrom(...ODD_UNICODE) },
    { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  );
}

/** A value the field accepts, preferring what the fuzzer knows exists. */
export function validValue(field: FieldModel, known: KnownValues): fc.Arbitrary<unknown> {
  const options: fc.Arbitrary<unknown>[] = [];
  const knownValues = known[field.name];
  if (knownValues && knownValues.length > 0) options.push(fc.constantFrom(...knownValues));
  if (field.enum && field.enum.length > 0) options.push(fc.constantFrom(...field.enum));
  if (options.length === 0) {
    switch (field.kind) {
      case 'string':
        options.push(fc.stringMatching(/^[a-z][a-z0-9-]{0,11}$/));
        break;
      case 'integer':
        options.push(fc.integer({ min: 0, max: 16 }));
        break;
      case 'boolean':
        options.push(fc.boolean());
        break;
      case 'duration':
        options.push(fc.constantFrom('1h', '30m', 60, '0', '768h'));
        break;
      case 'string-list':
        options.push(fc.constantFrom(['default'], ['a', 'b'], 'a,b'));
        break;
      case 'integer-list':
        options.push(fc.constantFrom([1, 2], '1,2'));
        break;
      case 'object':
        options.push(fc.constantFrom({}, { key: 'value' }));
        break;
      case 'object-list':
        options.push(fc.constantFrom([{}], [{ a: 'b' }]));
        break;
    }
  }
  return options.length === 1 ? options[0]! : fc.oneof(...options);
}

/** Path segments meant to escape or confuse routing: sent percent-encoded or raw, as written. */
const PATH_ATTACKS = [
  '..', '.', '%2e%2e', '%2E%2e', '%2e', '..%2F..%2Fsys%2Fseal', '%2e%2e%2fsys%2fseal', 'a%2Fb', '%2F', '%2f%2f', '%252F', '%255C', 'a%5C..%5Cb',
  '%00', 'a%00b', '%ZZ', '%', '%C0%AF', '%C0%AE%C0%AE', '%FF', '%F0%9F%98', '%E2%80%AE', '%ED%A0%80', '', '%20', 'a%20b', 'a;b', '~', '*', '+',
  'A'.repeat(10_000), '%2E%2E%2F'.repeat(20), 'keys%2F..%2F..', 'a/b', 'a//b', 'a/', '/a',
];

export const pathAttack: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...PATH_ATTACKS) },
  { weight: 1, arbitrary: fc.constantFrom(...ODD_UNICODE).map((s) => encodeQuery(s)) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 20 }).map((s) => encodeQuery(s)) },
);

/** Whole bodies that are wrong before any field is looked at. */
const oddBody: fc.Arbitrary<{ body: string; contentType?: string }> = fc.oneof(
  fc.constantFrom('[]', '[{}]', '"text"', '42', 'null', 'true', '{', '{"a":}', '{"a":1,}', "{'a':1}", '{"a":1}{"b":2}', 'NaN', '\u0000',
    '\ufeff{}', '{"a":1,"a":{"b":2}}', '{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}')
    .map((body) => ({ body })),
  deepNesting.map((raw) => ({ body: typeof raw === 'string' ? raw : raw.text })),
  hugeString.map((s) => ({ body: JSON.stringify({ [s.slice(0, 5000)]: s }) })),
  fc.constantFrom('a=1&a=2&b', '%ZZ=%', 'plaintext=%00%ff&name[]=x&__proto__[x]=1', '=&=&=')
    .map((body) => ({ body, contentType: 'application/x-www-form-urlencoded' })),
  fc.constantFrom('<xml/>', '---\na: 1\n', '\x00\x01\x02').map((body) => ({ body, contentType: 'text/plain' })),
);

/**
 * Bytes that are not text: random bytes (invalid UTF-8 among them), or a JSON body with raw bytes
 * spliced in, sent as JSON, as octet-stream, or with no Content-Type (which the server reads as JSON).
 */
const binaryBody: fc.Arbitrary<{ body: Buffer; contentType?: string }> = fc
  .tuple(
    fc.oneof(
      fc.uint8Array({ minLength: 1, maxLength: 2048 }).map((bytes) => Buffer.from(bytes)),
      fc.uint8Array({ minLength: 1, maxLength: 64 }).map((bytes) => Buffer.concat([Buffer.from('{"plaintext":"'), Buffer.from(bytes), Buffer.from('"}')])),
      fc.constantFrom(Buffer.from([0xff, 0xfe, 0x7b, 0x7d]), Buffer.from([0xc3, 0x28]), Buffer.from('{"a":"\ud800"}'), Buffer.from([0x1f, 0x8b, 0x08, 0x00])),
    ),
    fc.constantFrom<string | undefined>('application/json', 'application/octet-stream', undefined),
  )
  .map(([body, contentType]) => ({ body, ...(contentType ? { contentType } : {}) }));

const EXTRA_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', '', ' ', 'a.b', 'a/b', '$ref', '\u0000', 'Ω'];

function extraFields(): fc.Arbitrary<Record<string, unknown>> {
  return fc.dictionary(fc.oneof(fc.constantFrom(...EXTRA_KEYS), fc.string({ maxLength: 12 })), malformedValue('string'), { minKeys: 1, maxKeys: 4 });
}

/** Percent-encodes text for a URL; a lone surrogate (which has no UTF-8 form) becomes U+FFFD. */
function encodeQuery(text: string): string {
  return encodeURIComponent(text.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd'));
}

function fillPath(template: string, segments: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (_m, name: string) => segments[name] ?? 'x');
}

function validSegment(param: FieldModel, known: KnownValues): fc.Arbitrary<string> {
  const values = (known[param.name] ?? []).filter((v): v is string => typeof v === 'string');
  const fresh = fc.stringMatching(/^[a-z][a-z0-9-]{0,11}$/);
  return values.length > 0 ? fc.oneof(fc.constantFrom(...values), fresh) : fresh;
}

/** Known-valid field values for an operation (required fields always present). */
function validData(fields: readonly FieldModel[], known: KnownValues): fc.Arbitrary<Record<string, unknown>> {
  const entries = fields.map((f) =>
    f.required ? validValue(f, known).map((v) => [f.name, v] as const) : fc.option(validValue(f, known).map((v) => [f.name, v] as const), { nil: undefined }),
  );
  return fc.tuple(...entries).map((pairs) => Object.fromEntries(pairs.filter((p): p is readonly [string, unknown] => p !== undefined)));
}

/**
 * Requests for one operation of one path: mostly malformed in one of the issue's ways, some valid
 * (so handlers past validation run too, and later malformed requests meet real state).
 */
export function requestsFor(path: PathModel, op: OperationModel, known: KnownValues): fc.Arbitrary<FuzzCase> {
  const segments = fc.tuple(...path.params.map((p) => validSegment(p, known))).map((values) =>
    Object.fromEntries(path.params.map((p, i) => [p.name, encodeURIComponent(values[i]!)])),
  );
  const target = `${op.method} ${path.template}`;
  const bodyMethod = op.method === 'POST' || op.method === 'PATCH';
  const build = (mode: string, method: string, segs: Record<string, string>, data: unknown, extra: { contentType?: string; rawBody?: string | Buffer; token?: string | null; noContentType?: boolean } = {}): FuzzCase => {
    let url = `/v1${fillPath(path.template, segs)}`;
    const headers: Record<string, string> = {};
    if (extra.token !== null) headers['X-Vault-Token'] = extra.token ?? FUZZER_TOKEN;
    let body: string | Buffer | undefined;
    if (bodyMethod || extra.rawBody !== undefined) {
      body = extra.rawBody ?? serialize(data);
      if (!extra.noContentType) headers['Content-Type'] = extra.contentType ?? (method === 'PATCH' ? 'application/merge-patch+json' : 'application/json');
    } else if (data && typeof data === 'object' && Object.keys(data).length > 0) {
      url += `?${Object.entries(data).map(([k, v]) => `${encodeQuery(k)}=${encodeQuery(typeof v === 'string' ? v : serialize(v))}`).join('&')}`;
    }
    return { target, mode, request: { method, path: url, headers, ...(body !== undefined ? { body } : {}) } };
  };
  const method = op.method;
  const fields = op.fields;
  const required = fields.filter((f) => f.required);
  const arbitraries: { weight: number; arbitrary: fc.Arbitrary<FuzzCase> }[] = [
    { weight: 3, arbitrary: fc.tuple(segments, validData(fields, known)).map(([s, d]) => build('valid', method, s, d)) },
    { weight: 2, arbitrary: fc.tuple(segments, validData(fields, known), extraFields()).map(([s, d, x]) => build('extra fields', method, s, { ...d, ...x })) },
    {
      weight: 2,
      arbitrary: fc.tuple(segments, fc.constantFrom(...path.params.map((p) => p.name), '/append', '/insert'), pathAttack, validData(fields, known)).map(([s, where, attack, d]) => {
        if (!where.startsWith('/')) return build('path attack', method, { ...s, [where]: attack }, d);
        const built = build('path attack', method, s, d);
        const url = built.request.path;
        const cut = where === '/append' ? url.search(/\?|$/) : url.indexOf('/', '/v1/'.length + path.mount.length);
        const at = cut < 0 ? url.length : cut;
        return { ...built, request: { ...built.request, path: `${url.slice(0, at)}/${attack}${url.slice(at)}` } };
      }),
    },
    { weight: 2, arbitrary: oddBody.chain((b) => segments.map((s) => build('odd body', method === 'GET' || method === 'LIST' ? 'POST' : method, s, undefined, { rawBody: b.body, ...(b.contentType ? { contentType: b.contentType } : {}) }))) },
    {
      weight: 1,
      arbitrary: binaryBody.chain((b) =>
        segments.map((s) => build('binary body', method === 'GET' || method === 'LIST' ? 'POST' : method, s, undefined, { rawBody: b.body, ...(b.contentType ? { contentType: b.contentType } : { noContentType: true }) })),
      ),
    },
    {
      weight: 1,
      arbitrary: fc.tuple(segments, fc.constantFrom('PUT', 'GET', 'LIST', 'DELETE', 'HEAD', 'OPTIONS', 'TRACE', 'PATCH', 'PROPFIND')).map(([s, m]) =>
        build('odd method', m, s, m === 'PATCH' || m === 'PUT' ? {} : undefined),
      ),
    },
    { weight: 1, arbitrary: fc.tuple(segments, fc.constantFrom(null, '', 'hvs.invalid', 'hvb.AAAA', 'x'.repeat(9000), 's.%00')).map(([s, t]) => build('bad token', method, s, {}, { token: t })) },
  ];
  if (fields.length > 0) {
    arbitraries.push({
      weight: 4,
      arbitrary: fc
        .tuple(segments, validData(fields, known), fc.nat({ max: fields.length - 1 }))
        .chain(([s, d, i]) => malformedValue(fields[i]!.kind).map((bad) => build(`malformed ${fields[i]!.name}`, method, s, { ...d, [fields[i]!.name]: bad }))),
    });
    arbitraries.push({
      weight: 2,
      arbitrary: fc
        .tuple(segments, fc.tuple(...fields.map((f) => malformedValue(f.kind).filter((v) => typeof v !== 'string' || v.length < 100_000))))
        .map(([s, values]) => build('all malformed', method, s, Object.fromEntries(fields.map((f, i) => [f.name, values[i]])))),
    });
  }
  if (required.length > 0) {
    arbitraries.push({
      weight: 2,
      arbitrary: fc.tuple(segments, validData(fields, known), fc.subarray(required.map((f) => f.name), { minLength: 1 })).map(([s, d, missing]) => {
        const data = { ...d };
        for (const name of missing) delete data[name];
        return build(`missing ${missing.join(',')}`, method, s, data);
      }),
    });
  }
  return fc.oneof(...arbitraries);
}
