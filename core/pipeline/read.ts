/**
 * Stage 1, read: the HTTP method becomes a logical operation (Vault's mapping), the path is
 * checked, and the data is taken from the query (reads, lists, deletes without a body) or the body.
 */
import { BadRequestError, UnsupportedMediaTypeError, UnsupportedOperationError } from '../errors.js';
import { parseBool, parseDurationSeconds, CoercionError } from '../framework/fields.js';
import type { Operation } from '../framework/request.js';
import type { HostRequest, ReadRequest } from './types.js';

/** A `.` or `..` segment anywhere in a path. */
const DOT_SEGMENT = /(?:^|\/)\.\.?(?:\/|$)/;

export function readRequest(id: string, http: HostRequest): ReadRequest {
  const operation = operationOf(http);
  let path = http.path;
  if (DOT_SEGMENT.test(path)) {
    throw new BadRequestError('path cannot contain parent references');
  }
  if (operation === 'list' && !path.endsWith('/')) path += '/';
  return {
    id,
    http,
    operation,
    path,
    data: requestData(http, operation),
    wantsHelp: http.query.help !== undefined && safeBool(http.query.help),
    clientToken: tokenOf(http),
    wrapTtl: wrapTtlOf(http),
  };
}

/** X-Vault-Wrap-TTL, a duration ("5m") or seconds; absent when the answer is not to be wrapped. */
function wrapTtlOf(request: HostRequest): number | undefined {
  const header = request.headers['x-vault-wrap-ttl'];
  if (header === undefined) return undefined;
  const text = (Array.isArray(header) ? header[0]! : header).trim();
  let seconds: number;
  try {
    seconds = parseDurationSeconds(text);
  } catch (err) {
    if (err instanceof CoercionError) throw new BadRequestError(`header X-Vault-Wrap-TTL: ${err.message}`);
    throw err;
  }
  // Vault answers unwrapped for a zero TTL; a client that asked for wrapping gets a 400 instead.
  if (!(seconds > 0)) throw new BadRequestError('header X-Vault-Wrap-TTL: the wrapping TTL must be positive');
  return seconds;
}

/** Method → operation, as Vault maps them. */
function operationOf(request: HostRequest): Operation {
  switch (request.method) {
    case 'GET':
    case 'HEAD': {
      const list = request.query.list;
      if (list === undefined) return 'read';
      try {
        return parseBool(list) ? 'list' : 'read';
      } catch (err) {
        if (err instanceof CoercionError) throw new BadRequestError(`invalid value for "list": ${err.message}`);
        throw err;
      }
    }
    case 'LIST':
      return 'list';
    case 'POST':
    case 'PUT':
      return 'update';
    case 'DELETE':
      return 'delete';
    case 'PATCH': {
      const type = String(request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
      if (type !== 'application/merge-patch+json') {
        throw new UnsupportedMediaTypeError('PATCH requires Content-Type: application/merge-patch+json');
      }
      return 'patch';
    }
    default:
      throw new UnsupportedOperationError(`unsupported method ${request.method}`);
  }
}

function safeBool(text: string): boolean {
  try {
    return parseBool(text);
  } catch {
    return false;
  }
}

/** Query parameters are the data of reads, lists and deletes; bodies are the data of writes. */
function requestData(request: HostRequest, operation: Operation): Record<string, unknown> {
  if (operation === 'read' || operation === 'list' || (operation === 'delete' && request.body === undefined)) {
    const { list: _list, help: _help, ...rest } = request.query;
    return { ...rest };
  }
  if (request.body === undefined || request.body === null) return {};
  if (typeof request.body !== 'object' || Array.isArray(request.body)) {
    throw new BadRequestError('the request body must be a JSON object');
  }
  return request.body as Record<string, unknown>;
}

/** `X-Vault-Token`, then `X-Service-Token`, then `Authorization: Bearer`. */
export function tokenOf(request: Pick<HostRequest, 'headers'>): string | undefined {
  const first = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
  const direct = first(request.headers['x-vault-token']) ?? first(request.headers['x-service-token']);
  if (direct) return direct.trim();
  const authorization = request.headers.authorization;
  for (const value of Array.isArray(authorization) ? authorization : authorization ? [authorization] : []) {
    if (value.startsWith('Bearer ')) return value.slice('Bearer '.length).trim();
  }
  return undefined;
}
