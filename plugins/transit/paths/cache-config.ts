/**
 * `cache-config`: the size of the key cache
 * (https://developer.hashicorp.com/vault/api-docs/secret/transit#configure-cache). As Vault's
 * documentation says, a new size takes effect when the mount is reloaded through
 * sys/plugins/reload/backend: the backend reads it when it is built (docs/transit.md, "The key
 * cache").
 */
import { BadRequestError, definePath, type Storage } from '../../../sdk/index.js';
import type { TransitContext } from '../context.js';

/** Storage key of the cache size. */
export const CONFIG_CACHE = 'config/cache';

/** The stored size; a stored 1–9 (never written by us) is raised to 10, as Vault does. */
export async function readCacheSize(storage: Storage): Promise<number> {
  const raw = await storage.get(CONFIG_CACHE);
  if (!raw) return 0;
  const size = (JSON.parse(Buffer.from(raw).toString('utf8')) as { size: number }).size;
  return size > 0 && size < 10 ? 10 : size;
}

export function cacheConfigPath(ctx: TransitContext) {
  return definePath({
    pattern: 'cache-config',
    fields: { size: { type: 'int', description: 'Number of cached keys: 0 is unlimited, otherwise at least 10 (LRU).', default: 0, minimum: 0 } },
    operations: {
      read: {
        summary: 'Read the cache size.',
        handler: async () => {
          const stored = await readCacheSize(ctx.storage);
          const warnings = stored !== ctx.keys.cacheSize ? ['This cache size will not be applied until the transit mount is reloaded'] : undefined;
          return { data: { size: stored }, ...(warnings ? { warnings } : {}) };
        },
      },
      update: {
        summary: 'Set the cache size.',
        handler: async (_req, input) => {
          if (input.size !== 0 && input.size < 10) throw new BadRequestError('size must be 0 or a value greater or equal to 10');
          await ctx.storage.put(CONFIG_CACHE, Buffer.from(JSON.stringify({ size: input.size })));
          return {
            data: { size: input.size },
            ...(input.size !== ctx.keys.cacheSize ? { warnings: ['cache configurations will be applied when this backend is reloaded'] } : {}),
          };
        },
      },
    },
    synopsis: 'Configure the key cache.',
    description: 'The size applies after sys/plugins/reload/backend reloads this mount.',
  });
}
