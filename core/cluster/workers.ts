/**
 * How many serving processes `keywarden server` runs: the `-workers` flag, else the configuration's
 * `workers`, else one per core the process may use (`os.availableParallelism()`, which honours a
 * CPU affinity mask). One is a single process that owns its store itself, as before workers existed.
 * PostgreSQL nodes have the same default: the primary is the node as the database sees it (one
 * pool, one HA record), whatever the number of workers (docs/architecture.md, "Workers").
 */
import os from 'node:os';
import { ConfigError } from '../config/config.js';
import type { ServerConfig } from '../config/config.js';

/** @throws ConfigError when the flag is not a whole number of at least 1. */
export function resolveWorkers(flag: string | undefined, config: Pick<ServerConfig, 'workers'>): number {
  if (flag !== undefined) {
    if (!/^\d{1,6}$/.test(flag) || Number(flag) < 1) throw new ConfigError(`-workers: expected a whole number of at least 1, got "${flag}"`);
    return Number(flag);
  }
  if (config.workers !== undefined) return config.workers;
  return os.availableParallelism();
}
