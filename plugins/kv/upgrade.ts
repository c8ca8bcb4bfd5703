/**
 * Turning a version 1 mount into a version 2 one in place, as Vault does when a mount is tuned to
 * `options.version=2`: every key becomes a secret whose version 1 holds its data. Each key moves
 * in one batch (metadata, version, removal of the old value), so an upgrade cut short by a crash
 * resumes where it stopped when the mount is next built.
 */
import type { Storage } from '../../sdk/index.js';
import type { KvContext } from './context.js';
import { CONFIG_KEY, DEFAULT_CONFIG, METADATA_PREFIX, V1_PREFIX, newMetadata, readJson, readMetadata, timestamp } from './store.js';
import { addVersion } from './versions.js';

/** Every key under `prefix`, depth first, relative to V1_PREFIX. */
async function* v1Keys(storage: Storage, prefix: string): AsyncGenerator<string> {
  for (const child of await storage.list(V1_PREFIX + prefix)) {
    if (child.endsWith('/')) yield* v1Keys(storage, prefix + child);
    else yield prefix + child;
  }
}

/** Moves every version 1 key into version 2's layout; returns how many moved. */
export async function upgradeToVersioned(ctx: KvContext): Promise<number> {
  let moved = 0;
  for await (const path of v1Keys(ctx.storage, '')) {
    const data = (await readJson<Record<string, unknown>>(ctx.storage, V1_PREFIX + path)) ?? {};
    const now = ctx.clock.now();
    const meta = (await readMetadata(ctx.storage, path)) ?? newMetadata(timestamp(now));
    const ops = addVersion(path, meta, DEFAULT_CONFIG, data, now);
    await ctx.storage.batch([...ops, { type: 'delete', key: V1_PREFIX + path }]);
    moved++;
  }
  return moved;
}

/** Whether the mount holds version 2 records (so it cannot serve as version 1). */
export async function holdsVersionedData(storage: Storage): Promise<boolean> {
  return (await storage.get(CONFIG_KEY)) !== undefined || (await storage.list(METADATA_PREFIX)).length > 0;
}
