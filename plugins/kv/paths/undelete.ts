/** `undelete/:path`: restore soft-deleted versions of a secret. */
import { definePath } from '../../../sdk/index.js';
import type { KvContext } from '../context.js';
import { VERSIONS_FIELDS, changeVersions } from './version-state.js';

export function undeletePath(ctx: KvContext) {
  return definePath({
    pattern: 'undelete/:path*',
    fields: VERSIONS_FIELDS,
    operations: {
      update: {
        summary: 'Undelete versions of the secret.',
        handler: (_req, input) =>
          changeVersions(ctx, input.path, input.versions, (state) => {
            if (state.destroyed) return undefined;
            state.deletionTime = '';
            return [];
          }),
      },
    },
    synopsis: 'Restore soft-deleted versions of a secret.',
    description: 'Clears the deletion time of each named version (a pending delete_version_after deletion too). Destroyed versions cannot come back.',
  });
}
