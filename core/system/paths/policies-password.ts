/**
 * `sys/policies/password` (list), `sys/policies/password/:name` (read, write, delete) and
 * `sys/policies/password/:name/generate`: password policies kept behind the barrier, and passwords
 * generated from them (core/system/password-policy.ts;
 * https://developer.hashicorp.com/vault/api-docs/system/policies-password).
 */
import { BadRequestError, NotFoundError } from '../../errors.js';
import { definePath, listResponse, type AnyPathDefinition } from '../../framework/index.js';
import { generatePassword, parsePasswordPolicy } from '../password-policy.js';
import { policyText } from './policies.js';
import type { SystemDeps } from '../services.js';

const PREFIX = 'sys/password-policy/';

/** Vault's name rule for these policies: word characters, with - and . inside. */
const NAME = { type: 'string', description: 'Name of the password policy.', required: true } as const;

function checkedName(name: string): string {
  if (!/^\w(?:[\w.-]*\w)?$/.test(name)) throw new BadRequestError(`name: "${name}" is not a valid password policy name (letters, digits, _, and - or . inside)`);
  return name;
}

export function passwordPolicyPaths(services: SystemDeps): AnyPathDefinition[] {
  const storage = () => services.barrier;
  const stored = async (name: string): Promise<string> => {
    const raw = await storage().get(PREFIX + checkedName(name));
    if (!raw) throw new NotFoundError('policy does not exist');
    return (JSON.parse(Buffer.from(raw).toString('utf8')) as { policy: string }).policy;
  };
  return [
    definePath({
      pattern: 'policies/password/',
      fields: {},
      operations: {
        list: { summary: 'List the password policies.', handler: async () => listResponse((await storage().list(PREFIX)).sort()) },
      },
      synopsis: 'List the password policies.',
      description: 'Names of every password policy.',
    }),
    definePath({
      pattern: 'policies/password/:name',
      fields: {
        name: NAME,
        policy: { type: 'string', description: 'The policy: HCL or JSON with length and rule "charset" blocks, optionally base64-encoded.' },
      },
      operations: {
        read: { summary: 'Read a password policy.', handler: async (_req, input) => ({ data: { policy: await stored(input.name) } }) },
        update: {
          summary: 'Write a password policy.',
          handler: async (_req, input) => {
            const name = checkedName(input.name);
            if (input.policy === undefined || input.policy === '') throw new BadRequestError('missing policy');
            const text = policyText(input.policy);
            parsePasswordPolicy(text);
            await storage().put(PREFIX + name, Buffer.from(JSON.stringify({ policy: text }), 'utf8'));
            return null;
          },
        },
        delete: {
          summary: 'Delete a password policy.',
          handler: async (_req, input) => {
            await storage().delete(PREFIX + checkedName(input.name));
            return null;
          },
        },
      },
      synopsis: 'One password policy.',
      description:
        'A policy has a length (4 to 100) and one or more rule "charset" blocks, each with its characters and min-chars. ' +
        'A policy whose rules cannot be met together, or with a non-printable character, is refused with 400.',
    }),
    definePath({
      pattern: 'policies/password/:name/generate',
      fields: { name: NAME },
      operations: {
        read: {
          summary: 'Generate a password from a policy.',
          handler: async (_req, input) => ({ data: { password: await generatePassword(parsePasswordPolicy(await stored(input.name))) } }),
        },
      },
      synopsis: 'Generate a password from a password policy.',
      description: 'Each character is drawn with crypto.randomInt from the rules\' characters; a candidate that misses a rule\'s min-chars is drawn again.',
    }),
  ];
}
