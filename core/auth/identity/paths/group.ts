/**
 * `group`, `group/id/:id`, `group/name/:name` (create, read, update, delete) and their listings
 * (https://developer.hashicorp.com/vault/api-docs/secret/identity/group).
 */
import { definePath, listResponse, type AnyPathDefinition, type FieldValues, type LogicalResponse } from '../../../framework/index.js';
import { deleteGroup, writeGroup, type GroupTarget } from '../groups.js';
import type { IdentityStore } from '../identity-store.js';
import type { Group } from '../records.js';
import { groupView, stringMap } from '../views.js';

const GROUP_FIELDS = {
  name: { type: 'string', description: 'The group name; one is made up when a new group has none.' },
  type: { type: 'string', description: '"internal" (members set here) or "external" (members from logins, through a group alias); fixed once set.' },
  metadata: { type: 'map', description: 'Metadata (string values) kept with the group.' },
  policies: { type: 'comma-string-list', description: 'Policies every member entity\'s tokens get, and the members of groups that list this one.' },
  member_entity_ids: { type: 'comma-string-list', description: 'The member entities (internal groups only); replaces the list.' },
  member_group_ids: { type: 'comma-string-list', description: 'The member groups, whose members get this group\'s policies too (internal groups only); replaces the list.' },
} as const;

type GroupValues = FieldValues<typeof GROUP_FIELDS>;

function groupInput(input: GroupValues) {
  return {
    name: input.name,
    type: input.type,
    metadata: stringMap('metadata', input.metadata),
    policies: input.policies,
    member_entity_ids: input.member_entity_ids,
    member_group_ids: input.member_group_ids,
  };
}

async function write(store: IdentityStore, target: GroupTarget, input: GroupValues): Promise<LogicalResponse | null> {
  const { group, created } = await writeGroup(store, target, groupInput(input));
  return created ? { data: { id: group.id, name: group.name } } : null;
}

async function read(store: IdentityStore, group: Group | undefined): Promise<LogicalResponse | null> {
  return group ? { data: await groupView(store, group) } : null;
}

async function remove(store: IdentityStore, group: Group | undefined): Promise<null> {
  if (group) await deleteGroup(store, group);
  return null;
}

export function groupPaths(store: IdentityStore): AnyPathDefinition[] {
  return [
    definePath({
      pattern: 'group',
      fields: { ...GROUP_FIELDS, id: { type: 'string', description: 'The id of a group to update; without it, the group named `name` is updated or a new one made.' } },
      operations: {
        update: {
          summary: 'Create or update a group.',
          handler: (_req, input) => write(store, input.id ? { id: input.id } : input.name ? { name: input.name } : undefined, input),
        },
      },
      synopsis: 'Create or update a group.',
      description: 'A group grants its policies to its member entities and, transitively, to the members of its member groups.',
    }),
    definePath({
      pattern: 'group/id/:id',
      fields: { ...GROUP_FIELDS, id: { type: 'string', description: 'The group id.', required: true } },
      operations: {
        read: { summary: 'Read a group.', handler: async (_req, input) => read(store, await store.readGroup(input.id)) },
        update: { summary: 'Update a group.', handler: (_req, input) => write(store, { id: input.id }, input) },
        delete: { summary: 'Delete a group.', handler: async (_req, input) => remove(store, await store.readGroup(input.id)) },
      },
      synopsis: 'Read, update or delete a group by id.',
      description: 'Deleting a group takes its policies from its members\' tokens at their next use.',
    }),
    definePath({
      pattern: 'group/name/:name',
      fields: { ...GROUP_FIELDS, name: { type: 'string', description: 'The group name.', required: true } },
      operations: {
        read: { summary: 'Read a group by name.', handler: async (_req, input) => read(store, await store.groupByName(input.name)) },
        update: { summary: 'Create or update the group with this name.', handler: (_req, input) => write(store, { name: input.name }, input) },
        delete: { summary: 'Delete the group with this name.', handler: async (_req, input) => remove(store, await store.groupByName(input.name)) },
      },
      synopsis: 'Read, create, update or delete a group by name.',
      description: 'Names are unique and compared without case.',
    }),
    definePath({
      pattern: 'group/id/',
      fields: {},
      operations: { list: { summary: 'List group ids.', handler: () => listGroups(store, 'id') } },
      synopsis: 'List groups by id.',
      description: 'Ids of every group, with its name and member counts in key_info.',
    }),
    definePath({
      pattern: 'group/name/',
      fields: {},
      operations: { list: { summary: 'List group names.', handler: () => listGroups(store, 'name') } },
      synopsis: 'List groups by name.',
      description: 'Names of every group.',
    }),
  ];
}

async function listGroups(store: IdentityStore, by: 'id' | 'name'): Promise<LogicalResponse> {
  const keys: string[] = [];
  const info: Record<string, unknown> = {};
  for (const id of await store.listGroups()) {
    const group = await store.readGroup(id);
    if (!group) continue;
    keys.push(by === 'id' ? group.id : group.name);
    info[group.id] = {
      name: group.name,
      num_member_entities: group.member_entity_ids.length,
      num_parent_groups: (await store.parentGroupIds(group.id)).length,
    };
  }
  return by === 'id' ? listResponse(keys, info) : listResponse(keys);
}
