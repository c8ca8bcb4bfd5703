/**
 * `metadata/:path`: a version 2 secret's metadata and settings. Read (every version's times and
 * state), write or patch the key's settings (max_versions, cas_required, delete_version_after,
 * custom_metadata), DELETE the secret with every version, and LIST the secrets under a folder
 * (`metadata/` lists the mount's top level).
 */
import { definePath, goDuration, listResponse, type FieldSpecs, type FieldValues, type LogicalRequest, type LogicalResponse } from '../../../sdk/index.js';
import type { KvContext } from '../context.js';
import { mergePatch } from '../merge-patch.js';
import {
  METADATA_PREFIX,
  exactObjectField,
  newMetadata,
  parseCustomMetadata,
  putMetadata,
  readMetadata,
  secretPath,
  timestamp,
  versionKey,
  type KeyMetadata,
} from '../store.js';

const METADATA_FIELDS = {
  path: { type: 'string', description: "The secret's path (a folder, ending in /, for LIST).", required: true },
  max_versions: {
    type: 'int',
    description: "How many versions the key keeps (the oldest are destroyed beyond it); 0: the mount's setting.",
    minimum: 0,
  },
  cas_required: { type: 'bool', description: 'Refuse writes to the key without the check-and-set option.' },
  delete_version_after: {
    type: 'duration',
    description: "How long after its write each new version is deleted; the smaller of this and the mount's applies; 0: the mount's setting.",
  },
  custom_metadata: {
    type: 'map',
    description: 'Up to 64 string pairs kept with the key (keys up to 128 bytes, values up to 512). On PATCH, a null value removes a key.',
  },
} as const satisfies FieldSpecs;

type MetadataInput = FieldValues<typeof METADATA_FIELDS>;

export function metadataPaths(ctx: KvContext) {
  const list = async (_req: unknown, input: { path?: string }) => {
    const folder = input.path ?? '';
    const keys = await ctx.storage.list(METADATA_PREFIX + (folder === '' || folder.endsWith('/') ? folder : `${folder}/`));
    return listResponse(keys);
  };
  return [
    definePath({
      pattern: 'metadata/',
      fields: {},
      operations: { list: { summary: 'List the secrets at the top of the mount.', handler: (req) => list(req, {}) } },
      synopsis: 'List the secrets at the top of the mount.',
      description: 'Folders end in "/". A secret whose versions are all deleted or destroyed is still listed until its metadata is deleted.',
    }),
    definePath({
      pattern: 'metadata/:path*',
      fields: METADATA_FIELDS,
      existenceCheck: async (_req, input) => (await readMetadata(ctx.storage, input.path)) !== undefined,
      operations: {
        read: { summary: "Read the secret's metadata and versions.", handler: (_req, input) => read(ctx, input) },
        create: { summary: "Set the settings of a secret not written yet.", handler: (req, input) => write(ctx, req, input, false) },
        update: { summary: "Change the secret's settings.", handler: (req, input) => write(ctx, req, input, false) },
        patch: { summary: "Change the secret's settings; custom_metadata is merged.", handler: (req, input) => write(ctx, req, input, true) },
        delete: { summary: 'Delete the secret: its metadata and every version.', handler: (_req, input) => remove(ctx, input) },
        list: { summary: 'List the secrets under a folder.', handler: list },
      },
      synopsis: "Read and change a secret's metadata, delete a secret whole, and list secrets.",
      description:
        'A write changes only the settings it names and may come before the first version. PATCH (Content-Type: ' +
        'application/merge-patch+json) needs an existing key. DELETE removes every version for good.',
    }),
  ];
}

function describe(meta: KeyMetadata): Record<string, unknown> {
  const versions: Record<string, unknown> = {};
  for (const [version, state] of Object.entries(meta.versions)) {
    versions[version] = { created_time: state.createdTime, deletion_time: state.deletionTime, destroyed: state.destroyed };
  }
  return {
    cas_required: meta.casRequired,
    created_time: meta.createdTime,
    current_version: meta.currentVersion,
    custom_metadata: meta.customMetadata,
    delete_version_after: goDuration(meta.deleteVersionAfter),
    max_versions: meta.maxVersions,
    oldest_version: meta.oldestVersion,
    updated_time: meta.updatedTime,
    versions,
  };
}

async function read(ctx: KvContext, input: MetadataInput): Promise<LogicalResponse | null> {
  const meta = await readMetadata(ctx.storage, secretPath(input.path));
  return meta ? { data: describe(meta) } : null;
}

async function write(ctx: KvContext, req: LogicalRequest, input: MetadataInput, isPatch: boolean): Promise<LogicalResponse | null> {
  const path = secretPath(input.path);
  const customMetadata = exactObjectField(req, 'custom_metadata', input.custom_metadata);
  return ctx.locks.run(path, async () => {
    const now = timestamp(ctx.clock.now());
    const existing = await readMetadata(ctx.storage, path);
    if (isPatch && !existing) return { raw: { status: 404, body: { errors: [] } } };
    const meta = existing ?? newMetadata(now);
    if (input.max_versions !== undefined) meta.maxVersions = input.max_versions;
    if (input.cas_required !== undefined) meta.casRequired = input.cas_required;
    if (input.delete_version_after !== undefined) meta.deleteVersionAfter = input.delete_version_after;
    if (customMetadata !== undefined) {
      const next = isPatch ? (mergePatch(meta.customMetadata ?? {}, customMetadata) as Record<string, unknown>) : customMetadata;
      meta.customMetadata = parseCustomMetadata(next);
    }
    meta.updatedTime = now;
    await ctx.storage.batch([putMetadata(path, meta)]);
    return null;
  });
}

async function remove(ctx: KvContext, input: MetadataInput): Promise<null> {
  const path = secretPath(input.path);
  await ctx.locks.run(path, async () => {
    const meta = await readMetadata(ctx.storage, path);
    if (!meta) return;
    const versions = Object.keys(meta.versions).map((v) => ({ type: 'delete' as const, key: versionKey(path, Number(v)) }));
    await ctx.storage.batch([...versions, { type: 'delete', key: METADATA_PREFIX + path }]);
  });
  return null;
}
