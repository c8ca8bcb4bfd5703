/** `tidy/secret-id`: remove expired secret IDs now. */
import { definePath, type AnyPathDefinition } from '../../../sdk/index.js';
import type { Tidier } from '../tidy.js';

/** Vault's words, which scripts match on. */
const STARTED = "Tidy operation successfully started. Any information from the operation will be printed to the server's logs.";
const ALREADY_RUNNING = 'Tidy operation already in progress.';

export function tidySecretIdPath(tidier: Tidier): AnyPathDefinition {
  return definePath({
    pattern: 'tidy/secret-id',
    fields: {},
    operations: {
      update: {
        summary: 'Remove expired secret IDs.',
        handler: async () => (tidier.start() ? { status: 202, warnings: [STARTED] } : { warnings: [ALREADY_RUNNING] }),
      },
    },
    synopsis: 'Remove expired secret IDs.',
    description:
      'Starts a tidy in the background (202) that removes expired secret IDs and the index entries of deleted ones; answers ' +
      '200 with a warning when one is already running. The mount tidies every minute on its own.',
  });
}
