/**
 * `sign/:role`: a certificate for the key of a CSR, from a role. The request's signature is
 * checked, its key must be of the role's type and at least its size, and its names (or, with the
 * role's use_csr_* turned off, the request's fields) are checked against the role.
 */
import { BadRequestError, definePath, type AnyPathDefinition } from '../../../sdk/index.js';
import type { PkiContext } from '../context.js';
import { parseCsr } from '../der.js';
import { describeKey } from '../keys.js';
import { issueLeaf } from '../issue.js';
import { LEAF_FIELDS, LEAF_REFUSED } from './leaf-fields.js';

export function signPath(ctx: PkiContext): AnyPathDefinition {
  return definePath({
    pattern: 'sign/:role',
    fields: {
      role: { type: 'string', description: 'The role to sign under.', required: true },
      csr: { type: 'string', description: 'The PEM certification request.', required: true },
      ...LEAF_FIELDS,
    },
    refusedFields: LEAF_REFUSED,
    operations: {
      update: {
        summary: 'Sign a CSR.',
        handler: async (_req, input) => {
          const role = await ctx.store.role(input.role);
          if (!role) throw new BadRequestError(`unknown role: ${input.role}`);
          const csr = parseCsr(input.csr);
          const key = describeKey(csr.publicKey);
          if (role.key_type !== 'any') {
            if (key.type !== role.key_type) throw new BadRequestError(`role requires keys of type ${role.key_type}`);
            if (key.bits < role.key_bits) throw new BadRequestError(`role requires a minimum of a ${role.key_bits}-bit key, but CSR's key is ${key.bits} bits`);
          }
          const { response } = await issueLeaf(ctx, role, {
            commonName: role.use_csr_common_name ? csr.commonName : input.common_name,
            altNames: role.use_csr_sans ? [...csr.dnsNames, ...csr.emails] : input.alt_names,
            ipSans: role.use_csr_sans ? csr.ips : input.ip_sans,
            ttl: input.ttl,
            excludeCnFromSans: input.exclude_cn_from_sans,
            publicKey: csr.publicKey,
          });
          return response;
        },
      },
    },
    synopsis: 'Sign a certificate request.',
    description: 'Issues a certificate for the key of a PKCS#10 request, under the role\'s rules.',
  });
}
