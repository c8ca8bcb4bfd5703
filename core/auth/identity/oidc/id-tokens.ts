/**
 * Identity tokens: JWTs that say which entity holds a Keywarden token, signed with a role's named
 * key, for another system to verify against `.well-known/keys` (workload identity federation).
 * Claims as Vault's (https://developer.hashicorp.com/vault/docs/secrets/identity/identity-token):
 * `iss`, `sub` (the entity id), `aud` (the role's client id), `iat`, `exp`, `namespace`, and the
 * role template's claims.
 */
import { SignJWT, createLocalJWKSet, importJWK, jwtVerify } from 'jose';
import { BadRequestError } from '../../../errors.js';
import type { IdentityStore } from '../identity-store.js';
import { groupsOf } from '../resolve.js';
import type { OidcStore } from './oidc-store.js';
import { render, templateText, type TemplateIdentity } from './template.js';

export interface IssuerDeps {
  readonly oidc: OidcStore;
  readonly identity: IdentityStore;
  /** The server's api_addr ('' when not configured): the issuer when none is configured, as in Vault. */
  readonly apiAddr: () => string;
}

/** The `iss` of every token, and the base of the discovery document's addresses. */
export async function issuerOf(deps: IssuerDeps): Promise<string> {
  const { issuer } = await deps.oidc.config();
  return `${(issuer || deps.apiAddr()).replace(/\/$/, '')}/v1/identity/oidc`;
}

/** Whether a key lets a role's tokens be signed with it. */
export function allowsClient(allowed: readonly string[], clientId: string): boolean {
  return allowed.includes('*') || allowed.includes(clientId);
}

export async function issueIdToken(deps: IssuerDeps, roleName: string, entityId: string): Promise<{ token: string; client_id: string; ttl: number }> {
  const role = await deps.oidc.role(roleName);
  if (!role) throw new BadRequestError(`role "${roleName}" not found`);
  const entity = entityId ? await deps.identity.tokenEntity(entityId) : undefined;
  if (!entity) throw new BadRequestError('no entity associated with the request\'s token');
  if (entity.disabled) throw new BadRequestError('entity is disabled');
  const key = await deps.oidc.key(role.key);
  if (!key) throw new BadRequestError(`key "${role.key}" not found`);
  if (!allowsClient(key.allowed_client_ids, role.client_id)) {
    throw new BadRequestError(`the key "${role.key}" does not list the client ID of the role "${role.name}" as an allowed client ID`);
  }
  const now = deps.oidc.now();
  const claims = render(templateText(role.template), await templateIdentity(deps.identity, entity.id), now);
  const iat = Math.floor(now.getTime() / 1000);
  const token = await new SignJWT({ ...claims, namespace: 'root' })
    .setProtectedHeader({ alg: key.algorithm, kid: key.current.kid })
    .setIssuer(await issuerOf(deps))
    .setSubject(entity.id)
    .setAudience(role.client_id)
    .setIssuedAt(iat)
    .setExpirationTime(iat + role.ttl)
    .sign(await importJWK(key.current.private, key.algorithm));
  return { token, client_id: role.client_id, ttl: role.ttl };
}

/** Introspection's answer: active, or why not (Vault's shape). */
export type Introspection = { active: true } | { active: false; error: string };

export async function introspect(deps: IssuerDeps, token: string, clientId: string | undefined): Promise<Introspection> {
  const keys = createLocalJWKSet({ keys: await deps.oidc.publicKeys() });
  let payload;
  try {
    ({ payload } = await jwtVerify(token, keys, { issuer: await issuerOf(deps), currentDate: deps.oidc.now() }));
  } catch (err) {
    return { active: false, error: `error validating token: ${(err as Error).message}` };
  }
  if (clientId !== undefined && clientId !== '') {
    const audience = Array.isArray(payload.aud) ? payload.aud : [payload.aud];
    if (!audience.includes(clientId)) return { active: false, error: 'client_id is not an audience of the token' };
  }
  const entity = typeof payload.sub === 'string' ? await deps.identity.readEntity(payload.sub) : undefined;
  if (!entity) return { active: false, error: 'entity was not found' };
  if (entity.disabled) return { active: false, error: 'entity is disabled' };
  return { active: true };
}

async function templateIdentity(store: IdentityStore, entityId: string): Promise<TemplateIdentity> {
  const entity = await store.readEntity(entityId);
  if (!entity) return { entityId, entityName: '', metadata: {}, groupIds: [], groupNames: [], aliases: {} };
  const { directGroupIds, inheritedGroupIds } = await groupsOf(store, entity.id);
  const groupIds = [...directGroupIds, ...inheritedGroupIds];
  const groupNames: string[] = [];
  for (const id of groupIds) {
    const group = await store.readGroup(id);
    if (group) groupNames.push(group.name);
  }
  const aliases = Object.fromEntries(
    (await store.aliasesOf(entity)).map((a) => [a.mount_accessor, { id: a.id, name: a.name, metadata: a.metadata, custom_metadata: a.custom_metadata ?? {} }]),
  );
  return { entityId: entity.id, entityName: entity.name, metadata: entity.metadata ?? {}, groupIds, groupNames, aliases };
}
