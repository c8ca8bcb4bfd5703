/**
 * `oidc/role/:name` (create, read, update, delete) and its listing
 * (https://developer.hashicorp.com/vault/api-docs/secret/identity/tokens#create-or-update-a-role).
 */
import { definePath, listResponse, type AnyPathDefinition } from '../../../../framework/index.js';
import { BadRequestError } from '../../../../errors.js';
import { newClientId, type OidcRole, type OidcStore } from '../oidc-store.js';
import { checkTemplate } from '../template.js';
import { DEFAULT_KEY, ensureDefaultKey } from './key.js';

const DAY = 24 * 3600;

export function oidcRolePaths(oidc: OidcStore): AnyPathDefinition[] {
  return [
    definePath({
      pattern: 'oidc/role/:name',
      fields: {
        name: { type: 'name', description: 'The role name.', required: true },
        key: { type: 'name', description: 'The named key that signs the role\'s tokens (required on create; "default" is made when first named).' },
        template: { type: 'string', description: 'A JSON object (or its base64) of extra claims, with {{identity.entity...}} placeholders.' },
        client_id: { type: 'string', description: 'The `aud` of the role\'s tokens; made up when a new role has none.' },
        ttl: { type: 'duration', description: 'How long a token is valid (default 24h; at most the key\'s verification_ttl).' },
      },
      existenceCheck: async (_req, input) => (await oidc.role(input.name)) !== undefined,
      operations: {
        read: {
          summary: 'Read a role.',
          handler: async (_req, input) => {
            const role = await oidc.role(input.name);
            return role ? { data: { key: role.key, template: role.template, client_id: role.client_id, ttl: role.ttl } } : null;
          },
        },
        create: { summary: 'Create a role.', handler: (_req, input) => writeRole(oidc, input) },
        update: { summary: 'Update a role.', handler: (_req, input) => writeRole(oidc, input) },
        delete: {
          summary: 'Delete a role.',
          handler: async (_req, input) => {
            await oidc.deleteRole(input.name);
            return null;
          },
        },
      },
      synopsis: 'Manage a role that identity tokens are issued for.',
      description: 'A token holder with an entity reads oidc/token/<role> to get a JWT signed with the role\'s key.',
    }),
    definePath({
      pattern: 'oidc/role/',
      fields: {},
      operations: { list: { summary: 'List roles.', handler: async () => listResponse(await oidc.listRoles()) } },
      synopsis: 'List roles.',
      description: 'The names of the identity token roles.',
    }),
  ];
}

interface RoleInput {
  readonly name: string;
  readonly key?: string | undefined;
  readonly template?: string | undefined;
  readonly client_id?: string | undefined;
  readonly ttl?: number | undefined;
}

function writeRole(oidc: OidcStore, input: RoleInput) {
  return oidc.locks.run(`role/${input.name}`, async () => {
    const previous = await oidc.role(input.name);
    const keyName = input.key || previous?.key;
    if (!keyName) throw new BadRequestError('the key parameter is required');
    if (keyName === DEFAULT_KEY) await ensureDefaultKey(oidc);
    const template = input.template ?? previous?.template ?? '';
    checkTemplate(template);
    const key = await oidc.key(keyName);
    if (!key) throw new BadRequestError(`cannot find key "${keyName}"`);
    const ttl = input.ttl ?? previous?.ttl ?? DAY;
    if (ttl > key.verification_ttl) throw new BadRequestError("a role's token ttl cannot be longer than the verification_ttl of the key it references");
    const role: OidcRole = { name: input.name, key: keyName, template, client_id: input.client_id || previous?.client_id || newClientId(), ttl };
    await oidc.writeRole(role);
    return null;
  });
}
