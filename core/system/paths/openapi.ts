/** `sys/internal/specs/openapi`: the OpenAPI document of every mounted backend. */
import { definePath } from '../../framework/index.js';

export function openApiPath(document: (authenticated: boolean) => Promise<Record<string, unknown>>) {
  return definePath({
    pattern: 'internal/specs/openapi',
    fields: {},
    refusedFields: {
      generic_mount_paths: 'paths are listed under the concrete mount paths; templated mount paths are not generated',
    },
    unauthenticated: true,
    operations: {
      read: {
        summary: 'The OpenAPI document.',
        handler: async (req) => ({ raw: { status: 200, body: await document(req.auth !== undefined) } }),
      },
      // Vault answers POST the same (with the generic_mount_paths option, refused above).
      update: {
        summary: 'The OpenAPI document.',
        handler: async (req) => ({ raw: { status: 200, body: await document(req.auth !== undefined) } }),
      },
    },
    synopsis: 'Generate an OpenAPI 3 document of the API.',
    description: 'Every path of the sys backend and of each mount, with its fields and operations. Without a valid token only the unauthenticated paths are listed.',
  });
}
