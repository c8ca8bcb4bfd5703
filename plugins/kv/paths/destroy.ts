/** `destroy/:path`: remove the data of versions of a secret for good. */
import { definePath } from '../../../sdk/index.js';
import type { KvContext } from '../context.js';
import { versionKey } from '../store.js';
import { VERSIONS_FIELDS, changeVersions } from './version-state.js';

export function destroyPath(ctx: KvContext) {
  return definePath({
    pattern: 'destroy/:path*',
    fields: VERSIONS_FIELDS,
    operations: {
      update: {
        summary: 'Destroy versions of the secret.',
        handler: (_req, input) =>
          changeVersions(ctx, input.path, input.versions, (state, version) => {
            if (state.destroyed) return undefined;
            state.destroyed = true;
            return [{ type: 'delete', key: versionKey(input.path, version) }];
          }),
      },
    },
    synopsis: 'Permanently remove versions of a secret.',
    description: "Each named version's data is deleted from storage and the version is marked destroyed; its metadata stays.",
  });
}
