/**
 * The configuration file's `audit "<type>" "<path>" { description, local, options { … } }` stanzas,
 * OpenBao's declarative audit devices (https://openbao.org/docs/configuration/audit), in HCL or in
 * its JSON form `"audit": [{"<type>": {"<path>": { … }}}]`. Read strictly like every other block:
 * unknown keys, a key set twice and options that are not strings stop start-up with the file, the
 * line and the key. The checks across stanzas and files (one path each, the device options under
 * the configuration's rules) are config.ts's.
 */
import path from 'node:path';
import { describeHclValue, type HclObject, type HclValue } from '../hcl.js';
import { normalizeAuditPath } from '../audit/broker.js';
import type { DeclaredAuditDevice } from '../audit/rules.js';
import { blockBodies, boolean, fail, fieldsOf, string, whereOf, type Setting, type SourceFile, type Where } from './config-values.js';
import { errorMessage } from '../errors.js';

const STANZA_KEYS = ['description', 'local', 'options'] as const;

/** A `file` device's `file_path` values that name no file. */
const NOT_A_FILE = ['stdout', '-', 'discard'];

/** Every `audit` stanza of one document, in order. */
export function readAuditStanzas(doc: HclObject, source: SourceFile): Setting<DeclaredAuditDevice>[] {
  const stanzas: Setting<DeclaredAuditDevice>[] = [];
  for (const item of doc.items.filter((candidate) => candidate.key === 'audit')) {
    const where = whereOf(item, '', source);
    for (const byType of blockBodies(item.value, where)) {
      if (byType.items.length === 0) fail(where, 'expected a stanza such as audit "file" "to-file" { options { file_path = "…" } }');
      for (const typed of byType.items) {
        const typeWhere = whereOf(typed, 'audit.', source);
        for (const byPath of blockBodies(typed.value, typeWhere)) {
          if (byPath.items.length === 0) fail(typeWhere, `expected a path after the type: audit "${typed.key}" "<path>" { … }`);
          for (const named of byPath.items) {
            const pathWhere = whereOf(named, `audit.${typed.key}.`, source);
            for (const body of blockBodies(named.value, pathWhere)) stanzas.push(readStanza(typed.key, named.key, body, pathWhere, source));
          }
        }
      }
    }
  }
  return stanzas;
}

function readStanza(type: string, rawPath: string, body: HclObject, where: Where, source: SourceFile): Setting<DeclaredAuditDevice> {
  let devicePath: string;
  try {
    devicePath = normalizeAuditPath(rawPath);
  } catch (err) {
    return fail(where, errorMessage(err));
  }
  const fields = fieldsOf(body.items, `${where.key}.`, source, STANZA_KEYS);
  const description = fields.get('description');
  const local = fields.get('local');
  const options = fields.get('options');
  const read = options ? readOptions(options.value, options.where, source) : {};
  // Relative like every other path of the file: against the file's directory, not the server's.
  for (const name of ['file_path', 'path'] as const) {
    const given = read[name];
    if (type === 'file' && given !== undefined && given !== '' && !NOT_A_FILE.includes(given)) read[name] = path.resolve(source.dir, given);
  }
  return {
    value: {
      path: devicePath,
      type,
      description: description ? string(description.value, description.where) : '',
      local: local ? boolean(local.value, local.where) : false,
      options: read,
      declaredAt: `${where.file}:${where.line}`,
    },
    where,
  };
}

/** `options { key = "value" }` or `options = { … }`: string to string, each key once. */
function readOptions(value: HclValue, where: Where, source: SourceFile): Record<string, string> {
  if (value.kind !== 'object') return fail(where, `expected a block of string options, got ${describeHclValue(value)}`);
  const options: Record<string, string> = Object.create(null) as Record<string, string>;
  const lines = new Map<string, number>();
  for (const item of value.items) {
    const itemWhere = whereOf(item, `${where.key}.`, source);
    const earlier = lines.get(item.key);
    if (earlier !== undefined) fail(itemWhere, `set twice in this file (first on line ${earlier})`);
    lines.set(item.key, itemWhere.line);
    options[item.key] = string(item.value, itemWhere);
  }
  return { ...options };
}
