/** `role/:name` (create, read, update, delete) and `LIST role/`. */
import {
  BadRequestError,
  CoercionError,
  namedRecordPaths,
  parseDurationSeconds,
  type AnyPathDefinition,
  type FieldSpecs,
  type FieldValues,
  type LogicalRequest,
  LEGACY_TOKEN_FIELDS,
  PLUGIN_TOKEN_FIELD_RULES,
  TOKEN_FIELDS,
  applyTokenFields,
  defaultTokenSettings,
  givenValue,
  tokenSettingsResponse,
} from '../../../sdk/index.js';
import type { JwtAuthContext } from '../context.js';
import { normalizeList } from '../claims.js';
import { ROLE_STORAGE_VERSION, deleteRole, listRoles, readRole, writeRole, type BoundClaimsType, type JwtRole, type RoleType } from '../role.js';

const leeway = (description: string) => ({ type: 'string', description: `${description} In seconds or as a duration; 0 takes the default, -1 turns it off.` }) as const;

const FIELDS = {
  name: { type: 'name', description: 'Name of the role (lower-cased).', required: true },
  role_type: { type: 'string', description: 'jwt (logins with a token at login) or oidc (the authorization-code flow; the default).' },
  bound_audiences: { type: 'comma-string-list', description: 'Audiences ("aud") of which a token must name one.' },
  bound_subject: { type: 'string', description: 'The subject ("sub") a token must have.' },
  bound_claims: { type: 'map', description: 'Claims a token must have, each with the value (or one of the list of values) it must equal or, with bound_claims_type=glob, match.' },
  bound_claims_type: { type: 'string', description: 'How bound_claims values compare: string (equality, the default) or glob ("*" matches any run of characters).' },
  claim_mappings: { type: 'map', description: 'Claims copied into the token and alias metadata: claim name (or JSON pointer) → metadata key.' },
  user_claim: { type: 'string', description: 'The claim whose value names the entity alias (required).' },
  user_claim_json_pointer: { type: 'bool', description: 'Read user_claim as a JSON pointer into nested claims ("/a/b").' },
  groups_claim: { type: 'string', description: 'The claim (or JSON pointer) listing the groups, recorded as the login\'s group aliases.' },
  oidc_scopes: { type: 'comma-string-list', description: 'Scopes requested in the OIDC flow besides "openid".' },
  allowed_redirect_uris: { type: 'comma-string-list', description: 'Redirect URIs an OIDC login may ask for (required for oidc roles); a loopback one matches on any port.' },
  expiration_leeway: leeway('Lifetime given to a token without "exp", counted from its "iat" or "nbf".'),
  not_before_leeway: leeway('How long before its "exp" a token without "nbf" or "iat" starts.'),
  clock_skew_leeway: leeway('Clock skew allowed when checking "exp", "nbf" and "iat".'),
  max_age: { type: 'duration', description: 'An OIDC login must come from a user who authenticated at the provider at most this long ago.' },
  callback_mode: { type: 'string', description: 'How the OIDC flow completes: client (the browser brings the code back; the only mode served here).' },
  ...TOKEN_FIELDS,
  ...LEGACY_TOKEN_FIELDS,
  // Hidden from help, as the other deprecated names are: Vault's plugin lists it as deprecated.
  policies: { ...LEGACY_TOKEN_FIELDS.policies, deprecated: true },
} as const satisfies FieldSpecs;

type Input = FieldValues<typeof FIELDS>;

export function rolePaths(ctx: JwtAuthContext): AnyPathDefinition[] {
  return namedRecordPaths({
    collection: 'role',
    key: 'name',
    noun: 'role',
    fields: FIELDS,
    refusedFields: {
      verbose_oidc_logging: 'it would write ID tokens and their claims to the server log',
      oauth2_metadata: "the provider's access, ID and refresh tokens are not copied into token metadata here",
      token_policies_template_claims: 'policies templated from claims are not supported here',
      poll_interval: 'only the "client" callback mode is served here, and it does not poll',
      oidc_disable_confirmation: 'only the "client" callback mode is served here, and it has no confirmation page',
    },
    read: (name) => readRole(ctx.storage, name),
    show: roleResponse,
    write: (req, input) => writeRoleRequest(ctx, req, input),
    remove: (name) => deleteRole(ctx.storage, name),
    list: () => listRoles(ctx.storage),
    synopsis: 'Create, read, update or delete a role.',
    description:
      'A role binds what a token must say (bound_audiences, bound_subject, bound_claims) to the tokens a login gets ' +
      '(token_* settings), and names the claims of the entity alias (user_claim), the groups (groups_claim) and the ' +
      'metadata (claim_mappings). A jwt role needs at least one bound constraint; an oidc role needs allowed_redirect_uris.',
    listing: { summary: 'List role names.', synopsis: 'List the roles.', description: 'Names of the roles (lower-case).' },
  });
}

function newRole(): JwtRole {
  return {
    version: ROLE_STORAGE_VERSION,
    role_type: 'oidc',
    bound_audiences: [],
    bound_subject: '',
    bound_claims_type: 'string',
    bound_claims: {},
    claim_mappings: {},
    user_claim: '',
    user_claim_json_pointer: false,
    groups_claim: '',
    oidc_scopes: [],
    allowed_redirect_uris: [],
    expiration_leeway: 0,
    not_before_leeway: 0,
    clock_skew_leeway: 0,
    max_age: 0,
    token: defaultTokenSettings(),
    legacy: {},
  };
}

