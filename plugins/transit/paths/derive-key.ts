/**
 * `derive-key/:name`: ECDH key agreement, as OpenBao 2.2 added it
 * (https://openbao.org/api-docs/secret/transit/#derive-key). The base key is one of this mount's
 * ECDSA keys (its private half of one version), the peer's public key arrives as PEM, and the shared
 * secret, through HKDF-SHA-256 with no salt and no info (RFC 5869), becomes a new symmetric key
 * stored under `name`, as an imported key: the same bytes the peer derives from its own private key
 * and the base key's public key, so both sides hold one key without it crossing the wire.
 *
 * Beyond OpenBao, the base key can also be an `x25519` key of this mount (RFC 7748, crypto/x25519.ts):
 * the peer's public key is then base64 of its raw 32 bytes (the form keys/:name shows) or PEM, and
 * the rest is the same.
 *
 * Where OpenBao would add a version to an existing key of that name, a name in use is refused here:
 * an agreement is a new key, and quietly turning an existing key's next version into it would
 * surprise whoever holds that key.
 */
import { createPublicKey, diffieHellman, hkdfSync, type KeyObject } from 'node:crypto';
import { x25519PeerKey, x25519SharedSecret } from '../crypto/x25519.js';
import { BadRequestError, definePath, errorMessage } from '../../../sdk/index.js';
import type { TransitContext } from '../context.js';
import { KeyPolicy, newPolicySettings } from '../keys/key-policy.js';
import { keyTypeInfo } from '../keys/key-types.js';
import { importedVersion } from './import.js';

/** What an agreed secret may become: OpenBao's list. */
const DERIVED_KEY_TYPES = ['aes128-gcm96', 'aes256-gcm96', 'chacha20-poly1305', 'xchacha20-poly1305'] as const;

const NODE_CURVE_OF: Readonly<Record<string, string>> = { 'ecdsa-p256': 'prime256v1', 'ecdsa-p384': 'secp384r1', 'ecdsa-p521': 'secp521r1' };

export function deriveKeyPath(ctx: TransitContext) {
  return definePath({
    pattern: 'derive-key/:name',
    fields: {
      name: { type: 'name', description: 'Name of the new key the agreed secret becomes.', required: true },
      key_derivation_algorithm: { type: 'string', description: 'The agreement: ecdh (ECDH over the base key\'s curve, X25519 for an x25519 key), the only one.', default: 'ecdh' },
      peer_public_key: {
        type: 'string',
        description: 'The other party\'s public key, PEM (PKIX), on the base key\'s curve; for an x25519 base key also base64 of the raw 32 bytes.',
      },
      base_key_name: { type: 'string', description: 'The ecdsa-p256, ecdsa-p384, ecdsa-p521 or x25519 key of this mount whose private half takes part.' },
      base_key_version: { type: 'int', description: 'Version of the base key; 0 (the default) is the latest.', default: 0 },
      derived_key_type: {
        type: 'lowercase-string',
        description: 'Type of the new key: aes256-gcm96 (the default), aes128-gcm96, chacha20-poly1305 or xchacha20-poly1305.',
        default: 'aes256-gcm96',
      },
    },
    operations: {
      update: {
        summary: 'Agree on a key with a peer (ECDH) and store it as a new key.',
        handler: async (_req, input) => {
          if (input.key_derivation_algorithm !== 'ecdh') throw new BadRequestError(`key derivation algorithm ${input.key_derivation_algorithm} not supported`);
          if (!input.peer_public_key) throw new BadRequestError('peer public key not provided');
          if (!(DERIVED_KEY_TYPES as readonly string[]).includes(input.derived_key_type)) throw new BadRequestError(`unknown key type ${input.derived_key_type}`);
          const info = keyTypeInfo(input.derived_key_type);

          const base = input.base_key_name ? await ctx.keys.get(input.base_key_name) : undefined;
          if (!base) throw new BadRequestError('specified base key not found');
          const isX25519 = base.info.family === 'x25519';
          const curve = NODE_CURVE_OF[base.settings.type];
          if (curve === undefined && !isX25519) throw new BadRequestError(`base key type ${base.settings.type} does not support key agreement`);
          const privateKey = baseVersion(base, input.base_key_version).privateKey;
          if (!privateKey) throw new BadRequestError(`version ${input.base_key_version || base.settings.latestVersion} of the base key has no private key (it was imported as a public key)`);

          const secret = isX25519
            ? x25519SharedSecret(privateKey, x25519PeerKey(input.peer_public_key))
            : diffieHellman({ privateKey, publicKey: peerKey(input.peer_public_key, base.settings.type, curve!) });
          const key = Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), Buffer.alloc(0), info.keyBytes!));
          secret.fill(0);

          const settings = newPolicySettings({
            name: input.name,
            type: info.name,
            derived: false,
            convergent: false,
            exportable: false,
            allowPlaintextBackup: false,
            keySize: 0,
            autoRotatePeriod: 0,
          });
          await ctx.keys.withLock(input.name, async () => {
            if (await ctx.keys.get(input.name)) throw new BadRequestError(`key ${input.name} already exists: derive-key makes a new key`);
            const first = importedVersion(info, 1, ctx.clock.now(), { key });
            const policy = new KeyPolicy({ ...settings, latestVersion: 1, imported: true, allowImportedKeyRotation: false }, new Map([[1, first]]));
            await ctx.keys.save(policy, [first]);
          });
          return null;
        },
      },
    },
    synopsis: 'Derive a new key by key agreement with a peer.',
    description:
      'ECDH between the private half of base_key_name (an ECDSA or x25519 key of this mount, version base_key_version) and ' +
      'peer_public_key (X25519 for an x25519 key, refusing an all-zero shared secret); the shared secret through HKDF-SHA-256 (no salt, no info) becomes the new key name, of type ' +
      'derived_key_type, as an imported key that cannot be rotated or exported. The peer derives the same key from its ' +
      'private key and the base key\'s public key (keys/:name shows it). Refused when name is already a key.',
  });
}

/** The base key's version `requested` (0: the latest), with OpenBao's refusals. */
function baseVersion(base: KeyPolicy, requested: number) {
  const s = base.settings;
  if (requested < 0) throw new BadRequestError('requested version of the base key is negative');
  if (requested > s.latestVersion) throw new BadRequestError('requested version of the base key is higher than the latest key version');
  const number = requested === 0 ? s.latestVersion : requested;
  if (number < s.minAvailableVersion) throw new BadRequestError('requested version of the base key is less than the minimum available key version');
  const version = base.versions.get(number);
  if (!version) throw new BadRequestError(`version ${number} of the base key is not available`);
  return version;
}

/** The peer's EC public key on the base key's curve, or a 400 saying what is wrong with it. */
function peerKey(pem: string, baseType: string, curve: string): KeyObject {
  let peer: KeyObject;
  try {
    peer = createPublicKey({ key: pem, format: 'pem' });
  } catch (err) {
    throw new BadRequestError(`failed to parse supplied peer public key PEM: ${errorMessage(err)}`);
  }
  if (peer.asymmetricKeyType !== 'ec') throw new BadRequestError('supplied peer public key is not an ECDSA key');
  if (peer.asymmetricKeyDetails?.namedCurve !== curve) throw new BadRequestError(`base private key type ${baseType} does not match peer public key curve`);
  return peer;
}
