/**
 * The kv secrets engine (mount type `kv`), Vault's key/value store: version 1 (plain key/value,
 * the default) or version 2 (versioned, `options.version=2`). Tuning a version 1 mount to version 2
 * upgrades its data in place when the backend is rebuilt; going back is refused, since version 1
 * cannot serve versioned data.
 */
import { FrameworkBackend, KeyedLock, type AnyPathDefinition, type PluginContext, type PluginManifest } from '../../sdk/index.js';
import { KV_PLUGIN, GENERIC_PLUGIN } from './manifest.js';
import type { KvContext } from './context.js';
import { CONFIG_KEY, KvConfigCache } from './store.js';
import { upgradeToVersioned, holdsVersionedData } from './upgrade.js';
import { configPath } from './paths/config.js';
import { dataPath } from './paths/data.js';
import { deletePath } from './paths/delete.js';
import { destroyPath } from './paths/destroy.js';
import { metadataPaths } from './paths/metadata.js';
import { subkeysPath } from './paths/subkeys.js';
import { undeletePath } from './paths/undelete.js';
import { unversionedPath } from './paths/unversioned.js';
import { v1Paths } from './paths/v1.js';

/** `options.version`: unset or "" is 1, as in Vault. */
function versionOf(options: Readonly<Record<string, string>> | null): 1 | 2 {
  const raw = options?.version ?? '';
  if (raw === '' || raw === '1') return 1;
  if (raw === '2') return 2;
  throw new Error(`options.version must be 1 or 2, not ${JSON.stringify(raw)}`);
}

export async function createKvBackend(plugin: PluginContext): Promise<FrameworkBackend> {
  const version = versionOf(plugin.mount.options);
  const ctx: KvContext = { storage: plugin.storage, clock: plugin.clock, logger: plugin.logger, locks: new KeyedLock(), config: new KvConfigCache(plugin.storage) };
  let paths: AnyPathDefinition[];
  if (version === 2) {
    const moved = await upgradeToVersioned(ctx);
    if (moved > 0) plugin.logger.info({ keys: moved }, 'kv: upgraded version 1 keys to version 2');
    paths = [dataPath(ctx), ...metadataPaths(ctx), deletePath(ctx), undeletePath(ctx), destroyPath(ctx), configPath(ctx), subkeysPath(ctx), unversionedPath()];
  } else {
    if (await holdsVersionedData(plugin.storage)) throw new Error('this mount holds version 2 data: it cannot go back to version 1');
    paths = v1Paths(ctx);
  }
  return new FrameworkBackend({
    description: version === 2 ? 'The versioned key/value store (kv version 2).' : 'The key/value store (kv version 1).',
    paths,
    // HA: another worker or node changed the settings.
    invalidate: (key) => {
      if (key === CONFIG_KEY) ctx.config.forget();
    },
  });
}

export const kvPlugin: PluginManifest = { ...KV_PLUGIN, factory: createKvBackend };

/** The same plugin under another type name (manifest.ts says why). */
export const genericPlugin: PluginManifest = { ...GENERIC_PLUGIN, factory: createKvBackend };
