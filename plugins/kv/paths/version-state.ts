/**
 * What `delete/`, `undelete/` and `destroy/` share: a list of versions of one secret, each changed
 * under the secret's lock and recorded in one batch with the metadata.
 */
import { BadRequestError, type BatchOp, type FieldSpecs } from '../../../sdk/index.js';
import type { KvContext } from '../context.js';
import { putMetadata, readMetadata, secretPath, type VersionState } from '../store.js';

export const VERSIONS_FIELDS = {
  path: { type: 'string', description: "The secret's path.", required: true },
  versions: { type: 'comma-int-list', description: 'The versions to act on.' },
} as const satisfies FieldSpecs;

/**
 * Applies `change` to each named version that exists; `change` returns the storage operations a
 * version needs beside the metadata (destroy removes its data). A secret that does not exist is
 * left alone, as in Vault: the answer is 204 either way.
 */
export async function changeVersions(
  ctx: KvContext,
  rawPath: string,
  versions: readonly number[] | undefined,
  change: (state: VersionState, version: number, now: Date) => BatchOp[] | undefined,
): Promise<null> {
  const path = secretPath(rawPath);
  if (!versions || versions.length === 0) throw new BadRequestError('no versions provided');
  await ctx.locks.run(path, async () => {
    const meta = await readMetadata(ctx.storage, path);
    if (!meta) return;
    const now = ctx.clock.now();
    const ops: BatchOp[] = [];
    let changed = false;
    for (const version of new Set(versions)) {
      const state = meta.versions[String(version)];
      if (!state) continue;
      const extra = change(state, version, now);
      if (extra === undefined) continue;
      changed = true;
      ops.push(...extra);
    }
    if (changed) await ctx.storage.batch([...ops, putMetadata(path, meta)]);
  });
  return null;
}
