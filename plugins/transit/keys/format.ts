/** The read-key body (https://developer.hashicorp.com/vault/api-docs/secret/transit#read-key). */
import type { KeyPolicy } from './key-policy.js';
import { formatPublicKey } from './key-version.js';
import { derivedEd25519PublicKey } from '../crypto/derive.js';
import { kemForKey } from '../crypto/kem-parameters.js';

export function keyBody(policy: KeyPolicy, context?: Buffer): Record<string, unknown> {
  const s = policy.settings;
  const info = policy.info;
  const body: Record<string, unknown> = {
    name: s.name,
    type: s.type,
    derived: s.derived,
    deletion_allowed: s.deletionAllowed,
    exportable: s.exportable,
    allow_plaintext_backup: s.allowPlaintextBackup,
    imported_key: s.imported,
    supports_encryption: info.encryption,
    supports_decryption: info.decryption,
    supports_signing: info.signing,
    supports_derivation: info.derivation,
    min_available_version: s.minAvailableVersion,
    min_decryption_version: s.minDecryptionVersion,
    min_encryption_version: s.minEncryptionVersion,
    latest_version: s.latestVersion,
    auto_rotate_period: s.autoRotatePeriod,
  };
  if (s.keySize) body.key_size = s.keySize;
  if (s.parameterSet) body.parameter_set = s.parameterSet;
  if (s.hybridEc) {
    body.hybrid_key_type_pqc = 'ml-dsa';
    body.hybrid_key_type_ec = s.hybridEc;
  }
  if (s.imported) body.imported_key_allow_rotation = s.allowImportedKeyRotation;
  if (s.backupInfo) body.backup_info = s.backupInfo;
  if (s.restoreInfo) body.restore_info = s.restoreInfo;
  if (s.derived) {
    body.kdf = s.kdf === 1 ? 'hkdf_sha256' : 'hmac-sha256-counter';
    if (s.kdf === 0) body.kdf_mode = 'hmac-sha256-counter';
    body.convergent_encryption = s.convergentEncryption;
    if (s.convergentEncryption) body.convergent_encryption_version = s.convergentVersion;
  }
  if (info.family === 'hmac') return body;
  const keys: Record<string, unknown> = {};
  for (const [version, v] of [...policy.versions].sort((a, b) => a[0] - b[0])) {
    if (version < s.minDecryptionVersion) continue;
    if (info.family === 'aes-gcm' || info.family === 'chacha' || info.family === 'cmac') {
      keys[String(version)] = v.creationTime;
      continue;
    }
    let publicKey = formatPublicKey(info, v, policy.pq);
    if (info.family === 'ed25519' && s.derived) publicKey = context && v.privateKey ? derivedEd25519PublicKey(v, context).toString('base64') : '';
    keys[String(version)] = {
      name: versionName(policy),
      public_key: publicKey,
      certificate_chain: v.certificateChain.map((der) => derToPem(der)).join('\n'),
      creation_time: v.time,
    };
  }
  body.keys = keys;
  return body;
}

/** The `name` of a version's entry: the curve, ed25519, ml-dsa-<set> as Vault names it, the SLH-DSA set, or the type. */
function versionName(policy: KeyPolicy): string {
  const { info, settings } = policy;
  if (info.curve) return info.curve;
  if (info.family === 'ml-dsa') return `ml-dsa-${settings.parameterSet}`;
  if (info.family === 'slh-dsa') return settings.parameterSet!;
  if (info.family === 'kem') return kemForKey(info, settings.parameterSet).name;
  return info.name;
}

function derToPem(base64Der: string): string {
  const lines = base64Der.match(/.{1,64}/g) ?? [];
  return `-----BEGIN CERTIFICATE-----\n${lines.join('\n')}\n-----END CERTIFICATE-----`;
}
