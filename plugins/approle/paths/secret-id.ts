/** `role/:role_name/secret-id`: issue a new secret ID (POST), or list the accessors of the role's secret IDs (LIST). */
import { randomUUID } from 'node:crypto';
import { NotFoundError, definePath, listResponse, type AnyPathDefinition } from '../../../sdk/index.js';
import type { AppRoleContext } from '../context.js';
import { ISSUE_FIELDS, issueSecretId } from '../issue.js';
import { readRole } from '../role.js';
import { listSecretIdHmacs, readSecretId } from '../secret-id.js';
import { ROLE_NAME_FIELD } from './role.js';

export function secretIdPath(ctx: AppRoleContext): AnyPathDefinition {
  return definePath({
    // One definition for both: a listing pattern matches with or without the trailing slash.
    pattern: 'role/:role_name/secret-id/',
    fields: { role_name: ROLE_NAME_FIELD, ...ISSUE_FIELDS },
    operations: {
      update: { summary: 'Issue a new secret ID.', handler: (req, input) => issueSecretId(ctx, req, input, randomUUID()) },
      list: {
        summary: "List the accessors of the role's secret IDs.",
        handler: async (_req, input) => {
          const role = await readRole(ctx, input.role_name);
          if (!role) throw new NotFoundError(`role "${input.role_name.toLowerCase()}" does not exist`);
          const accessors: string[] = [];
          for (const hmac of await listSecretIdHmacs(ctx, role)) {
            const entry = await readSecretId(ctx, role, hmac);
            if (entry) accessors.push(entry.secret_id_accessor);
          }
          return listResponse(accessors.sort());
        },
      },
    },
    synopsis: 'Issue a secret ID of the role, or list the accessors of its secret IDs.',
    description:
      'POST answers a new secret ID (a random UUID) and its accessor. Send X-Vault-Wrap-TTL to get it wrapped in a ' +
      'single-use token instead, the way to hand a secret ID to the workload that logs in with it. LIST answers one ' +
      'accessor per secret ID of the role, generated or custom; never the secret IDs.',
  });
}
