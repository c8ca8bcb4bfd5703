/** `delete/:path`: soft-delete versions of a secret; `undelete/` brings them back. */
import { definePath } from '../../../sdk/index.js';
import type { KvContext } from '../context.js';
import { isGone, timestamp } from '../store.js';
import { VERSIONS_FIELDS, changeVersions } from './version-state.js';

export function deletePath(ctx: KvContext) {
  return definePath({
    pattern: 'delete/:path*',
    fields: VERSIONS_FIELDS,
    operations: {
      update: {
        summary: 'Soft-delete versions of the secret.',
        handler: (_req, input) =>
          changeVersions(ctx, input.path, input.versions, (state, _version, now) => {
            if (isGone(state, now)) return undefined;
            state.deletionTime = timestamp(now);
            return [];
          }),
      },
    },
    synopsis: 'Soft-delete versions of a secret.',
    description: 'Each named version reads as deleted from now on; its data is kept, so undelete can restore it. Destroyed versions are left as they are.',
  });
}
