/**
 * Dev mode's `-dev-plugin-dir`: every `.js` module of the folder is imported into the server and
 * registered as a built-in, unchecked and in-process, so a plugin under development (or a
 * benchmark's floor) runs without a catalog entry and without process overhead. Never used outside
 * dev mode: there, `plugin_directory` modules run only from the catalog, checksummed and isolated.
 * A module that fails to import or check is reported, not mounted.
 */
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { PluginError, type PluginRegistry } from './registry.js';
import type { PluginManifest } from './plugin.js';
import { errorMessage } from '../errors.js';

export async function loadPluginFile(registry: PluginRegistry, file: string): Promise<PluginManifest> {
  let mod: { default?: unknown };
  try {
    mod = (await import(pathToFileURL(path.resolve(file)).href)) as { default?: unknown };
  } catch (err) {
    const why = errorMessage(err);
    throw new PluginError(`plugin from ${file} is unusable: it failed to load: ${why}`);
  }
  return registry.register(mod.default, file);
}

export interface LoadReport {
  readonly loaded: PluginManifest[];
  readonly failed: { file: string; error: string }[];
}

/** Loads every `.js` module of a directory; failures are collected so one bad file does not stop the rest. */
export async function loadPluginDirectory(registry: PluginRegistry, dir: string): Promise<LoadReport> {
  const entries = (await readdir(dir)).filter((f) => f.endsWith('.js')).sort();
  const report: LoadReport = { loaded: [], failed: [] };
  for (const entry of entries) {
    const file = path.join(dir, entry);
    try {
      report.loaded.push(await loadPluginFile(registry, file));
    } catch (err) {
      report.failed.push({ file, error: errorMessage(err) });
    }
  }
  return report;
}
