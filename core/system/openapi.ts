/**
 * The OpenAPI 3.0 document of `sys/internal/specs/openapi`, generated from the framework's path
 * definitions of the sys backend and every mounted backend (fields, types, descriptions,
 * operations), with Vault's extensions (x-vault-sudo, x-vault-unauthenticated, x-vault-createSupported)
 * and x-keywarden-refused-fields: the fields Vault defines on a path that are refused here, with why.
 */
import type { Backend } from '../framework/backend.js';
import type { PathHelp, FieldHelp } from '../framework/help.js';
import type { MountTable } from '../mounts/mount-table.js';

export interface MountedPaths {
  /** With a trailing slash: `sys/`, `transit/`, `auth/cloud/`. */
  readonly prefix: string;
  readonly paths: readonly PathHelp[];
}

/** Every mounted backend's paths under its prefix, sys first (`mounts` undefined while sealed). */
export function mountedPaths(system: Pick<Backend, 'describePaths'>, mounts: MountTable | undefined): MountedPaths[] {
  const mounted: MountedPaths[] = [{ prefix: 'sys/', paths: system.describePaths() }];
  if (!mounts) return mounted;
  for (const entry of [...mounts.entries('secret'), ...mounts.entries('auth')]) {
    const live = mounts.live(entry.table, entry.path);
    if (live.backend) mounted.push({ prefix: live.routePrefix, paths: live.backend.describePaths() });
  }
  return mounted;
}

const METHODS: Record<string, string> = { read: 'get', list: 'get', update: 'post', create: 'post', delete: 'delete', patch: 'patch' };

function schemaOf(field: FieldHelp): Record<string, unknown> {
  const base: Record<string, unknown> = { description: field.description };
  if (field.default !== undefined) base.default = field.default;
  if (field.allowedValues) base.enum = field.allowedValues;
  switch (field.type) {
    case 'int':
      return { ...base, type: 'integer' };
    case 'bool':
      return { ...base, type: 'boolean' };
    case 'duration':
      return { ...base, type: 'string', format: 'duration', 'x-vault-displayAttrs': { description: 'seconds or a Go duration such as 1h30m' } };
    case 'comma-string-list':
    case 'string-list':
      return { ...base, type: 'array', items: { type: 'string' } };
    case 'comma-int-list':
      return { ...base, type: 'array', items: { type: 'integer' } };
    case 'map':
    case 'header-map':
      return { ...base, type: 'object' };
    case 'object-list':
      return { ...base, type: 'array', items: { type: 'object' } };
    default:
      return { ...base, type: 'string' };
  }
}

function operationId(path: string, op: string): string {
  return `${op}-${path.replace(/[{}]/g, '').replace(/[^A-Za-z0-9]+/g, '-').replace(/-+$/, '')}`;
}

export function openApiDocument(mounts: readonly MountedPaths[], version: string, includePath: (path: PathHelp) => boolean): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  for (const mount of mounts) {
    for (const path of mount.paths) {
      if (!includePath(path)) continue;
      const full = `/${mount.prefix}${path.openApiPath}`;
      const fields = Object.entries(path.fields);
      const inPath = fields.filter(([, f]) => f.inPath);
      const body = fields.filter(([, f]) => !f.inPath);
      const item: Record<string, unknown> = {
        description: path.synopsis,
        ...(path.sudo ? { 'x-vault-sudo': true } : {}),
        ...(path.unauthenticated ? { 'x-vault-unauthenticated': true } : {}),
        ...(path.createSupported ? { 'x-vault-createSupported': true } : {}),
        ...(Object.keys(path.refusedFields).length > 0 ? { 'x-keywarden-refused-fields': path.refusedFields } : {}),
        parameters: inPath.map(([name, f]) => ({ name, in: 'path', required: true, description: f.description, schema: schemaOf(f) })),
      };
      for (const [op, spec] of Object.entries(path.operations)) {
        const method = METHODS[op];
        if (!method || (item[method] && op !== 'list')) continue;
        const operation: Record<string, unknown> = {
          summary: spec.summary,
          description: path.description,
          operationId: operationId(full, op),
          tags: [mount.prefix.replace(/\/$/, '')],
          responses: { '200': { description: 'OK' }, '204': { description: 'empty body' } },
        };
        if (op === 'list') {
          operation.parameters = [{ name: 'list', in: 'query', required: true, schema: { type: 'string', enum: ['true'] } }];
        } else if (method === 'get' || method === 'delete') {
          if (body.length) operation.parameters = body.map(([name, f]) => ({ name, in: 'query', description: f.description, schema: schemaOf(f) }));
        } else if (body.length) {
          operation.requestBody = {
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  properties: Object.fromEntries(body.map(([name, f]) => [name, schemaOf(f)])),
                  ...(body.some(([, f]) => f.required) ? { required: body.filter(([, f]) => f.required).map(([n]) => n) } : {}),
                },
              },
            },
          };
        }
        if (op === 'list' && item.get) {
          (item.get as Record<string, unknown>)['x-vault-list'] = operation;
        } else {
          item[method] = operation;
        }
      }
      paths[full] = item;
    }
  }
  return {
    openapi: '3.0.2',
    info: {
      title: 'Keywarden API',
      description: 'HTTP API of Keywarden (Vault-compatible): sys, auth methods and secrets engines mounted on this server.',
      version,
      license: { name: 'MIT', url: 'https://opensource.org/licenses/MIT' },
    },
    paths,
  };
}
