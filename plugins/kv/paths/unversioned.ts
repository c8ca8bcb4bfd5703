/**
 * Any other path of a version 2 mount (`secret/foo`, a version 1 style path): a 404 whose warning
 * points to the versioned paths and the `kv` commands, as Vault answers, rather than a bare
 * "unsupported path" that leaves a version 1 client guessing.
 */
import { definePath, type LogicalResponse } from '../../../sdk/index.js';

const ANSWER: LogicalResponse = {
  status: 404,
  warnings: [
    'Invalid path for a versioned K/V secrets engine. See the API docs for the appropriate API endpoints to use. ' +
      "If using the CLI, try using 'kv' for operations on K/V secrets engine mounts.",
  ],
};

export function unversionedPath() {
  const handler = async (): Promise<LogicalResponse> => ({ ...ANSWER, warnings: [...ANSWER.warnings!] });
  return definePath({
    pattern: ':path*',
    fields: { path: { type: 'string', description: 'A path the versioned store does not serve.', required: true } },
    freeFormData: true,
    operations: {
      read: { summary: 'Not a versioned path: 404 with a warning.', handler },
      update: { summary: 'Not a versioned path: 404 with a warning.', handler },
      delete: { summary: 'Not a versioned path: 404 with a warning.', handler },
    },
    synopsis: 'Paths a version 2 mount does not serve.',
    description: 'Version 2 serves data/, metadata/, delete/, undelete/, destroy/, subkeys/ and config; anything else answers 404 with a warning that says so.',
  });
}
