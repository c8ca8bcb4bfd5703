/**
 * Version 1 (`options.version` 1 or unset): plain key/value. Any path holds one JSON object, written
 * whole and read back as written; LIST on a folder names the keys and sub-folders under it.
 */
import { BadRequestError, definePath, exactBody, listResponse, type LogicalRequest } from '../../../sdk/index.js';
import type { KvContext } from '../context.js';
import { V1_PREFIX, encodeJson, readJson, secretPath } from '../store.js';

export function v1Paths(ctx: KvContext) {
  const list = async (path: string) => {
    const folder = path === '' || path.endsWith('/') ? path : `${path}/`;
    return listResponse(await ctx.storage.list(V1_PREFIX + folder));
  };
  const write = async (req: LogicalRequest, input: { path: string }) => {
    const path = secretPath(input.path);
    if (Object.keys(req.data).length === 0) throw new BadRequestError('missing data fields');
    await ctx.storage.put(V1_PREFIX + path, encodeJson(exactBody(req.data) ?? req.data));
    return null;
  };
  return [
    definePath({
      pattern: '/',
      fields: {},
      operations: { list: { summary: 'List the keys at the top of the mount.', handler: () => list('') } },
      synopsis: 'List the keys at the top of the mount.',
      description: 'Folders end in "/".',
    }),
    definePath({
      pattern: ':path*',
      fields: { path: { type: 'string', description: 'The key.', required: true } },
      freeFormData: true,
      existenceCheck: async (_req, input) => (await ctx.storage.get(V1_PREFIX + input.path)) !== undefined,
      operations: {
        read: {
          summary: 'Read the data at the key.',
          handler: async (_req, input) => {
            const data = await readJson<Record<string, unknown>>(ctx.storage, V1_PREFIX + secretPath(input.path));
            return data ? { data } : null;
          },
        },
        create: { summary: 'Write data at a new key.', handler: write },
        update: { summary: 'Replace the data at the key.', handler: write },
        delete: {
          summary: 'Delete the key.',
          handler: async (_req, input) => {
            await ctx.storage.delete(V1_PREFIX + secretPath(input.path));
            return null;
          },
        },
        list: { summary: 'List the keys under a folder.', handler: (_req, input) => list(input.path) },
      },
      synopsis: 'Read, write, delete and list plain key/value data.',
      description: 'The request body is the data: every field is kept as given and returned on read. A write replaces the key whole.',
    }),
  ];
}
