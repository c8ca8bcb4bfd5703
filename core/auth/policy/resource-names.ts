/**
 * Paths that name one resource. Vault serves snapshots at `sys/storage/raft/snapshot[-force]`, and
 * Keywarden serves the same handlers at `sys/storage/snapshot[-force]` as well. Were each name a
 * path of its own to the ACL, a policy denying one would be bypassed through the other; so the ACL
 * decides a request to any name by the rules of all of them (acl.ts: every rule that applies to
 * one of the names must allow the request, and one must apply). A policy written for Vault (the
 * raft names) or for Keywarden's names works under both, and a deny on either blocks both.
 */
const GROUPS: readonly (readonly string[])[] = [
  ['sys/storage/raft/snapshot', 'sys/storage/snapshot'],
  ['sys/storage/raft/snapshot-force', 'sys/storage/snapshot-force'],
];

/** Each name of a group → every name of its group. */
export const RESOURCE_NAMES: ReadonlyMap<string, readonly string[]> = new Map(GROUPS.flatMap((names) => names.map((name) => [name, names] as const)));
