/**
 * `sys/config/auditing/request-headers` (list) and `sys/config/auditing/request-headers/:header`
 * (read, set, remove): which request headers audit entries record, each HMAC'd or not. Root-
 * protected (sudo), as in Vault.
 */
import { definePath, type AnyPathDefinition } from '../../framework/index.js';
import type { AuditedHeaders } from '../../audit/request-headers.js';

export function auditedHeaderPaths(getHeaders: () => AuditedHeaders): AnyPathDefinition[] {
  const list = definePath({
    pattern: 'config/auditing/request-headers',
    fields: {},
    sudo: true,
    operations: {
      read: {
        summary: 'List the request headers audit entries record.',
        handler: async () => ({ data: { headers: getHeaders().list() } }),
      },
    },
    synopsis: 'The request headers audit devices record.',
    description:
      'Every audited header by lower-case name, with "hmac": whether its values are written as HMACs. ' +
      'An empty object when none is configured.',
  });

  const header = definePath({
    pattern: 'config/auditing/request-headers/:header',
    fields: {
      header: { type: 'string', description: 'The header name (case-insensitive).', required: true },
      hmac: {
        type: 'bool',
        description: 'Write the header\'s values as HMACs (sys/audit-hash reproduces them) rather than as received.',
        default: false,
      },
    },
    sudo: true,
    operations: {
      read: {
        summary: 'Read whether a request header is audited, and how.',
        handler: async (_req, input) => {
          const setting = getHeaders().get(input.header);
          return setting ? { data: { [input.header.toLowerCase()]: setting } } : null;
        },
      },
      update: {
        summary: 'Record a request header in audit entries.',
        handler: async (_req, input) => {
          await getHeaders().set(input.header, { hmac: input.hmac });
          return null;
        },
      },
      delete: {
        summary: 'Stop recording a request header.',
        handler: async (_req, input) => {
          await getHeaders().delete(input.header);
          return null;
        },
      },
    },
    synopsis: 'Configure one audited request header.',
    description:
      'POST with "hmac" (default false) adds or changes the header: from then on every audit entry of a ' +
      'request that carries it holds its values under request.headers, keyed by the lower-case name. Headers ' +
      'that carry a token (X-Vault-Token, Authorization, ...) are accepted only with "hmac": true. GET answers ' +
      '404 for a header that is not audited; DELETE of one does nothing. The setting is stored behind the ' +
      'barrier and applies on every node of a cluster.',
  });

  return [list, header];
}
