/**
 * `export/:key_type/:name(/:version)`: key material in Vault's encodings
 * (https://developer.hashicorp.com/vault/api-docs/secret/transit#export-key; docs/transit.md,
 * "Export, backup and bring your own key"). Private material needs an exportable key; public keys
 * and certificate chains do not. Only versions still valid for decryption (≥
 * min_decryption_version) are exported.
 */
import { BadRequestError, definePath } from '../../../sdk/index.js';
import type { TransitContext } from '../context.js';
import { exportCertificateChain, exportCmacKey, exportEncryptionKey, exportHmacKey, exportPublicKey, exportSigningKey } from '../keys/key-material.js';
import type { KeyPolicy } from '../keys/key-policy.js';
import type { KeyVersion } from '../keys/key-version.js';

const EXPORT_TYPES = ['encryption-key', 'signing-key', 'hmac-key', 'public-key', 'certificate-chain', 'cmac-key'] as const;
type ExportType = (typeof EXPORT_TYPES)[number];

export function exportPath(ctx: TransitContext) {
  return definePath({
    pattern: 'export/:key_type/:name/:version?',
    fields: {
      key_type: { type: 'string', description: `What to export: ${EXPORT_TYPES.join(', ')}.`, required: true },
      name: { type: 'name', description: 'Name of the key.', required: true },
      version: { type: 'string', description: 'Version to export: a number (or vN), or latest; all valid versions when omitted.' },
    },
    operations: {
      read: {
        summary: 'Export key material.',
        handler: async (_req, input) => {
          const exportType = input.key_type as ExportType;
          if (!EXPORT_TYPES.includes(exportType)) throw new BadRequestError(`invalid export type: ${input.key_type}`);
          const policy = await ctx.keys.get(input.name);
          if (!policy) return null;
          if (!policy.settings.exportable && exportType !== 'public-key' && exportType !== 'certificate-chain') {
            throw new BadRequestError('private key material is not exportable');
          }
          checkKeyTypeOffers(policy, exportType);
          const keys: Record<string, string> = {};
          for (const v of versionsToExport(policy, input.version)) keys[String(v.version)] = exportedMaterial(policy, v, exportType);
          return { data: { name: policy.name, type: policy.settings.type, keys } };
        },
      },
    },
    synopsis: 'Export named encryption, signing, HMAC or CMAC keys, public keys and certificate chains.',
    description:
      'encryption-key (AES/ChaCha raw base64, RSA PKCS#1 PEM), signing-key (ECDSA SEC1 PEM, Ed25519 base64 seed and public key, ' +
      'RSA PKCS#1 PEM; ML-DSA base64 seed, SLH-DSA base64 private key, hybrid base64 composite private key; ml-kem and ' +
      'mlkem768-x25519 the base64 private seed), hmac-key (base64), cmac-key (aes128-cmac and aes256-cmac keys, base64), ' +
      'public-key (PEM; Ed25519, X25519, ml-kem and mlkem768-x25519 raw base64) and certificate-chain (PEM). An x25519 key ' +
      'exports only public-key: it neither encrypts nor signs. Private material ' +
      'needs exportable; versions below min_decryption_version are refused.',
  });
}

/** Refuses an export type the key's type does not have. */
function checkKeyTypeOffers(policy: KeyPolicy, exportType: ExportType): void {
  const info = policy.info;
  switch (exportType) {
    case 'encryption-key':
      if (!info.encryption) throw new BadRequestError('encryption not supported for the key');
      return;
    case 'signing-key':
      if (!info.signing) throw new BadRequestError('signing not supported for the key');
      return;
    case 'public-key':
      if (!info.signing && info.family !== 'kem' && info.family !== 'x25519') throw new BadRequestError(`public-key export not supported for key type ${info.name}: it has no public key`);
      return;
    case 'certificate-chain':
      if (!info.signing) throw new BadRequestError('certificate chain not supported for keys that do not support signing');
      return;
    case 'cmac-key':
      if (info.family !== 'cmac') throw new BadRequestError(`cmac-key export not supported for key type ${info.name}: it is not a CMAC key`);
      return;
    case 'hmac-key':
      return;
  }
}

/**
 * The versions a `version` segment names (export and byok-export): all valid ones when empty,
 * `latest`, or a number with an optional `v` prefix; refused below min_decryption_version.
 */
export function versionsToExport(policy: KeyPolicy, requested: string | undefined): KeyVersion[] {
  const s = policy.settings;
  if (requested === undefined || requested === '') {
    return [...policy.versions.values()].filter((v) => v.version >= s.minDecryptionVersion).sort((a, b) => a.version - b.version);
  }
  let version: number;
  if (requested === 'latest') {
    version = s.latestVersion;
  } else {
    const digits = requested.replace(/^v/, '');
    if (!/^[+-]?\d+$/.test(digits) || !Number.isSafeInteger(Number(digits))) throw new BadRequestError('invalid key version');
    version = Number(digits);
  }
  if (version < s.minDecryptionVersion) throw new BadRequestError('version for export is below minimum decryption version');
  const found = policy.versions.get(version);
  if (!found) throw new BadRequestError('version does not exist or cannot be found');
  return [found];
}

function exportedMaterial(policy: KeyPolicy, v: KeyVersion, exportType: ExportType): string {
  switch (exportType) {
    case 'encryption-key':
      return exportEncryptionKey(policy.info, v);
    case 'signing-key':
      return exportSigningKey(policy.info, v, policy.pq);
    case 'hmac-key':
      return exportHmacKey(v);
    case 'public-key':
      return exportPublicKey(policy.info, v, policy.pq);
    case 'certificate-chain':
      return exportCertificateChain(v);
    case 'cmac-key':
      return exportCmacKey(v);
  }
}
