/**
 * Which mount a request path goes to: the one with the longest route prefix the path starts with
 * (Vault's vault/router.go, a longest-prefix match). A mount is also found by its own path without
 * the slash (`transit` finds `transit/`). The mounts are kept longest prefix first, so the first
 * match is the answer; a server has a handful of mounts, and comparing prefixes makes no string.
 */
import type { LiveMount } from './live-mount.js';

export interface Routed {
  readonly mount: LiveMount;
  /** The path relative to the mount. */
  readonly relative: string;
}

export class MountRouter {
  private readonly byPrefix = new Map<string, LiveMount>();
  /** Longest route prefix first. */
  private ordered: readonly LiveMount[] = [];

  resolve(path: string): Routed | undefined {
    for (const mount of this.ordered) {
      const prefix = mount.routePrefix;
      // The prefix, or the mount's own path without its slash (compared without making that string).
      if (path.startsWith(prefix)) return { mount, relative: path.slice(prefix.length) };
      if (path.length === prefix.length - 1 && prefix.startsWith(path)) return { mount, relative: '' };
    }
    return undefined;
  }

  get(prefix: string): LiveMount | undefined {
    return this.byPrefix.get(prefix);
  }

  /** Every mount, in no particular order. */
  all(): readonly LiveMount[] {
    return this.ordered;
  }

  /** Routes `prefix` (the mount's route prefix) to `mount`, replacing what was there. */
  set(mount: LiveMount): void {
    this.byPrefix.set(mount.routePrefix, mount);
    this.reorder();
  }

  delete(prefix: string): void {
    if (this.byPrefix.delete(prefix)) this.reorder();
  }

  clear(): void {
    this.byPrefix.clear();
    this.ordered = [];
  }

  private reorder(): void {
    this.ordered = [...this.byPrefix.values()].sort((a, b) => b.routePrefix.length - a.routePrefix.length);
  }
}
