/**
 * `keys/:name/import` and `keys/:name/import_version`: bring your own key
 * (https://developer.hashicorp.com/vault/api-docs/secret/transit#import-key; docs/transit.md, "Keys
 * and their one-way settings" and "Export, backup and bring your own key"). Material arrives
 * wrapped for the mount's wrapping key (`ciphertext`), or as a plain public key (`public_key`) for
 * asymmetric types. Everything is decoded and checked before anything is written, so a refused
 * import leaves storage as it was.
 */
import { randomBytes } from 'node:crypto';
import { BadRequestError, definePath } from '../../../sdk/index.js';
import type { TransitContext } from '../context.js';
import { decodeBase64 } from '../crypto/base64.js';
import { parseOaepHash, unwrapKeyMaterial } from '../crypto/byok.js';
import { kemMaterialFromImport, kemPublicKeyFromImport } from '../crypto/kem.js';
import { materialFromImport, publicKeyFromImport, type ImportedMaterial } from '../keys/key-material.js';
import { KeyPolicy, newPolicySettings } from '../keys/key-policy.js';
import { keyTypeInfo, type KeyTypeInfo } from '../keys/key-types.js';
import type { KeyVersion } from '../keys/key-version.js';
import { wrappingKey } from './wrapping-key.js';

interface KeyFields {
  readonly ciphertext?: string | undefined;
  readonly public_key?: string | undefined;
  readonly hash_function: string;
}

interface ReadMaterial {
  readonly material: ImportedMaterial;
  /** False for a `public_key` import. */
  readonly isPrivate: boolean;
}

const CIPHERTEXT_DESCRIPTION =
  'Base64: the ephemeral AES-256 key wrapped with RSA-OAEP for wrapping_key (first 512 bytes), then the key material ' +
  'wrapped under it with AES key wrap with padding (RFC 5649). Raw bytes for symmetric and hmac keys and for the private seed ' +
  'of ml-kem (64 bytes) and mlkem768-x25519 (32 bytes) keys, PKCS#8 DER for other asymmetric ones (or the raw 32-byte private key for x25519).';
const PUBLIC_KEY_DESCRIPTION =
  'PEM public key (or base64 raw 32 bytes for ed25519 and x25519, base64 of the raw public key for ml-kem and mlkem768-x25519), instead of ciphertext, for asymmetric types.';
const HASH_FUNCTION_DESCRIPTION = 'Hash of the RSA-OAEP wrapping (and its MGF1): SHA1, SHA224, SHA256, SHA384 or SHA512.';