async function writeRoleRequest(ctx: JwtAuthContext, req: LogicalRequest, input: Input) {
  const stored = await readRole(ctx.storage, input.name);
  const role: JwtRole = stored ? structuredClone(stored) : newRole();
  const fail = (message: string): never => {
    throw new BadRequestError(message);
  };

  if (input.role_type !== undefined) {
    if (input.role_type !== 'jwt' && input.role_type !== 'oidc') fail(`invalid 'role_type': ${input.role_type}`);
    role.role_type = input.role_type as RoleType;
  }
  if (input.callback_mode !== undefined && input.callback_mode !== 'client') {
    fail(`callback_mode "${input.callback_mode}" is not supported here: only "client" (the browser brings the code back to the client) is served`);
  }
  const strings = ['bound_subject', 'user_claim', 'groups_claim'] as const;
  for (const field of strings) {
    const value = givenValue(req, input[field], field, '');
    if (value !== undefined) role[field] = value;
  }
  const lists = ['bound_audiences', 'oidc_scopes', 'allowed_redirect_uris'] as const;
  for (const field of lists) {
    const value = givenValue(req, input[field], field, []);
    if (value !== undefined) role[field] = value;
  }
  if (input.user_claim_json_pointer !== undefined) role.user_claim_json_pointer = input.user_claim_json_pointer;
  const maxAge = givenValue(req, input.max_age, 'max_age', 0);
  if (maxAge !== undefined) role.max_age = maxAge;
  for (const field of ['expiration_leeway', 'not_before_leeway', 'clock_skew_leeway'] as const) {
    const value = givenValue(req, input[field], field, '0');
    if (value !== undefined) role[field] = signedSeconds(field, value);
  }

  if (input.bound_claims_type !== undefined) {
    if (input.bound_claims_type !== 'string' && input.bound_claims_type !== 'glob') fail(`invalid 'bound_claims_type': ${input.bound_claims_type}`);
    role.bound_claims_type = input.bound_claims_type as BoundClaimsType;
  }
  const boundClaims = givenValue(req, input.bound_claims, 'bound_claims', {});
  if (boundClaims !== undefined) role.bound_claims = boundClaims;
  for (const [claim, value] of Object.entries(role.bound_claims)) {
    const values = normalizeList(value);
    if (!values || values.some((v) => typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean')) fail(`bound claim "${claim}" is not a string, bool, int or list of them: ${JSON.stringify(value)}`);
    if (role.bound_claims_type === 'glob') {
      for (const v of values!) if (typeof v !== 'string') fail(`claim is not a string: ${JSON.stringify(v)}`);
    }
  }

  const mappings = givenValue(req, input.claim_mappings, 'claim_mappings', {});
  if (mappings !== undefined) {
    const targets = new Set<string>();
    for (const [claim, target] of Object.entries(mappings)) {
      if (typeof target !== 'string') fail(`claim_mappings: the metadata key of claim "${claim}" is not a string`);
      if (target === 'role') fail(`metadata key "role" is reserved and may not be a mapping destination`);
      if (targets.has(target as string)) fail(`multiple keys are mapped to metadata key "${target as string}"`);
      targets.add(target as string);
    }
    role.claim_mappings = mappings as Record<string, string>;
  }

  const token = { ...role.token, legacy: role.legacy };
  const warnings = applyTokenFields(req, input, token, ctx.system.maxLeaseTtl(), PLUGIN_TOKEN_FIELD_RULES);
  ({ legacy: role.legacy, ...role.token } = token);

  if (role.user_claim === '') fail('a user claim must be defined on the role');
  if (role.role_type === 'oidc' && role.allowed_redirect_uris.length === 0) fail("'allowed_redirect_uris' must be set if 'role_type' is 'oidc' or unspecified.");
  // An oidc role's ID tokens must name the client as their audience; a jwt role has no such anchor.
  if (
    role.role_type === 'jwt' &&
    role.bound_audiences.length === 0 &&
    role.bound_subject === '' &&
    Object.keys(role.bound_claims).length === 0 &&
    role.token.token_bound_cidrs.length === 0
  ) {
    fail('must have at least one bound constraint when creating/updating a role');
  }

  await writeRole(ctx.storage, input.name, role);
  return warnings.length > 0 ? { warnings } : null;
}

/** A leeway: whole seconds or a duration, negative to turn the leeway off. */
function signedSeconds(field: string, raw: string): number {
  const text = raw.trim();
  const negative = text.startsWith('-');
  try {
    const seconds = parseDurationSeconds(negative ? text.slice(1) : text);
    return negative ? -seconds : seconds;
  } catch (err) {
    if (err instanceof CoercionError) throw new BadRequestError(`field "${field}": ${err.message}`);
    throw err;
  }
}

function roleResponse(role: JwtRole): Record<string, unknown> {
  return {
    role_type: role.role_type,
    bound_audiences: role.bound_audiences,
    bound_subject: role.bound_subject,
    bound_claims_type: role.bound_claims_type,
    // Vault answers null for an unset map; clients written against it expect that.
    bound_claims: Object.keys(role.bound_claims).length > 0 ? role.bound_claims : null,
    claim_mappings: Object.keys(role.claim_mappings).length > 0 ? role.claim_mappings : null,
    user_claim: role.user_claim,
    user_claim_json_pointer: role.user_claim_json_pointer,
    groups_claim: role.groups_claim,
    oidc_scopes: role.oidc_scopes,
    allowed_redirect_uris: role.allowed_redirect_uris,
    expiration_leeway: role.expiration_leeway,
    not_before_leeway: role.not_before_leeway,
    clock_skew_leeway: role.clock_skew_leeway,
    max_age: role.max_age,
    callback_mode: 'client',
    verbose_oidc_logging: false,
    ...tokenSettingsResponse({ ...role.token, legacy: role.legacy }),
  };
}
