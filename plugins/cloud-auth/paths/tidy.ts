/**
 * `tidy/identity-accesslist` and `tidy/roletag-denylist`, and their pre-1.7 names
 * `tidy/identity-whitelist` and `tidy/roletag-blacklist`: remove expired entries now.
 */
import { definePath, type AnyPathDefinition } from '../../../sdk/index.js';
import { DEFAULT_SAFETY_BUFFER, type TidyList } from '../tidy-config.js';
import type { Tidier } from '../tidy.js';

const NAMES: Record<TidyList, { current: string; deprecated: string; entries: string }> = {
  accesslist: { current: 'identity-accesslist', deprecated: 'identity-whitelist', entries: 'identity access-list' },
  denylist: { current: 'roletag-denylist', deprecated: 'roletag-blacklist', entries: 'role-tag deny-list' },
};

/** Vault's words, which scripts match on. */
const STARTED = "Tidy operation successfully started. Any information from the operation will be printed to the server's logs.";
const ALREADY_RUNNING = 'Tidy operation already in progress.';

export function tidyPaths(tidier: Tidier): AnyPathDefinition[] {
  return (['accesslist', 'denylist'] as const).flatMap((list) => [tidyPath(tidier, list, NAMES[list].current), tidyPath(tidier, list, NAMES[list].deprecated)]);
}

function tidyPath(tidier: Tidier, list: TidyList, name: string): AnyPathDefinition {
  return definePath({
    pattern: `tidy/${name}`,
    fields: {
      safety_buffer: {
        type: 'duration',
        description: 'How long past its expiration an entry is kept (default 72h).',
        default: DEFAULT_SAFETY_BUFFER,
      },
    },
    operations: {
      update: {
        summary: `Remove expired ${NAMES[list].entries} entries.`,
        handler: async (_req, input) =>
          tidier.start(list, input.safety_buffer) ? { status: 202, warnings: [STARTED] } : { warnings: [ALREADY_RUNNING] },
      },
    },
    synopsis: `Remove expired ${NAMES[list].entries} entries.`,
    description:
      `Starts a tidy in the background (202) that removes the entries whose expiration time plus safety_buffer has passed; ` +
      `answers 200 with a warning when one is already running.` +
      (name === NAMES[list].deprecated ? ` Deprecated name of tidy/${NAMES[list].current}.` : ''),
  });
}