export function importPaths(ctx: TransitContext) {
  const importKey = definePath({
    pattern: 'keys/:name/import',
    fields: {
      name: { type: 'name', description: 'Name of the new key.', required: true },
      type: { type: 'lowercase-string', description: 'Key type of the imported material (any type of keys/:name except managed_key, ml-dsa, slh-dsa and hybrid).', required: true },
      ciphertext: { type: 'string', description: CIPHERTEXT_DESCRIPTION, sensitive: true },
      hash_function: { type: 'string', description: HASH_FUNCTION_DESCRIPTION, default: 'SHA256' },
      public_key: { type: 'string', description: PUBLIC_KEY_DESCRIPTION },
      allow_rotation: { type: 'bool', description: 'Allow rotating the key here (after which it no longer takes import_version).', default: false },
      derived: { type: 'bool', description: 'Key derivation: every operation must supply a context.', default: false },
      context: { type: 'string', description: 'Base64 derivation context; required when derived is true.' },
      exportable: { type: 'bool', description: 'Allows export of the key; cannot be turned off once set.', default: false },
      allow_plaintext_backup: { type: 'bool', description: 'Allows plaintext backups; cannot be turned off once set.', default: false },
      auto_rotate_period: { type: 'duration', description: 'Rotate automatically after this long (needs allow_rotation); 0 disables, otherwise at least 1h.', default: 0 },
      convergent_encryption: { type: 'bool', description: 'Not supported on import: an imported key cannot use convergent encryption.' },
      parameter_set: { type: 'string', description: 'ml-kem keys only: the parameter set of the imported key, 768 (the default) or 1024.' },
    },
    operations: {
      update: {
        summary: 'Import a new key.',
        handler: async (_req, input) => {
          if (input.convergent_encryption !== undefined) throw new BadRequestError('import cannot be used on keys with convergent encryption enabled');
          if (input.auto_rotate_period > 0 && !input.allow_rotation) throw new BadRequestError('allow_rotation must be set to true if auto-rotation is enabled');
          const info = keyTypeInfo(input.type);
          if (info.family === 'ml-dsa' || info.family === 'slh-dsa' || info.family === 'hybrid') {
            throw new BadRequestError(`key type ${info.name} cannot be imported: Vault's import takes no post-quantum keys (docs/transit.md)`);
          }
          if (input.derived) {
            if (!input.context) throw new BadRequestError("missing 'context': it is required when importing a key with derived set to true");
            decodeBase64(input.context, 'context');
          }
          const settings = newPolicySettings({
            name: input.name,
            type: info.name,
            derived: input.derived,
            convergent: false,
            exportable: input.exportable,
            allowPlaintextBackup: input.allow_plaintext_backup,
            keySize: 0,
            autoRotatePeriod: input.auto_rotate_period,
            parameterSet: input.parameter_set,
          });
          const { material, isPrivate } = await readMaterial(ctx, info, input, settings.parameterSet);
          if (!isPrivate && info.family === 'ed25519' && input.derived) {
            throw new BadRequestError('unable to import only a public key for a derived ed25519 key: derivation needs the private key');
          }
          await ctx.keys.withLock(input.name, async () => {
            if (await ctx.keys.get(input.name)) {
              throw new BadRequestError('the import path cannot be used with an existing key; use import_version to add a version to an existing imported key');
            }
            const first = importedVersion(info, 1, ctx.clock.now(), material);
            const policy = new KeyPolicy(
              {
                ...settings,
                latestVersion: 1,
                keySize: info.family === 'hmac' ? first.key!.length : 0,
                imported: true,
                allowImportedKeyRotation: input.allow_rotation,
              },
              new Map([[1, first]]),
            );
            await ctx.keys.save(policy, [first]);
          });
          return null;
        },
      },
    },
    synopsis: 'Import externally generated key material as a new key.',
    description:
      'Creates a key from wrapped key material (ciphertext, wrapped for wrapping_key) or, for asymmetric types, from a public ' +
      'key alone (verification and encryption only, until import_version adds the private key). Refused for an existing key. ' +
      'An asymmetric key must be consistent: its public key is derived from the private part, and an embedded public key ' +
      'or RSA value that disagrees is refused; RSA keys need exactly the modulus size of their type and an odd public ' +
      'exponent of at least 65537.',
  });

  const importVersion = definePath({
    pattern: 'keys/:name/import_version',
    fields: {
      name: { type: 'name', description: 'Name of an imported key.', required: true },
      ciphertext: { type: 'string', description: CIPHERTEXT_DESCRIPTION, sensitive: true },
      hash_function: { type: 'string', description: HASH_FUNCTION_DESCRIPTION, default: 'SHA256' },
      public_key: { type: 'string', description: PUBLIC_KEY_DESCRIPTION },
      version: {
        type: 'int',
        description: 'Existing version whose missing private key to import; without it a new version is added, unless a private key matching the latest, public-only version is given.',
      },
    },
    operations: {
      update: {
        summary: 'Import a new version, or the private part of a public-only version.',
        handler: async (_req, input) => {
          const current = importableKey(await ctx.keys.get(input.name), input.name);
          const { material, isPrivate } = await readMaterial(ctx, current.info, input, current.settings.parameterSet);
          await ctx.keys.withLock(input.name, async () => {
            const policy = importableKey(await ctx.keys.get(input.name), input.name);
            if (policy.settings.type !== current.settings.type || policy.settings.parameterSet !== current.settings.parameterSet) throw new BadRequestError(`key ${input.name} changed type during the import; retry`);
            const { next, written } = withImportedVersion(policy, material, isPrivate, input.version, ctx.clock.now());
            await ctx.keys.save(next, [written]);
          });
          return null;
        },
      },
    },
    synopsis: 'Import key material into an existing imported key.',
    description:
      'Adds a version from wrapped key material or a public key, or, with a private key, completes a public-only version ' +
      '(the named version, or the latest one when it lacks its private key and the key matches). Only for imported keys ' +
      'that have not been rotated here; never for keys generated by this service.',
  });

  return [importKey, importVersion];
}

function importableKey(policy: KeyPolicy | undefined, name: string): KeyPolicy {
  if (!policy) throw new BadRequestError(`no key found with name ${name}; to import a new key, use the import endpoint`);
  if (!policy.settings.imported) {
    throw new BadRequestError(
      'the import_version endpoint can only be used with an imported key that has not been rotated here; this key was generated or rotated by the service',
    );
  }
  if (policy.settings.convergentEncryption) throw new BadRequestError('import_version cannot be used on keys with convergent encryption enabled');
  return policy;
}

