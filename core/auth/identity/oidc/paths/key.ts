/**
 * `oidc/key/:name` (create, read, update, delete), its listing, and `oidc/key/:name/rotate`
 * (https://developer.hashicorp.com/vault/api-docs/secret/identity/tokens#create-a-named-key).
 */
import { definePath, listResponse, type AnyPathDefinition } from '../../../../framework/index.js';
import { BadRequestError } from '../../../../errors.js';
import { ALGORITHMS, newKeyPair, type Algorithm, type NamedKey, type OidcStore } from '../oidc-store.js';

const DAY = 24 * 3600;

/** The key roles name when they name none of their own; made when first named, never deleted (as in Vault). */
export const DEFAULT_KEY = 'default';

/** Makes the default key if it does not exist yet. */
export async function ensureDefaultKey(oidc: OidcStore): Promise<void> {
  await oidc.locks.run(`key/${DEFAULT_KEY}`, async () => {
    if (await oidc.key(DEFAULT_KEY)) return;
    await oidc.writeKey(await newKey(oidc, DEFAULT_KEY, 'RS256', DAY, DAY, ['*']));
  });
}

async function newKey(oidc: OidcStore, name: string, algorithm: Algorithm, rotationPeriod: number, verificationTtl: number, allowed: readonly string[]): Promise<NamedKey> {
  return {
    name,
    algorithm,
    rotation_period: rotationPeriod,
    verification_ttl: verificationTtl,
    allowed_client_ids: allowed,
    next_rotation: new Date(oidc.now().getTime() + rotationPeriod * 1000).toISOString(),
    current: await newKeyPair(algorithm),
    retired: [],
  };
}

async function rolesUsing(oidc: OidcStore, keyName: string) {
  const roles = [];
  for (const name of await oidc.listRoles()) {
    const role = await oidc.role(name);
    if (role?.key === keyName) roles.push(role);
  }
  return roles;
}

export function oidcKeyPaths(oidc: OidcStore): AnyPathDefinition[] {
  const fields = {
    name: { type: 'name', description: 'The key name.', required: true },
    algorithm: { type: 'string', description: 'The signing algorithm (default RS256); changing it makes a new key pair.', allowedValues: ALGORITHMS },
    rotation_period: { type: 'duration', description: 'How often the key pair is replaced (default 24h; at least 1m).' },
    verification_ttl: { type: 'duration', description: 'How long a replaced public key still verifies tokens (default 24h; at most 10 rotation periods).' },
    allowed_client_ids: { type: 'comma-string-list', description: 'The client ids of the roles that may sign with the key; "*" allows every role.' },
  } as const;
  return [
    definePath({
      pattern: 'oidc/key/:name',
      fields,
      existenceCheck: async (_req, input) => (await oidc.key(input.name)) !== undefined,
      operations: {
        read: {
          summary: 'Read a named key.',
          handler: async (_req, input) => {
            const key = await oidc.key(input.name);
            if (!key) return null;
            return { data: { algorithm: key.algorithm, rotation_period: key.rotation_period, verification_ttl: key.verification_ttl, allowed_client_ids: key.allowed_client_ids } };
          },
        },
        create: { summary: 'Create a named key.', handler: (_req, input) => writeKey(oidc, input) },
        update: { summary: 'Update a named key.', handler: (_req, input) => writeKey(oidc, input) },
        delete: {
          summary: 'Delete a named key no role uses.',
          handler: async (_req, input) => {
            if (input.name === DEFAULT_KEY) throw new BadRequestError(`deletion of key "${DEFAULT_KEY}" not allowed`);
            await oidc.locks.run(`key/${input.name}`, async () => {
              const users = (await rolesUsing(oidc, input.name)).map((r) => r.name);
              if (users.length > 0) throw new BadRequestError(`unable to delete key "${input.name}" because it is currently referenced by these roles: ${users.join(', ')}`);
              await oidc.deleteKey(input.name);
            });
            return null;
          },
        },
      },
      synopsis: 'Manage a named key that signs identity tokens.',
      description: 'Its private half never leaves the barrier; its public halves are served at .well-known/keys.',
    }),
    definePath({
      pattern: 'oidc/key/',
      fields: {},
      operations: { list: { summary: 'List named keys.', handler: async () => listResponse(await oidc.listKeys()) } },
      synopsis: 'List named keys.',
      description: 'The names of the keys that sign identity tokens.',
    }),
    definePath({
      pattern: 'oidc/key/:name/rotate',
      fields: {
        name: { type: 'name', description: 'The key name.', required: true },
        verification_ttl: { type: 'duration', description: 'How long the replaced public key still verifies tokens; becomes the key\'s verification_ttl.' },
      },
      operations: {
        update: {
          summary: 'Replace a key pair now.',
          handler: async (_req, input) => {
            const rotated = await oidc.rotate(input.name, input.verification_ttl);
            if (!rotated) throw new BadRequestError(`no named key found at "${input.name}"`);
            return null;
          },
        },
      },
      synopsis: 'Rotate a named key.',
      description: 'New tokens are signed with a new key pair; the old public key stays at .well-known/keys for the verification TTL.',
    }),
  ];
}

interface KeyInput {
  readonly name: string;
  readonly algorithm?: string | undefined;
  readonly rotation_period?: number | undefined;
  readonly verification_ttl?: number | undefined;
  readonly allowed_client_ids?: string[] | undefined;
}

function writeKey(oidc: OidcStore, input: KeyInput) {
  return oidc.locks.run(`key/${input.name}`, async () => {
    const previous = await oidc.key(input.name);
    const algorithm = (input.algorithm || previous?.algorithm || 'RS256') as Algorithm;
    const rotationPeriod = input.rotation_period ?? previous?.rotation_period ?? DAY;
    const verificationTtl = input.verification_ttl ?? previous?.verification_ttl ?? DAY;
    if (rotationPeriod < 60) throw new BadRequestError('rotation_period must be at least one minute');
    if (verificationTtl > 10 * rotationPeriod) throw new BadRequestError('verification_ttl cannot be longer than 10x rotation_period');
    if (previous && (await rolesUsing(oidc, input.name)).some((r) => r.ttl > verificationTtl)) {
      throw new BadRequestError(`unable to update key "${input.name}" because it is currently referenced by one or more roles with a token ttl greater than ${verificationTtl} seconds`);
    }
    const allowed = input.allowed_client_ids ?? previous?.allowed_client_ids ?? [];
    let key: NamedKey;
    if (previous && previous.algorithm === algorithm) {
      key = { ...previous, rotation_period: rotationPeriod, verification_ttl: verificationTtl, allowed_client_ids: allowed };
    } else {
      key = await newKey(oidc, input.name, algorithm, rotationPeriod, verificationTtl, allowed);
      // A new algorithm is a rotation: tokens signed with the old pair still verify for the verification TTL.
      if (previous) {
        const expiresAt = new Date(oidc.now().getTime() + verificationTtl * 1000).toISOString();
        key = { ...key, retired: [...previous.retired, { kid: previous.current.kid, jwk: previous.current.public, expires_at: expiresAt }] };
      }
    }
    await oidc.writeKey(key);
    return null;
  });
}
