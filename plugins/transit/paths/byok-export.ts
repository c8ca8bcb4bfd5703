/**
 * `byok-export/:destination/:source(/:version)`: the source key's versions wrapped for the
 * destination RSA key, in the import ciphertext format
 * (https://developer.hashicorp.com/vault/api-docs/secret/transit#securely-export-key;
 * docs/transit.md, "Export, backup and bring your own key"), so another instance's
 * keys/:name/import accepts them when the destination is that instance's wrapping key (imported
 * here as a public key).
 */
import { BadRequestError, definePath } from '../../../sdk/index.js';
import type { TransitContext } from '../context.js';
import { parseOaepHash, wrapKeyMaterial } from '../crypto/byok.js';
import { wrappableMaterial } from '../keys/key-material.js';
import { versionsToExport } from './export.js';

export function byokExportPath(ctx: TransitContext) {
  return definePath({
    pattern: 'byok-export/:destination/:source/:version?',
    fields: {
      destination: { type: 'name', description: 'RSA key to wrap for, usually the wrapping key of another instance imported as a public key.', required: true },
      source: { type: 'name', description: 'Key to export; must be exportable.', required: true },
      version: { type: 'string', description: 'Version to export: a number (or vN), or latest; all valid versions when omitted.' },
      hash: { type: 'string', description: 'Hash of the RSA-OAEP wrapping: SHA1, SHA224, SHA256, SHA384 or SHA512.', default: 'SHA256' },
    },
    operations: {
      read: {
        summary: 'Export a key wrapped for another RSA key.',
        handler: async (_req, input) => {
          const hash = parseOaepHash(input.hash);
          const destination = await ctx.keys.get(input.destination);
          if (!destination) throw new BadRequestError('no such destination key to export to');
          const source = await ctx.keys.get(input.source);
          if (!source) throw new BadRequestError('no such source key for export');
          if (!source.settings.exportable) throw new BadRequestError('key is not exportable');
          if (destination.info.family !== 'rsa') {
            throw new BadRequestError(`the destination key must be an RSA key to wrap for; ${input.destination} is ${destination.settings.type}`);
          }
          const wrappingPublicKey = destination.versions.get(destination.settings.latestVersion)!.publicKey!;
          const keys: Record<string, string> = {};
          for (const v of versionsToExport(source, input.version)) {
            keys[String(v.version)] = wrapKeyMaterial(wrappingPublicKey, wrappableMaterial(source.info, v), hash).toString('base64');
          }
          return { data: { name: source.name, type: source.settings.type, keys } };
        },
      },
    },
    synopsis: 'Securely export a key, wrapped for another RSA key.',
    description:
      'Wraps each version of the source key (raw bytes for symmetric and hmac keys, PKCS#8 DER for asymmetric ones) for the ' +
      'latest version of the destination RSA key: RSA-OAEP of an ephemeral AES-256 key, then AES key wrap with padding. ' +
      'The source must be exportable.',
  });
}
