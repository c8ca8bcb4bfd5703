/**
 * `lookup/entity` and `lookup/group`: find one by id, name, alias id, or alias name and mount
 * accessor (https://developer.hashicorp.com/vault/api-docs/secret/identity/lookup). Nothing found
 * is a 204, as in Vault.
 */
import { definePath, type AnyPathDefinition, type FieldValues } from '../../../framework/index.js';
import { BadRequestError } from '../../../errors.js';
import type { IdentityStore } from '../identity-store.js';
import { entityView, groupView } from '../views.js';

const FIELDS = {
  id: { type: 'string', description: 'The id.' },
  name: { type: 'string', description: 'The name.' },
  alias_id: { type: 'string', description: 'The id of one of its aliases.' },
  alias_name: { type: 'string', description: 'The name of one of its aliases (with alias_mount_accessor).' },
  alias_mount_accessor: { type: 'string', description: 'The auth mount accessor of that alias (with alias_name).' },
} as const;

type Query = FieldValues<typeof FIELDS>;

/** Exactly one criterion, the alias name and accessor counting as one together (Vault's rules and texts). */
function checkQuery(input: Query): void {
  const given = [input.id, input.name, input.alias_id, input.alias_name, input.alias_mount_accessor].filter((v) => v).length;
  if (given === 0) throw new BadRequestError('query parameter not supplied');
  const byAlias = Boolean(input.alias_name) && Boolean(input.alias_mount_accessor);
  if (given > 1 && !(given === 2 && byAlias)) throw new BadRequestError('query parameter conflict; please supply distinct set of query parameters');
  if (given === 1 && (input.alias_name || input.alias_mount_accessor)) throw new BadRequestError("both 'alias_name' and 'alias_mount_accessor' needs to be set");
}

export function lookupPaths(store: IdentityStore): AnyPathDefinition[] {
  return [
    definePath({
      pattern: 'lookup/entity',
      fields: FIELDS,
      operations: {
        update: {
          summary: 'Look up an entity.',
          handler: async (_req, input) => {
            checkQuery(input);
            let entityId: string | undefined = input.id;
            if (input.name) entityId = (await store.entityByName(input.name))?.id;
            if (input.alias_id) entityId = (await store.readAlias(input.alias_id))?.canonical_id;
            if (input.alias_name && input.alias_mount_accessor) entityId = (await store.aliasByFactors(input.alias_mount_accessor, input.alias_name))?.canonical_id;
            const entity = entityId ? await store.readEntity(entityId) : undefined;
            return entity ? { data: await entityView(store, entity) } : null;
          },
        },
      },
      synopsis: 'Look up an entity.',
      description: 'By id, name, alias id, or alias name with its mount accessor.',
    }),
    definePath({
      pattern: 'lookup/group',
      fields: FIELDS,
      operations: {
        update: {
          summary: 'Look up a group.',
          handler: async (_req, input) => {
            checkQuery(input);
            let groupId: string | undefined = input.id;
            if (input.name) groupId = (await store.groupByName(input.name))?.id;
            if (input.alias_id) groupId = (await store.readGroupAlias(input.alias_id))?.canonical_id;
            if (input.alias_name && input.alias_mount_accessor) groupId = (await store.groupAliasByFactors(input.alias_mount_accessor, input.alias_name))?.canonical_id;
            const group = groupId ? await store.readGroup(groupId) : undefined;
            return group ? { data: await groupView(store, group) } : null;
          },
        },
      },
      synopsis: 'Look up a group.',
      description: 'By id, name, group alias id, or group alias name with its mount accessor.',
    }),
  ];
}
