/**
 * `data/:path`: a version 2 secret's data. Read (the current version, or `?version=N`), write a new
 * version (with check-and-set), patch the current version with a JSON merge patch, and DELETE,
 * which soft-deletes the current version. A deleted or destroyed version reads as a 404 that
 * still carries the version's metadata, as Vault answers.
 */
import { BadRequestError, InternalError, definePath, type FieldSpecs, type FieldValues, type LogicalRequest, type LogicalResponse } from '../../../sdk/index.js';
import type { KvContext } from '../context.js';
import { mergePatch } from '../merge-patch.js';
import {
  exactObjectField,
  isGone,
  newMetadata,
  putMetadata,
  readMetadata,
  readSecretVersion,
  readVersion,
  secretPath,
  timestamp,
  versionInfo,
} from '../store.js';
import { addVersion, checkCas } from '../versions.js';

const DATA_FIELDS = {
  path: { type: 'string', description: "The secret's path.", required: true },
  version: { type: 'int', description: 'The version to read; 0 (the default) reads the current one.', default: 0, minimum: 0 },
  data: { type: 'map', description: 'The secret: a JSON object, stored as given and returned on read (on PATCH, the merge patch).' },
  options: {
    type: 'map',
    description:
      'Write options. "cas" (check-and-set): the write happens only if it names the current version; 0 writes only a secret that does not exist yet.',
  },
} as const satisfies FieldSpecs;

type DataInput = FieldValues<typeof DATA_FIELDS>;

/** A 404 with no body but Vault's empty error list (a PATCH of nothing). */
const NOT_FOUND: LogicalResponse = { raw: { status: 404, body: { errors: [] } } };

export function dataPath(ctx: KvContext) {
  return definePath({
    pattern: 'data/:path*',
    fields: DATA_FIELDS,
    existenceCheck: async (_req, input) => (await readMetadata(ctx.storage, input.path)) !== undefined,
    operations: {
      read: { summary: 'Read a version of the secret.', handler: (_req, input) => read(ctx, input) },
      create: { summary: 'Write the first version of the secret.', handler: (req, input) => write(ctx, req, input) },
      update: { summary: 'Write a new version of the secret.', handler: (req, input) => write(ctx, req, input) },
      patch: { summary: 'Write a new version: the current one with a JSON merge patch applied.', handler: (req, input) => patch(ctx, req, input) },
      delete: { summary: 'Soft-delete the current version (undelete brings it back).', handler: (_req, input) => remove(ctx, input) },
    },
    synopsis: 'Write, read, patch and delete the versions of a secret.',
    description:
      'A write adds a version and answers its metadata; options.cas makes it conditional, and a mount or key with ' +
      'cas_required refuses writes without it. Reading a deleted or destroyed version answers 404 with its metadata. ' +
      'PATCH (Content-Type: application/merge-patch+json) merges "data" into the current version as a new version.',
  });
}

async function read(ctx: KvContext, input: DataInput): Promise<LogicalResponse | null> {
  const found = await readSecretVersion(ctx.storage, input.path, input.version, ctx.clock.now());
  if (!found) return null;
  if (!found.data) return { data: { data: null, metadata: found.metadata }, status: 404 };
  return { data: { data: found.data, metadata: found.metadata } };
}

async function write(ctx: KvContext, req: LogicalRequest, input: DataInput): Promise<LogicalResponse> {
  const path = secretPath(input.path);
  const data = exactObjectField(req, 'data', input.data);
  if (!data) throw new BadRequestError('no data provided');
  return ctx.locks.run(path, async () => {
    const config = await ctx.config.get();
    const now = ctx.clock.now();
    const meta = (await readMetadata(ctx.storage, path)) ?? newMetadata(timestamp(now));
    checkCas(input.options, config, meta);
    await ctx.storage.batch(addVersion(path, meta, config, data, now));
    return { data: versionInfo(meta, meta.currentVersion) };
  });
}

async function patch(ctx: KvContext, req: LogicalRequest, input: DataInput): Promise<LogicalResponse> {
  const path = secretPath(input.path);
  const changes = exactObjectField(req, 'data', input.data);
  if (!changes) throw new BadRequestError('no data provided');
  return ctx.locks.run(path, async () => {
    const meta = await readMetadata(ctx.storage, path);
    if (!meta) return NOT_FOUND;
    const config = await ctx.config.get();
    checkCas(input.options, config, meta);
    const state = meta.versions[String(meta.currentVersion)];
    if (!state) return NOT_FOUND;
    const now = ctx.clock.now();
    if (isGone(state, now)) return { data: versionInfo(meta, meta.currentVersion), status: 404 };
    const current = await readVersion(ctx.storage, path, meta.currentVersion);
    if (!current) throw new InternalError(`kv: version ${meta.currentVersion} of a secret has metadata but no data`);
    const merged = mergePatch(current, changes) as Record<string, unknown>;
    await ctx.storage.batch(addVersion(path, meta, config, merged, now));
    return { data: versionInfo(meta, meta.currentVersion) };
  });
}

async function remove(ctx: KvContext, input: DataInput): Promise<null> {
  const path = secretPath(input.path);
  await ctx.locks.run(path, async () => {
    const meta = await readMetadata(ctx.storage, path);
    const state = meta?.versions[String(meta.currentVersion)];
    const now = ctx.clock.now();
    if (!meta || !state || isGone(state, now)) return;
    state.deletionTime = timestamp(now);
    await ctx.storage.batch([putMetadata(path, meta)]);
  });
  return null;
}
