/**
 * HA: what a node must do to its live mounts once another node changed the stored tables. The diff
 * is made by route prefix and UUID: a UUID at a new prefix is a mount to start (the old prefix's
 * mount is then gone); another UUID at a known prefix is a mount disabled and enabled anew;
 * the same UUID with other settings is a tune, and other options need a rebuilt backend, since a
 * plugin reads its options when it is built. Built-in mounts are never stopped.
 */
import { routePrefixOf, sameOptions, type MountEntry } from './mount-entry.js';

/** What a live mount is, for the diff. */
export interface Serving {
  readonly routePrefix: string;
  readonly entry: MountEntry;
}

export interface Reconciliation<M extends Serving> {
  /** Entries no live mount serves yet. */
  readonly start: readonly MountEntry[];
  /** Live mounts the stored tables no longer hold (or hold with another UUID at their prefix). */
  readonly stop: readonly M[];
  /** Live mounts that stay, with their entry as stored now; `rebuild` when the options changed. */
  readonly retune: readonly { readonly mount: M; readonly entry: MountEntry; readonly rebuild: boolean }[];
}

export function reconcile<M extends Serving>(live: readonly M[], stored: readonly MountEntry[]): Reconciliation<M> {
  const byPrefix = new Map(live.map((mount) => [mount.routePrefix, mount]));
  const start: MountEntry[] = [];
  const stop: M[] = [];
  const retune: { mount: M; entry: MountEntry; rebuild: boolean }[] = [];
  const kept = new Set<M>();
  for (const entry of stored) {
    const mount = byPrefix.get(routePrefixOf(entry));
    if (mount && mount.entry.uuid === entry.uuid) {
      kept.add(mount);
      retune.push({ mount, entry, rebuild: !entry.builtin && !sameOptions(mount.entry.options, entry.options) });
      continue;
    }
    start.push(entry);
  }
  for (const mount of live) if (!kept.has(mount) && !mount.entry.builtin) stop.push(mount);
  return { start, stop, retune };
}
