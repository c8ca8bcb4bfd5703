/**
 * The configuration file's `plugin "<name>" { … }` stanzas: each plugin's own settings, handed to
 * that plugin's mounts as their context's `config` (core/plugins/plugin.ts), in HCL or in the JSON
 * form `"plugin": [{"<name>": { … }}]`. What a block holds is the plugin's to check when a mount
 * is built, so here it is only turned into plain values; a plugin named twice in one file is
 * refused with the file, the line and the key, and a later file's block replaces an earlier's.
 *
 * The top-level `cloud_auth { allow_sha1_signatures = … }` block is the older spelling of the
 * cloud auth method's block, and still read as one (config.ts).
 */
import { describeHclValue, type HclObject, type HclValue } from '../hcl.js';
import { blockBodies, fail, whereOf, type Setting, type SourceFile, type Where } from './config-values.js';
import type { PluginSettings } from './settings.js';

export interface PluginBlock {
  readonly name: string;
  readonly config: PluginSettings;
}

/** A plugin's name, as the catalog takes it (core/plugins/catalog.ts). */
const NAME = /^[a-z][a-z0-9-]{0,62}$/;

/** Every `plugin` stanza of one document, in order. */
export function readPluginStanzas(doc: HclObject, source: SourceFile): Setting<PluginBlock>[] {
  const stanzas: Setting<PluginBlock>[] = [];
  const lines = new Map<string, number>();
  for (const item of doc.items.filter((candidate) => candidate.key === 'plugin')) {
    const where = whereOf(item, '', source);
    for (const byName of blockBodies(item.value, where)) {
      if (byName.items.length === 0) fail(where, 'expected a labeled block such as plugin "cloud" { allow_sha1_signatures = false }');
      for (const named of byName.items) {
        const nameWhere = whereOf(named, 'plugin.', source);
        if (!NAME.test(named.key)) fail(nameWhere, 'a plugin name is lower-case letters, digits and "-"');
        const earlier = lines.get(named.key);
        if (earlier !== undefined) fail(nameWhere, `set twice in this file (first on line ${earlier})`);
        lines.set(named.key, nameWhere.line);
        const bodies = blockBodies(named.value, nameWhere);
        if (bodies.length > 1) fail(nameWhere, 'expected one block, got a list of them');
        stanzas.push({ value: { name: named.key, config: plainObject(bodies[0]!, nameWhere, source) }, where: nameWhere });
      }
    }
  }
  return stanzas;
}

function plainObject(body: HclObject, where: Where, source: SourceFile): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const lines = new Map<string, number>();
  for (const item of body.items) {
    const itemWhere = whereOf(item, `${where.key}.`, source);
    const earlier = lines.get(item.key);
    if (earlier !== undefined) fail(itemWhere, `set twice in this block (first on line ${earlier})`);
    lines.set(item.key, itemWhere.line);
    out[item.key] = plainValue(item.value, itemWhere, source);
  }
  return out;
}

/** A value as plain JSON: strings, numbers, booleans, null, lists and objects (each key once). */
export function plainValue(value: HclValue, where: Where, source: SourceFile): unknown {
  switch (value.kind) {
    case 'string':
    case 'number':
    case 'bool':
      return value.value;
    case 'null':
      return null;
    case 'list':
      return value.items.map((item) => plainValue(item, where, source));
    case 'object':
      return plainObject(value, where, source);
    default:
      return fail(where, `unexpected ${describeHclValue(value)}`);
  }
}
