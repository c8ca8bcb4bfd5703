/**
 * The configuration file's `initialize "<name>" { request "<name>" { … } }` stanzas, OpenBao 2.4's
 * declarative self-initialization (https://openbao.org/docs/configuration/self-init/), in HCL or in
 * its JSON form `"initialize": [{"<name>": {"request": [{"<name>": { … }}]}}]`. Read strictly like
 * every other block. A string value of `data` that is `env://NAME` or `file://PATH` is a reference,
 * resolved when the requests run (core/seal/self-init.ts), so the parsed configuration holds no
 * secret it was not given literally. What runs them, and when, is self-init.ts's.
 */
import path from 'node:path';
import type { HclObject, HclValue } from '../hcl.js';
import { blockBodies, boolean, fail, fieldsOf, nonEmptyString, whereOf, type Setting, type SourceFile, type Where } from './config-values.js';
import { plainValue } from './plugin-stanza.js';
import type { SelfInitBlock, SelfInitOperation, SelfInitRequest } from './settings.js';

/** OpenBao's rule for both kinds of name. */
const NAME = /^[A-Za-z_][A-Za-z0-9_-]*$/;

const REQUEST_KEYS = ['operation', 'path', 'data', 'allow_failure'] as const;

/** OpenBao's keys Keywarden does not honour, each refused with the reason. */
const REFUSED_REQUEST_KEYS: Readonly<Record<string, string>> = {
  token: 'self-initialization runs every request with its own short-lived root token; remove token',
  headers: 'requests carry no headers of their own; remove headers',
  when: 'every request runs; remove when',
};

const OPERATIONS: readonly SelfInitOperation[] = ['create', 'read', 'update', 'patch', 'delete', 'list'];

/** Every `initialize` stanza of one document, in order. */
export function readInitializeStanzas(doc: HclObject, source: SourceFile): Setting<SelfInitBlock>[] {
  const blocks: Setting<SelfInitBlock>[] = [];
  for (const item of doc.items.filter((candidate) => candidate.key === 'initialize')) {
    const where = whereOf(item, '', source);
    for (const byName of blockBodies(item.value, where)) {
      if (byName.items.length === 0) fail(where, 'expected a named stanza such as initialize "audit" { request "enable" { … } }');
      for (const named of byName.items) {
        const blockWhere = whereOf(named, 'initialize.', source);
        for (const body of blockBodies(named.value, blockWhere)) blocks.push({ value: readBlock(named.key, body, blockWhere, source), where: blockWhere });
      }
    }
  }
  return blocks;
}

/** Names are unique across the files' stanzas, and request names within theirs (OpenBao's rule). */
export function checkInitializeNames(blocks: readonly Setting<SelfInitBlock>[]): void {
  const seen = new Map<string, Where>();
  for (const block of blocks) {
    const earlier = seen.get(block.value.name);
    if (earlier) fail(block.where, `initialize "${block.value.name}" is declared twice (first at ${earlier.file}:${earlier.line})`);
    seen.set(block.value.name, block.where);
  }
}

function readBlock(name: string, body: HclObject, where: Where, source: SourceFile): SelfInitBlock {
  if (!NAME.test(name)) fail(where, `"${name}" is not a valid name: letters, digits, "_" and "-", starting with a letter or "_"`);
  const requests: SelfInitRequest[] = [];
  const lines = new Map<string, number>();
  for (const item of body.items) {
    const itemWhere = whereOf(item, `${where.key}.`, source);
    if (item.key !== 'request') fail(itemWhere, 'unknown key; an initialize stanza takes only request blocks');
    for (const byName of blockBodies(item.value, itemWhere)) {
      if (byName.items.length === 0) fail(itemWhere, 'expected a named block such as request "enable-audit" { … }');
      for (const named of byName.items) {
        const requestWhere = whereOf(named, `${where.key}.request.`, source);
        if (!NAME.test(named.key)) fail(requestWhere, `"${named.key}" is not a valid name: letters, digits, "_" and "-", starting with a letter or "_"`);
        const earlier = lines.get(named.key);
        if (earlier !== undefined) fail(requestWhere, `request "${named.key}" is declared twice in this stanza (first on line ${earlier})`);
        lines.set(named.key, requestWhere.line);
        for (const requestBody of blockBodies(named.value, requestWhere)) requests.push(readRequest(named.key, requestBody, requestWhere, source));
      }
    }
  }
  if (requests.length === 0) fail(where, 'holds no request block');
  return { name, requests };
}

function readRequest(name: string, body: HclObject, where: Where, source: SourceFile): SelfInitRequest {
  const fields = fieldsOf(body.items, `${where.key}.`, source, REQUEST_KEYS, REFUSED_REQUEST_KEYS);
  const operationField = fields.get('operation') ?? fail(where, 'operation is required');
  const operation = nonEmptyString(operationField.value, operationField.where) as SelfInitOperation;
  if (!OPERATIONS.includes(operation)) fail(operationField.where, `expected one of ${OPERATIONS.join(', ')}, got "${operation}"`);
  const pathField = fields.get('path') ?? fail(where, 'path is required');
  const requestPath = nonEmptyString(pathField.value, pathField.where).replace(/^\/+/, '').replace(/^v1\//, '');
  const dataField = fields.get('data');
  const allowFailure = fields.get('allow_failure');
  return {
    name,
    operation,
    path: requestPath,
    ...(dataField ? { data: readData(dataField.value, dataField.where, source) } : {}),
    allowFailure: allowFailure ? boolean(allowFailure.value, allowFailure.where) : false,
    declaredAt: `${where.file}:${where.line}`,
  };
}

/** `data = { … }`: any value; `file://` references resolve against the file's directory. */
function readData(value: HclValue, where: Where, source: SourceFile): Record<string, unknown> {
  if (value.kind !== 'object') return fail(where, 'expected an object such as data = { type = "transit" }');
  return resolveFiles(plainValue(value, where, source), source) as Record<string, unknown>;
}

function resolveFiles(value: unknown, source: SourceFile): unknown {
  if (typeof value === 'string' && value.startsWith('file://') && value.length > 'file://'.length) {
    return `file://${path.resolve(source.dir, value.slice('file://'.length))}`;
  }
  if (Array.isArray(value)) return value.map((item) => resolveFiles(item, source));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolveFiles(v, source)]));
  return value;
}
