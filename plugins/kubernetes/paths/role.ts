/** `role/:name` (create, read, update, delete) and `LIST role/`. */
import {
  BadRequestError,
  LEGACY_TOKEN_FIELDS,
  PLUGIN_TOKEN_FIELD_RULES,
  TOKEN_FIELDS,
  applyTokenFields,
  defaultTokenSettings,
  namedRecordPaths,
  givenValue,
  tokenSettingsResponse,
  type AnyPathDefinition,
  type FieldSpecs,
  type FieldValues,
  type LogicalRequest,
} from '../../../sdk/index.js';
import type { KubernetesAuthContext } from '../context.js';
import { parseSelector } from '../namespace-selector.js';
import { ALIAS_NAME_SOURCES, ROLE_STORAGE_VERSION, deleteRole, listRoles, readRole, writeRole, type AliasNameSource, type KubernetesRole } from '../role.js';

const FIELDS = {
  name: { type: 'name', description: 'Name of the role (lower-cased).', required: true },
  bound_service_account_names: {
    type: 'comma-string-list',
    description: 'Service account names that may log in; "*" matches any run of characters, and "*" alone any name.',
  },
  bound_service_account_namespaces: {
    type: 'comma-string-list',
    description: 'Namespaces whose service accounts may log in; globs as for names. Or-ed with the selector.',
  },
  bound_service_account_namespace_selector: {
    type: 'string',
    description: 'A label selector (JSON or YAML, matchLabels only) of further namespaces whose service accounts may log in.',
  },
  audience: { type: 'string', description: 'The audience a token must name; also the audience the TokenReview asks for.' },
  alias_name_source: {
    type: 'string',
    description: 'What names the entity alias: serviceaccount_uid (the default; a recreated account is a new identity) or serviceaccount_name (namespace/name).',
  },
  ...TOKEN_FIELDS,
  ...LEGACY_TOKEN_FIELDS,
  // Hidden from help, as the other deprecated names are: Vault's plugin lists it as deprecated.
  policies: { ...LEGACY_TOKEN_FIELDS.policies, deprecated: true },
} as const satisfies FieldSpecs;

type Input = FieldValues<typeof FIELDS>;

export function rolePaths(ctx: KubernetesAuthContext): AnyPathDefinition[] {
  return namedRecordPaths({
    collection: 'role',
    key: 'name',
    noun: 'role',
    fields: FIELDS,
    read: (name) => readRole(ctx.storage, name),
    show: roleResponse,
    write: (req, input) => writeRoleRequest(ctx, req, input),
    remove: (name) => deleteRole(ctx.storage, name),
    list: () => listRoles(ctx.storage),
    synopsis: 'Create, read, update or delete a role.',
    description:
      'A role names the service accounts that may log in (bound_service_account_names, and the namespaces by list or ' +
      'label selector), the audience their tokens must name, and the settings of the tokens they get.',
    listing: { summary: 'List role names.', synopsis: 'List the roles.', description: 'Names of the roles (lower-case).' },
  });
}

function newRole(): KubernetesRole {
  return {
    version: ROLE_STORAGE_VERSION,
    bound_service_account_names: [],
    bound_service_account_namespaces: [],
    bound_service_account_namespace_selector: '',
    audience: '',
    alias_name_source: 'serviceaccount_uid',
    token: defaultTokenSettings(),
    legacy: {},
  };
}

async function writeRoleRequest(ctx: KubernetesAuthContext, req: LogicalRequest, input: Input) {
  const stored = await readRole(ctx.storage, input.name);
  const role: KubernetesRole = stored ? structuredClone(stored) : newRole();
  const fail = (message: string): never => {
    throw new BadRequestError(message);
  };
  const token = { ...role.token, legacy: role.legacy };
  const warnings = applyTokenFields(req, input, token, ctx.system.maxLeaseTtl(), PLUGIN_TOKEN_FIELD_RULES);
  ({ legacy: role.legacy, ...role.token } = token);

  const names = givenValue(req, input.bound_service_account_names, 'bound_service_account_names', []);
  if (names !== undefined) role.bound_service_account_names = names;
  if (role.bound_service_account_names.length === 0) fail('"bound_service_account_names" can not be empty');
  if (role.bound_service_account_names.length > 1 && role.bound_service_account_names.includes('*')) fail('can not mix "*" with values');

  const namespaces = givenValue(req, input.bound_service_account_namespaces, 'bound_service_account_namespaces', []);
  if (namespaces !== undefined) role.bound_service_account_namespaces = namespaces;
  const selector = givenValue(req, input.bound_service_account_namespace_selector, 'bound_service_account_namespace_selector', '');
  if (selector !== undefined) role.bound_service_account_namespace_selector = selector;
  if (role.bound_service_account_namespaces.length === 0 && role.bound_service_account_namespace_selector === '') {
    fail('"bound_service_account_namespaces" can not be empty if "bound_service_account_namespace_selector" is not set');
  }
  if (role.bound_service_account_namespace_selector !== '') {
    try {
      parseSelector(role.bound_service_account_namespace_selector);
    } catch (err) {
      fail(`invalid "bound_service_account_namespace_selector" configured: ${(err as Error).message}`);
    }
  }
  if (role.bound_service_account_namespaces.length > 1 && role.bound_service_account_namespaces.includes('*')) fail('can not mix "*" with values');

  const audience = givenValue(req, input.audience, 'audience', '');
  if (audience !== undefined) role.audience = audience;
  const source = givenValue(req, input.alias_name_source, 'alias_name_source', '');
  if (source !== undefined) {
    const chosen = source === '' ? 'serviceaccount_uid' : source;
    if (!(ALIAS_NAME_SOURCES as readonly string[]).includes(chosen)) fail(`invalid alias_name_source, must be one of: ${ALIAS_NAME_SOURCES.join(', ')}`);
    role.alias_name_source = chosen as AliasNameSource;
  }

  await writeRole(ctx.storage, input.name, role);
  return warnings.length > 0 ? { warnings } : null;
}

function roleResponse(role: KubernetesRole): Record<string, unknown> {
  return {
    bound_service_account_names: role.bound_service_account_names,
    bound_service_account_namespaces: role.bound_service_account_namespaces,
    bound_service_account_namespace_selector: role.bound_service_account_namespace_selector,
    ...(role.audience !== '' ? { audience: role.audience } : {}),
    alias_name_source: role.alias_name_source,
    ...tokenSettingsResponse({ ...role.token, legacy: role.legacy }),
  };
}
