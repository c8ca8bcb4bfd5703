/**
 * Log levels changed at run time (`sys/loggers`, Vault's API): the server's own logger is named
 * `core`; each mount's logger is named by its path without the trailing slash (`transit`,
 * `auth/cloud`). A mount's logger follows `core` until a level is set for it alone. Reverting goes
 * back to the configured `log_level`, which SIGHUP may change. Levels are per node.
 */
import type { Logger } from 'pino';
import type { LogLevel } from './config/config.js';
import type { LiveMount } from './mounts/mount-table.js';
import type { Unsealed } from './unsealed.js';

export const CORE_LOGGER = 'core';

export class LogLevels {
  constructor(
    private readonly root: Logger,
    private configured: LogLevel,
    private readonly unsealed: Unsealed,
  ) {}

  /** Every logger's level by name. */
  levels(): Record<string, string> {
    const out: Record<string, string> = { [CORE_LOGGER]: this.root.level };
    for (const live of this.withLoggers()) out[nameOf(live)] = live.logger!.level;
    return out;
  }

  /** Whether a logger of that name exists. */
  has(name: string): boolean {
    return name === CORE_LOGGER || this.mount(name) !== undefined;
  }

  /** Sets every logger to `level` (mount-only levels are dropped). */
  setAll(level: LogLevel): void {
    for (const live of this.withLoggers()) live.logLevel = undefined;
    this.setCore(level);
  }

  /** Sets one logger; `core` carries every mount logger without a level of its own. */
  set(name: string, level: LogLevel): void {
    if (name === CORE_LOGGER) return this.setCore(level);
    const live = this.mount(name)!;
    live.logLevel = level;
    live.logger!.level = level;
  }

  /** Back to the configured level: every logger, or one. */
  revert(name?: string): void {
    if (name === undefined) return this.setAll(this.configured);
    if (name === CORE_LOGGER) return this.setCore(this.configured);
    const live = this.mount(name)!;
    live.logLevel = undefined;
    live.logger!.level = this.root.level;
  }

  /** SIGHUP: a new configured level, applied as `core`'s. */
  configure(level: LogLevel): void {
    this.configured = level;
    this.setCore(level);
  }

  private setCore(level: LogLevel): void {
    this.root.level = level;
    // Set on each child too: a pino child whose level was ever set no longer follows its parent.
    for (const live of this.withLoggers()) if (live.logLevel === undefined) live.logger!.level = level;
  }

  private withLoggers(): LiveMount[] {
    return this.unsealed.loaded ? this.unsealed.mounts.allLive().filter((live) => live.logger !== undefined) : [];
  }

  private mount(name: string): LiveMount | undefined {
    return this.withLoggers().find((live) => nameOf(live) === name);
  }
}

function nameOf(live: LiveMount): string {
  return live.routePrefix.replace(/\/$/, '');
}
