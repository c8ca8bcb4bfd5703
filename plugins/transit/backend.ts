/**
 * The transit secrets engine: named, versioned keys and cryptography as a service.
 * One backend per mount; the key cache size is read from storage when the backend is built,
 * so a new cache-config size applies after a reload of the mount (docs/transit.md, "The key cache").
 */
import { SERVICES, FrameworkBackend, type AnyPathDefinition, type PluginContext, type PluginManifest } from '../../sdk/index.js';
import { TRANSIT_PLUGIN } from './manifest.js';
import type { TransitContext } from './context.js';
import { KeyStore } from './keys/key-store.js';
import { rotateKey } from './keys/operations.js';
import { keysPaths } from './paths/keys.js';
import { keysConfigPath } from './paths/keys-config.js';
import { keysRotatePath } from './paths/keys-rotate.js';
import { keysTrimPath } from './paths/keys-trim.js';
import { configKeysPath } from './paths/config-keys.js';
import { cacheConfigPath, readCacheSize } from './paths/cache-config.js';
import { TRANSIT_OPERATION_PATHS } from './paths/index.js';
import { encryptionPaths } from './paths/encryption-paths.js';
import { signingPaths } from './paths/signing-paths.js';
import { measured } from './measured.js';

export async function createTransitBackend(plugin: PluginContext): Promise<FrameworkBackend> {
  const wasm = plugin.services.get(SERVICES.WasmCrypto);
  const keys = new KeyStore(plugin.storage, await readCacheSize(plugin.storage), () => wasm.forgetKeys());
  const ctx: TransitContext = { keys, storage: plugin.storage, wasm, clock: plugin.clock, logger: plugin.logger };
  // Registered only while the server collects metrics.
  const metrics = plugin.services.has(SERVICES.Metrics) ? plugin.services.get(SERVICES.Metrics) : undefined;
  const cryptoPaths = new Set<(ctx: TransitContext) => AnyPathDefinition[]>([encryptionPaths, signingPaths]);
  const paths: AnyPathDefinition[] = [
    ...keysPaths(ctx),
    keysConfigPath(ctx),
    keysRotatePath(ctx),
    keysTrimPath(ctx),
    configKeysPath(ctx),
    cacheConfigPath(ctx),
    ...TRANSIT_OPERATION_PATHS.flatMap((make) => {
      const made = make(ctx);
      return metrics && cryptoPaths.has(make) ? made.map((path) => measured(path, keys, metrics)) : made;
    }),
  ];
  return new FrameworkBackend({
    description: 'The transit engine: cryptography as a service with named, versioned keys.',
    paths,
    periodic: () => autoRotate(ctx),
    // HA: another node wrote `policy/<name>` or `versions/<name>/<n>`.
    invalidate: (key) => {
      const match = /^(?:policy|versions)\/([^/]+)/.exec(key);
      if (match) keys.forget(match[1]!);
    },
    // The mount goes away, is reloaded, or the server seals: the WASM core keeps no key schedule of
    // it. The core is shared by every transit mount of the server, and its cache holds schedules
    // only; the other mounts' are computed again on their next use.
    cleanup: async () => wasm.forgetKeys(),
  });
}

/** Rotates every key whose latest version is older than its auto_rotate_period. */
async function autoRotate(ctx: TransitContext): Promise<void> {
  const now = Math.floor(ctx.clock.now().getTime() / 1000);
  for (const name of await ctx.keys.list()) {
    if (name.endsWith('/')) continue;
    const policy = await ctx.keys.get(name);
    const s = policy?.settings;
    if (!policy || !s || s.autoRotatePeriod === 0) continue;
    if (s.imported && !s.allowImportedKeyRotation) continue;
    const latest = policy.versions.get(s.latestVersion);
    if (latest && now >= latest.creationTime + s.autoRotatePeriod) {
      await rotateKey(ctx, name);
      ctx.logger.info({ key: name, version: s.latestVersion + 1 }, 'key rotated automatically');
    }
  }
}

export const transitPlugin: PluginManifest = { ...TRANSIT_PLUGIN, factory: createTransitBackend };