/** The version import_version writes, and the key with it: a new one, or the private part of a public-only version. */
function withImportedVersion(
  policy: KeyPolicy,
  material: ImportedMaterial,
  isPrivate: boolean,
  requested: number | undefined,
  now: Date,
): { next: KeyPolicy; written: KeyVersion } {
  const s = policy.settings;
  const info = policy.info;
  const asymmetric = info.family === 'rsa' || info.family === 'ecdsa' || info.family === 'ed25519' || info.family === 'kem' || info.family === 'x25519';
  if (requested !== undefined) {
    const target = policy.versions.get(requested);
    if (!target || requested < 1 || requested > s.latestVersion) throw new BadRequestError(`key version ${requested} does not exist`);
    if (!asymmetric) throw new BadRequestError(`key type ${info.name} does not support importing into an existing version`);
    if (hasPrivatePart(info, target)) throw new BadRequestError(`version ${requested} already has its private key; it cannot be updated`);
    if (!isPrivate) throw new BadRequestError(`version ${requested} already has a public key; only its private key can be imported into it`);
    if (!samePublicKey(material, target)) {
      throw new BadRequestError(`cannot import key: the private key does not match the public key of version ${requested}`);
    }
    return completed(policy, target, material);
  }
  const latest = policy.versions.get(s.latestVersion);
  if (isPrivate && asymmetric && latest && !hasPrivatePart(info, latest) && samePublicKey(material, latest)) {
    return completed(policy, latest, material);
  }
  if (!isPrivate && info.family === 'ed25519' && s.derived) {
    throw new BadRequestError('unable to import only a public key for a derived ed25519 key: derivation needs the private key');
  }
  const written = importedVersion(info, s.latestVersion + 1, now, material);
  const versions = new Map(policy.versions);
  versions.set(written.version, written);
  const keySize = info.family === 'hmac' ? written.key!.length : s.keySize;
  return { next: policy.with({ latestVersion: written.version, keySize }, versions), written };
}

/** Whether a version holds its private key: a KEM key's seed, or another type's private key. */
function hasPrivatePart(info: KeyTypeInfo, v: KeyVersion): boolean {
  return info.family === 'kem' ? v.key !== undefined : v.privateKey !== undefined;
}

/** Whether imported private material has the public key of a version. */
function samePublicKey(material: ImportedMaterial, v: KeyVersion): boolean {
  if (material.encapsulationKey) return v.encapsulationKey !== undefined && material.encapsulationKey.equals(v.encapsulationKey);
  return v.publicKey !== undefined && material.publicKey!.equals(v.publicKey);
}

function completed(policy: KeyPolicy, target: KeyVersion, material: ImportedMaterial): { next: KeyPolicy; written: KeyVersion } {
  const written: KeyVersion = material.encapsulationKey ? { ...target, key: material.key! } : { ...target, privateKey: material.privateKey! };
  const versions = new Map(policy.versions);
  versions.set(written.version, written);
  return { next: policy.with({}, versions), written };
}

/** Decodes `ciphertext` (unwrapping it with the wrapping key) or `public_key`, checked against the type. */
async function readMaterial(ctx: TransitContext, info: KeyTypeInfo, fields: KeyFields, parameterSet: string | undefined): Promise<ReadMaterial> {
  if (fields.ciphertext !== undefined && fields.public_key !== undefined) {
    throw new BadRequestError('only one of the following fields, ciphertext and public_key, can be set');
  }
  if (fields.public_key !== undefined) {
    if (info.family === 'kem') return { material: { encapsulationKey: kemPublicKeyFromImport(info, parameterSet, fields.public_key) }, isPrivate: false };
    if (info.family !== 'rsa' && info.family !== 'ecdsa' && info.family !== 'ed25519' && info.family !== 'x25519') {
      throw new BadRequestError(`key type ${info.name} does not support public_key import`);
    }
    return { material: { publicKey: publicKeyFromImport(info, fields.public_key) }, isPrivate: false };
  }
  if (fields.ciphertext === undefined) throw new BadRequestError('one of the following fields, ciphertext or public_key, has to be set');
  const hash = parseOaepHash(fields.hash_function);
  const blob = decodeBase64(fields.ciphertext, 'ciphertext');
  const wrapping = await wrappingKey(ctx, false);
  if (!wrapping) {
    throw new BadRequestError('this mount has no wrapping key yet: read wrapping_key and wrap the key material for the key it returns');
  }
  const bytes = unwrapKeyMaterial(wrapping.versions.get(wrapping.settings.latestVersion)!.privateKey!, blob, hash);
  try {
    return { material: info.family === 'kem' ? kemMaterialFromImport(info, parameterSet, bytes) : await materialFromImport(info, bytes), isPrivate: true };
  } finally {
    bytes.fill(0);
  }
}

/** Version `version` of an imported key (or one derive-key makes) from its material. */
export function importedVersion(info: KeyTypeInfo, version: number, now: Date, material: ImportedMaterial): KeyVersion {
  return {
    version,
    ...(material.key ? { key: material.key } : {}),
    ...(material.encapsulationKey ? { encapsulationKey: material.encapsulationKey } : {}),
    // hmac keys HMAC with the key itself; every other type gets its own random HMAC key.
    hmacKey: info.family === 'hmac' ? material.key! : randomBytes(32),
    ...(material.privateKey ? { privateKey: material.privateKey } : {}),
    ...(material.publicKey ? { publicKey: material.publicKey } : {}),
    time: now.toISOString(),
    creationTime: Math.floor(now.getTime() / 1000),
    convergentVersion: 0,
    certificateChain: [],
  };
}
