/** The plugins compiled into Keywarden; the server registers each at start-up. */
import type { PluginManifest } from './plugin.js';

export const BUILTIN_PLUGINS: readonly PluginManifest[] = [];
