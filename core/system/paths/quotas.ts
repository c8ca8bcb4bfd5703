/**
 * `sys/quotas/config` and `sys/quotas/rate-limit/:name` (+ LIST): rate-limit quotas with Vault's
 * fields and answers (https://developer.hashicorp.com/vault/api-docs/system/quotas-config,
 * https://developer.hashicorp.com/vault/api-docs/system/quotas-rate-limit); docs/quotas.md says
 * how a rule applies.
 */
import { BadRequestError } from '../../errors.js';
import { definePath, listResponse, type AnyPathDefinition } from '../../framework/index.js';
import type { RateLimitRule } from '../../quotas/quotas.js';
import type { SystemDeps } from '../services.js';

/** Rules in memory are loaded whole; a sensible operator keeps to tens, this keeps a mistake bounded. */
const MAX_RULES = 1000;

export function quotaPaths(services: SystemDeps): AnyPathDefinition[] {
  const quotas = services.quotas;

  const config = definePath({
    pattern: 'quotas/config',
    fields: {
      rate_limit_exempt_paths: { type: 'comma-string-list', description: 'Paths no rate-limit quota applies to (exact, or a prefix ending in `*`).' },
      enable_rate_limit_audit_logging: { type: 'bool', description: 'Audit each request a rate-limit quota refuses.' },
      enable_rate_limit_response_headers: { type: 'bool', description: 'Send X-Ratelimit-Limit, -Remaining, -Reset (and Retry-After on a refusal) with answers under a rule.' },
    },
    operations: {
      read: {
        summary: 'Read the quota configuration.',
        handler: async () => {
          const current = await quotas.config();
          return {
            data: {
              enable_rate_limit_audit_logging: current.enableRateLimitAuditLogging,
              enable_rate_limit_response_headers: current.enableRateLimitResponseHeaders,
              rate_limit_exempt_paths: [...current.rateLimitExemptPaths],
            },
          };
        },
      },
      update: {
        summary: 'Change the quota configuration.',
        handler: async (_req, input) => {
          // A field left out keeps its value: Vault resets it, so turning headers on would also
          // drop the exemption of sys/unseal, which an operator of a locked-out server needs.
          const current = await quotas.config();
          await quotas.setConfig({
            rateLimitExemptPaths: input.rate_limit_exempt_paths ?? current.rateLimitExemptPaths,
            enableRateLimitAuditLogging: input.enable_rate_limit_audit_logging ?? current.enableRateLimitAuditLogging,
            enableRateLimitResponseHeaders: input.enable_rate_limit_response_headers ?? current.enableRateLimitResponseHeaders,
          });
          return null;
        },
      },
    },
    synopsis: 'How rate-limit quotas apply: exempt paths, audit logging of refusals, response headers.',
    description: 'The exempt paths default to Vault\'s: sys/health, sys/seal-status, sys/unseal and the generate-root and generate-recovery-token steps.',
  });

  const list = definePath({
    pattern: 'quotas/rate-limit/',
    fields: {},
    operations: { list: { summary: 'List the rate-limit quotas.', handler: async () => listResponse(await quotas.names()) } },
    synopsis: 'List rate-limit quotas.',
    description: 'The names of every rate-limit quota.',
  });

  const rule = definePath({
    pattern: 'quotas/rate-limit/:name',
    fields: {
      name: { type: 'name', description: 'The name of the quota.', required: true },
      path: {
        type: 'string',
        description: 'Where it applies: empty for every request, a mount (`transit/`, `auth/userpass/`), or a path under one; a path ending in `*` is a prefix.',
        default: '',
      },
      role: { type: 'string', description: 'Not supported: a login role.', default: '' },
      rate: { type: 'string', description: 'Requests allowed per interval, per client address (positive).' },
      interval: { type: 'duration', description: 'The interval the rate is counted over; 1s when 0 or left out.', default: 0 },
      block_interval: { type: 'duration', description: 'How long a client that went over the rate is refused; 0 for not at all.', default: 0 },
      inheritable: { type: 'bool', description: 'Applies to child namespaces: there are none, so only the global quota may set it.' },
    },
    existenceCheck: async (_req, input) => (await quotas.rule(input.name)) !== undefined,
    operations: {
      read: {
        summary: 'Read a rate-limit quota.',
        handler: async (_req, input) => {
          const found = await quotas.rule(input.name);
          if (!found) return null;
          return {
            data: {
              type: 'rate-limit',
              name: found.name,
              path: found.mount + found.suffix,
              role: '',
              rate: found.rate,
              interval: found.interval,
              block_interval: found.blockInterval,
              inheritable: found.inheritable,
            },
          };
        },
      },
      create: { summary: 'Create a rate-limit quota.', handler: async (_req, input) => write(input) },
      update: { summary: 'Change a rate-limit quota.', handler: async (_req, input) => write(input) },
      delete: {
        summary: 'Delete a rate-limit quota.',
        handler: async (_req, input) => {
          await quotas.deleteRule(input.name);
          return null;
        },
      },
    },
    synopsis: 'A rate-limit quota.',
    description:
      'Limits each client address to `rate` requests per `interval` on the requests it applies to; the most specific quota ' +
      'applies (a path, then the longest prefix, then the mount, then the global one). Counted on each node apart.',
  });

  interface RuleInput {
    name: string;
    path: string;
    role: string;
    rate?: string | undefined;
    interval: number;
    block_interval: number;
    inheritable?: boolean | undefined;
  }
  const write = async (input: RuleInput) => {
    if (input.role) throw new BadRequestError('role: quotas on a login role are not supported; set path to the auth mount or its login path');
    const rate = input.rate === undefined ? NaN : Number(input.rate);
    if (!Number.isFinite(rate) || rate <= 0) throw new BadRequestError("'rate' is invalid");
    const { mount, suffix } = scopeOf(input.path);
    const inheritable = input.inheritable ?? mount === '';
    if (inheritable && mount !== '') throw new BadRequestError('inheritable: only the global quota (empty path) may be inheritable: there are no namespaces');
    const next: RateLimitRule = { name: input.name, mount, suffix, rate, interval: input.interval || 1, blockInterval: input.block_interval, inheritable };
    const other = await quotas.sameScope(next);
    if (other !== undefined) throw new BadRequestError(`quota rule with similar properties exists under the name ${JSON.stringify(other)}`);
    if ((await quotas.rule(input.name)) === undefined && (await quotas.names()).length >= MAX_RULES) {
      throw new BadRequestError(`at most ${MAX_RULES} rate-limit quotas may exist`);
    }
    await quotas.setRule(next);
    return null;
  };

  /** The mount and the path under it that a quota's `path` names. */
  const scopeOf = (raw: string): { mount: string; suffix: string } => {
    const path = raw.replace(/^\/+/, '');
    if (path === '') return { mount: '', suffix: '' };
    if (path === 'sys' || path.startsWith('sys/')) return { mount: 'sys/', suffix: path.slice('sys/'.length).replace(/\/$/, '') };
    const mounts = services.unsealed.mounts;
    const found = mounts.resolve(path) ?? (path.endsWith('/') ? undefined : mounts.resolve(`${path}/`));
    if (!found) throw new BadRequestError(`invalid mount path ${JSON.stringify(path)}`);
    return { mount: found.mount.routePrefix, suffix: found.relative.replace(/\/$/, '') };
  };

  return [config, list, rule];
}
