/**
 * `keys/:name/csr`: a PKCS#10 certificate signing request for a key version, signed by that version
 * (https://developer.hashicorp.com/vault/api-docs/secret/transit#sign-csr). An optional PEM
 * template contributes its subject and attributes; its key and signature are replaced. Every
 * signing key type (RSA, ECDSA, Ed25519) except derived keys.
 */
import { BadRequestError, definePath } from '../../../sdk/index.js';
import type { TransitContext } from '../context.js';
import { createCsr, parseCsrTemplate } from '../crypto/csr.js';
import type { KeyPolicy } from '../keys/key-policy.js';
import type { KeyVersion } from '../keys/key-version.js';

export function csrPath(ctx: TransitContext) {
  return definePath({
    pattern: 'keys/:name/csr',
    fields: {
      name: { type: 'name', description: 'Name of a signing key.', required: true },
      version: { type: 'string', description: 'Key version to make the CSR for; latest or unset is the current version.' },
      csr: { type: 'string', description: 'Optional PEM CSR template: its subject and attributes are kept, key and signature replaced. Empty subject when unset.' },
    },
    operations: {
      update: {
        summary: 'Create a CSR for a key version.',
        handler: async (_req, input) => {
          const policy = await ctx.keys.get(input.name);
          if (!policy) throw new BadRequestError(`key with provided name '${input.name}' not found`);
          const v = certificateVersion(policy, input.version);
          if (!v.privateKey) throw new BadRequestError('private key not imported for key version selected');
          const template = input.csr ? parseCsrTemplate(input.csr) : undefined;
          const csr = createCsr(policy.info, v.privateKey, v.publicKey!, template);
          return { data: { name: policy.name, type: policy.settings.type, csr } };
        },
      },
    },
    synopsis: 'Create a certificate signing request for a key.',
    description:
      'Returns a PEM CSR with the public key of the key version, signed by its private key (RSA PKCS#1 v1.5 SHA-256, ECDSA ' +
      'with SHA-256/384/512 by curve, Ed25519). A template CSR provides the subject and requested extensions.',
  });
}

/**
 * The version csr and set-certificate act on: a signing, non-derived key; `latest` or unset is the
 * latest version; others must still be valid (≥ min_decryption_version).
 */
export function certificateVersion(policy: KeyPolicy, requested: string | undefined): KeyVersion {
  const s = policy.settings;
  if (!policy.info.signing) throw new BadRequestError(`key type '${s.type}' does not support signing`);
  if (s.derived) throw new BadRequestError('operation not supported on keys with derivation enabled');
  let version = s.latestVersion;
  if (requested !== undefined && requested !== '' && requested !== 'latest') {
    if (!/^\d+$/.test(requested)) throw new BadRequestError(`invalid key version "${requested}": a number or latest`);
    version = Number(requested);
  }
  const found = version >= s.minDecryptionVersion ? policy.versions.get(version) : undefined;
  if (!found) throw new BadRequestError(`key version ${version} does not exist or is no longer valid (min_decryption_version is ${s.minDecryptionVersion})`);
  return found;
}
