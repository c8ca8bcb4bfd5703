/**
 * `issue/:role`: a new key and a certificate for it, from a role. The answer holds the private
 * key, which is never stored; with the role's `generate_lease` it comes with a lease whose
 * revocation revokes the certificate.
 */
import { BadRequestError, definePath, type AnyPathDefinition } from '../../../sdk/index.js';
import type { PkiContext } from '../context.js';
import { checkKey, generateKey, privateKeyPem } from '../keys.js';
import { issueLeaf } from '../issue.js';
import { LEAF_FIELDS, LEAF_REFUSED } from './leaf-fields.js';

export function issuePath(ctx: PkiContext): AnyPathDefinition {
  return definePath({
    pattern: 'issue/:role',
    fields: {
      role: { type: 'string', description: 'The role to issue under.', required: true },
      ...LEAF_FIELDS,
      private_key_format: { type: 'string', description: '`der` (PKCS#1 or SEC 1 in PEM, the default) or `pkcs8`.', default: 'der', allowedValues: ['', 'der', 'pem', 'pkcs8'] },
    },
    refusedFields: LEAF_REFUSED,
    operations: {
      update: {
        summary: 'Issue a certificate and its key.',
        handler: async (_req, input) => {
          const role = await ctx.store.role(input.role);
          if (!role) throw new BadRequestError(`unknown role: ${input.role}`);
          if (role.key_type === 'any') throw new BadRequestError('role key type "any" not allowed for issuing certificates, only signing');
          const key = checkKey(role.key_type, role.key_bits);
          const { privateKey, publicKey } = await generateKey(key.type, key.bits);
          const { response } = await issueLeaf(ctx, role, {
            commonName: input.common_name,
            altNames: input.alt_names,
            ipSans: input.ip_sans,
            ttl: input.ttl,
            excludeCnFromSans: input.exclude_cn_from_sans,
            publicKey,
          });
          response.data = { ...response.data, private_key: privateKeyPem(privateKey, input.private_key_format), private_key_type: key.type };
          return response;
        },
      },
    },
    synopsis: 'Issue a certificate and its key.',
    description: 'Makes a key of the role\'s type and a certificate for the names asked, checked against the role.',
  });
}
