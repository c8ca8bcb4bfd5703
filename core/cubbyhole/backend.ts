/**
 * The cubbyhole, mounted at `cubbyhole/` (built in, type `cubbyhole`): a private key/value store
 * for each service token. A token sees only its own: every key lives under the token's salted hash,
 * and the store is destroyed with the token (revoked, expired, or revoked with its parent). Batch
 * tokens have none. Response wrapping keeps each wrapped response in its wrapping token's cubbyhole.
 */
import { BadRequestError, PermissionDeniedError } from '../errors.js';
import { FrameworkBackend, definePath, listResponse, type LogicalRequest, type RequestTarget } from '../framework/index.js';
import type { TokenStore } from '../auth/token-store.js';
import { deletePrefix } from '../../storage/view.js';
import type { Storage } from '../../storage/storage.js';

/** Where a token's cubbyhole lives in the mount's storage. */
export const cubbyholePrefix = (tokenHash: string): string => `${tokenHash}/`;

/** Destroys a token's cubbyhole. */
export function destroyCubbyhole(storage: Storage, tokenHash: string): Promise<void> {
  return deletePrefix(storage, cubbyholePrefix(tokenHash));
}

export function createCubbyholeBackend(tokens: TokenStore): FrameworkBackend {
  /** The caller's own cubbyhole prefix; the pipeline has authenticated the token already. */
  const own = async (req: RequestTarget): Promise<string> => {
    if (!req.clientToken || !req.auth) throw new PermissionDeniedError();
    if (req.auth.tokenType === 'batch') throw new BadRequestError("cubbyhole operations are only supported by 'service' type tokens");
    return cubbyholePrefix(await tokens.hashToken(req.clientToken));
  };
  const PATH = { type: 'string', description: 'The key within the calling token\'s cubbyhole.', required: true } as const;

  return new FrameworkBackend({
    description: 'per-token private secret storage',
    paths: [
      definePath({
        pattern: ':path*',
        fields: { path: PATH },
        freeFormData: true,
        existenceCheck: async (req, input) => (await req.storage.get((await own(req)) + input.path)) !== undefined,
        operations: {
          read: {
            summary: 'Read a secret from the calling token\'s cubbyhole.',
            handler: async (req, input) => {
              const raw = await req.storage.get((await own(req)) + input.path);
              return raw ? { data: JSON.parse(Buffer.from(raw).toString('utf8')) as Record<string, unknown> } : null;
            },
          },
          create: { summary: 'Store a secret in the calling token\'s cubbyhole.', handler: (req, input) => store(req, input.path, own) },
          update: { summary: 'Replace a secret in the calling token\'s cubbyhole.', handler: (req, input) => store(req, input.path, own) },
          list: { summary: 'List the keys under a folder of the calling token\'s cubbyhole.', handler: (req, input) => list(req, input.path, own) },
          delete: {
            summary: 'Delete a secret from the calling token\'s cubbyhole.',
            handler: async (req, input) => {
              await req.storage.delete((await own(req)) + input.path);
              return null;
            },
          },
        },
        synopsis: 'A secret in the calling token\'s cubbyhole.',
        description:
          'Writes keep every field of the body as the secret; a read returns them; a list (a path ending in "/") names the keys ' +
          'of a folder. Only the token that wrote a secret can read it, and it goes when the token goes.',
      }),
      definePath({
        pattern: '/',
        fields: {},
        operations: { list: { summary: 'List the top-level keys in the calling token\'s cubbyhole.', handler: async (req) => list(req, '', own) } },
        synopsis: 'Keys at the top of the calling token\'s cubbyhole.',
        description: 'Lists the top-level keys of the calling token\'s cubbyhole; folders end in "/".',
      }),
    ],
  });
}

async function list(req: LogicalRequest, path: string, own: (req: LogicalRequest) => Promise<string>) {
  const folder = path === '' ? '' : `${path.replace(/\/+$/, '')}/`;
  return listResponse(await req.storage.list((await own(req)) + folder));
}

async function store(req: LogicalRequest, path: string, own: (req: LogicalRequest) => Promise<string>): Promise<null> {
  const { path: _path, ...secret } = req.data;
  if (Object.keys(secret).length === 0) throw new BadRequestError('missing data fields');
  if (path.endsWith('/')) throw new BadRequestError('a secret cannot be written at a folder path (ending in "/")');
  await req.storage.put((await own(req)) + path, Buffer.from(JSON.stringify(secret), 'utf8'));
  return null;
}
