/**
 * Vault sys paths Keywarden does not serve, answered with a 404 that says why instead of Vault's
 * bare "unsupported path", so an operator following Vault's documentation learns at once that the
 * feature is absent rather than misspelled.
 */
import { NotFoundError } from '../../errors.js';
import { definePath, type AnyPathDefinition, type Operation } from '../../framework/index.js';

const REFUSED: readonly { readonly prefix: string; readonly why: string }[] = [
  {
    prefix: 'raw',
    why: 'sys/raw is not supported: it reads and writes storage past the barrier\'s checks, and every change to what the server stores goes through the API that owns it',
  },
  {
    prefix: 'pprof',
    why: 'sys/pprof is not supported: it is Go\'s profiler; profile a Keywarden node with Node.js\'s --cpu-prof or --heapsnapshot-signal on the host',
  },
  { prefix: 'mfa', why: 'sys/mfa is not supported: login MFA and step-up MFA are not implemented' },
  { prefix: 'replication', why: 'sys/replication is not supported: replication is a Vault Enterprise feature; Keywarden nodes share one PostgreSQL store (HA) instead' },
  { prefix: 'namespaces', why: 'sys/namespaces is not supported: namespaces are a Vault Enterprise feature; every mount is in the root namespace' },
];

// No patch: PATCH's content-type check would answer before the refusal (and before the sealed check).
const OPERATIONS: readonly Operation[] = ['read', 'list', 'update', 'delete'];

export function outOfScopePaths(): AnyPathDefinition[] {
  return REFUSED.flatMap(({ prefix, why }) => {
    const refuse = async (): Promise<never> => {
      throw new NotFoundError(why);
    };
    const operations = Object.fromEntries(OPERATIONS.map((op) => [op, { summary: 'Not supported.', handler: refuse }]));
    const fields = { rest: { type: 'string', description: 'Anything below the path.' } } as const;
    return [
      definePath({ pattern: `${prefix}/`, fields: {}, freeFormData: true, anyToken: true, operations, synopsis: 'Not supported.', description: why }),
      definePath({ pattern: `${prefix}/:rest*`, fields, freeFormData: true, anyToken: true, operations, synopsis: 'Not supported.', description: why }),
    ];
  });
}
