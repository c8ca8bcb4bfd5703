/**
 * `subkeys/:path`: the shape of a secret's data without its values: every key, with objects
 * followed down to `depth` levels (0: all the way) and every other value as null.
 */
import { definePath, type LogicalResponse } from '../../../sdk/index.js';
import type { KvContext } from '../context.js';
import { isJsonObject, readSecretVersion, setOwn } from '../store.js';

function subkeys(value: Record<string, unknown>, depth: number, level = 1): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    const nested = isJsonObject(child) && (depth === 0 || level < depth);
    setOwn(out, key, nested ? subkeys(child as Record<string, unknown>, depth, level + 1) : null);
  }
  return out;
}

export function subkeysPath(ctx: KvContext) {
  return definePath({
    pattern: 'subkeys/:path*',
    fields: {
      path: { type: 'string', description: "The secret's path.", required: true },
      version: { type: 'int', description: 'The version to read; 0 (the default) reads the current one.', default: 0, minimum: 0 },
      depth: { type: 'int', description: 'How deep to follow nested objects; 0 (the default): all the way.', default: 0, minimum: 0 },
    },
    operations: {
      read: {
        summary: "Read the keys of a secret's data, without the values.",
        handler: async (_req, input): Promise<LogicalResponse | null> => {
          const found = await readSecretVersion(ctx.storage, input.path, input.version, ctx.clock.now());
          if (!found) return null;
          if (!found.data) return { data: { subkeys: null, metadata: found.metadata }, status: 404 };
          return { data: { subkeys: subkeys(found.data, input.depth), metadata: found.metadata } };
        },
      },
    },
    synopsis: "Read the structure of a secret's data without its values.",
    description: 'Values that are not objects (strings, numbers, lists) read as null; a deleted or destroyed version answers 404 with its metadata.',
  });
}
