/** `sys/policy[/:name]` (legacy, what hvac and node-vault use) and `sys/policies/acl[/:name]` (the CLI's). */
import { BadRequestError } from '../../errors.js';
import { definePath, listResponse, type AnyPathDefinition } from '../../framework/index.js';
import type { PolicyStore } from '../../auth/policy-store.js';

const NAME = { type: 'string', description: 'Name of the policy (lower-cased).', required: true } as const;

/** Policy text may arrive base64-encoded (the API allows it); HCL and JSON never look like base64. */
export function policyText(raw: string): string {
  const compact = raw.replace(/\s+/g, '');
  if (compact.length > 0 && compact.length % 4 === 0 && /^[A-Za-z0-9+/]+={0,2}$/.test(compact)) {
    const decoded = Buffer.from(compact, 'base64').toString('utf8');
    if (!decoded.includes('\uFFFD')) return decoded;
  }
  return raw;
}

export function policyPaths(getStore: () => PolicyStore): AnyPathDefinition[] {
  const write = async (name: string, text: string | undefined) => {
    if (text === undefined || text.trim() === '') throw new BadRequestError("'policy' parameter not supplied or empty");
    const result = await getStore().set(name, policyText(text));
    return result.renamed ? { warnings: [`policy name was converted from "${name}" to "${result.name}"`] } : null;
  };
  const legacyList = async () => {
    const names = [...(await getStore().list()), 'root'];
    return { data: { keys: names, policies: names } };
  };
  return [
    definePath({
      pattern: 'policy/',
      fields: {},
      operations: {
        read: { summary: 'List policies.', handler: async () => legacyList() },
        list: { summary: 'List policies.', handler: async () => legacyList() },
      },
      synopsis: 'List the ACL policies.',
      description: 'GET or LIST; both keys and policies hold the names; root is included.',
    }),
    definePath({
      pattern: 'policy/:name',
      fields: {
        name: NAME,
        policy: { type: 'string', description: 'The policy document (HCL or JSON).' },
        rules: { type: 'string', description: 'Legacy name of policy.' },
      },
      operations: {
        read: {
          summary: 'Read a policy.',
          handler: async (_req, input) => {
            if (input.name.toLowerCase() === 'root') return { data: { name: 'root', rules: '' } };
            const policy = await getStore().get(input.name);
            return policy ? { data: { name: policy.name, rules: policy.raw } } : null;
          },
        },
        update: { summary: 'Write a policy.', handler: async (_req, input) => write(input.name, input.policy ?? input.rules) },
        delete: {
          summary: 'Delete a policy.',
          handler: async (_req, input) => {
            await getStore().delete(input.name);
            return null;
          },
        },
      },
      synopsis: 'Read, write or delete an ACL policy.',
      description:
        'Write with policy (or the legacy rules) in HCL or JSON; an unparsable document is refused with the line and what was expected. ' +
        'root, response-wrapping and control-group cannot be written or deleted; default cannot be deleted.',
    }),
    definePath({
      pattern: 'policies/acl/',
      fields: {},
      operations: {
        list: { summary: 'List policies.', handler: async () => listResponse([...(await getStore().list()), 'root'].sort()) },
      },
      synopsis: 'List the ACL policies.',
      description: 'Names of every ACL policy, root included.',
    }),
    definePath({
      pattern: 'policies/acl/:name',
      fields: { name: NAME, policy: { type: 'string', description: 'The policy document (HCL or JSON, optionally base64-encoded).' } },
      operations: {
        read: {
          summary: 'Read a policy.',
          handler: async (_req, input) => {
            if (input.name.toLowerCase() === 'root') return { data: { name: 'root', policy: '' } };
            const policy = await getStore().get(input.name);
            return policy ? { data: { name: policy.name, policy: policy.raw } } : null;
          },
        },
        update: { summary: 'Write a policy.', handler: async (_req, input) => write(input.name, input.policy) },
        delete: {
          summary: 'Delete a policy.',
          handler: async (_req, input) => {
            await getStore().delete(input.name);
            return null;
          },
        },
      },
      synopsis: 'Read, write or delete an ACL policy.',
      description: 'root, response-wrapping and control-group cannot be written or deleted; default cannot be deleted.',
    }),
  ];
}
