/**
 * `keys/:name/set-certificate`: the certificate chain of a key version
 * (https://developer.hashicorp.com/vault/api-docs/secret/transit#set-certificate-chain). The chain
 * starts with the end-entity certificate, whose public key must be the version's; setting a chain
 * replaces the previous one. Read and export return it.
 */
import { BadRequestError, definePath } from '../../../sdk/index.js';
import type { TransitContext } from '../context.js';
import { checkChainForVersion, parseCertificateChain } from '../crypto/csr.js';
import type { KeyVersion } from '../keys/key-version.js';
import { certificateVersion } from './csr.js';

export function setCertificatePath(ctx: TransitContext) {
  return definePath({
    pattern: 'keys/:name/set-certificate',
    fields: {
      name: { type: 'name', description: 'Name of a signing key.', required: true },
      version: { type: 'string', description: 'Key version the chain belongs to; latest or unset is the current version.' },
      certificate_chain: { type: 'string', description: 'PEM chain, end-entity certificate first; its public key must be the key version\'s.', required: true },
    },
    operations: {
      update: {
        summary: 'Set the certificate chain of a key version.',
        handler: async (_req, input) => {
          const chain = parseCertificateChain(input.certificate_chain);
          const policy = await ctx.keys.withLock(input.name, async () => {
            const current = await ctx.keys.get(input.name);
            if (!current) throw new BadRequestError(`key with provided name '${input.name}' not found`);
            const v = certificateVersion(current, input.version);
            checkChainForVersion(current.info, v.publicKey!, chain);
            const updated: KeyVersion = { ...v, certificateChain: chain.map((c) => c.der.toString('base64')) };
            const versions = new Map(current.versions);
            versions.set(v.version, updated);
            return ctx.keys.save(current.with({}, versions), [updated]);
          });
          // Vault names this field `certificate-chain`, OpenBao `certificate_chain`; clients of either find theirs.
          return { data: { name: policy.name, type: policy.settings.type, 'certificate-chain': input.certificate_chain, certificate_chain: input.certificate_chain } };
        },
      },
    },
    synopsis: 'Set the certificate chain of a key version.',
    description:
      'Stores a PEM chain (end-entity first) for a key version after checking that the leaf is not a CA, that no other ' +
      'certificate is a leaf, and that the leaf carries the version\'s public key. Overwrites any previous chain.',
  });
}
