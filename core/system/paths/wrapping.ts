/**
 * `sys/wrapping/*`: wrap arbitrary data, unwrap (with the wrapping token as the caller's token, or
 * in the body), look a wrapping token up without spending it (unauthenticated, as in Vault), and
 * rewrap a response under a new token.
 */
import { BadRequestError } from '../../errors.js';
import { definePath, type LogicalRequest } from '../../framework/index.js';
import type { ResponseWrapper } from '../../wrapping/wrapper.js';

const TOKEN = { type: 'string', description: 'The wrapping token; when absent, the token the request is made with.', sensitive: true } as const;

export function wrappingPaths(wrapper: () => ResponseWrapper) {
  /** The wrapping token named in the body, or the caller's own token (then already spent by the pipeline). */
  const target = (req: LogicalRequest, given: string | undefined): { id: string; spent: boolean } => {
    if (given) return { id: given, spent: false };
    if (!req.clientToken) throw new BadRequestError('no wrapping token: send it as the request token or as "token"');
    return { id: req.clientToken, spent: true };
  };

  return [
    definePath({
      pattern: 'wrapping/wrap',
      fields: {},
      freeFormData: true,
      operations: {
        update: {
          summary: 'Wrap the request body in a new wrapping token.',
          handler: async (req) => {
            if (req.wrapTtl === undefined) throw new BadRequestError('wrapping requires a TTL: set the X-Vault-Wrap-TTL header');
            return { data: { ...req.data } };
          },
        },
      },
      synopsis: 'Wrap data in a single-use token.',
      description: 'Answers the body as data, wrapped for the TTL in X-Vault-Wrap-TTL: the client gets only wrap_info. An empty body wraps an empty object, as in Vault.',
    }),
    definePath({
      pattern: 'wrapping/unwrap',
      fields: { token: TOKEN },
      operations: {
        update: {
          summary: 'Unwrap a wrapped response.',
          handler: async (req, input) => {
            const { id, spent } = target(req, input.token);
            return { raw: { status: 200, body: await wrapper().unwrap(id, spent) } };
          },
        },
      },
      synopsis: 'Return a wrapped response and revoke its wrapping token.',
      description:
        'The wrapping token is the request token (its response-wrapping policy allows this path) or, sent by any token ' +
        'allowed here, the "token" field. A wrapping token unwraps once.',
    }),
    definePath({
      pattern: 'wrapping/lookup',
      fields: { token: TOKEN },
      unauthenticated: true,
      operations: {
        update: {
          summary: 'Look up a wrapping token.',
          handler: async (req, input) => ({ data: await wrapper().lookup(target(req, input.token).id) }),
        },
        read: {
          summary: 'Look up a wrapping token (the token in the query or as the request token).',
          handler: async (req, input) => ({ data: await wrapper().lookup(target(req, input.token).id) }),
        },
      },
      synopsis: 'Where and when a wrapping token was created, without spending it.',
      description: 'Answers creation_path, creation_time and creation_ttl; needs no other token.',
    }),
    definePath({
      pattern: 'wrapping/rewrap',
      fields: { token: { ...TOKEN, description: 'The wrapping token to replace.', required: true } },
      operations: {
        update: {
          summary: 'Move a wrapped response to a new wrapping token.',
          handler: async (_req, input) => {
            const info = await wrapper().rewrap(input.token);
            return { raw: { status: 200, body: { request_id: '', lease_id: '', renewable: false, lease_duration: 0, data: null, wrap_info: info, warnings: null, auth: null } } };
          },
        },
      },
      synopsis: 'Rewrap a response under a new token.',
      description: 'The old token is spent; the new one has the same TTL and creation path (for rotating long-lived wrapping tokens).',
    }),
  ];
}
