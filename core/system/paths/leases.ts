/**
 * `sys/leases/*` and the older `sys/renew`, `sys/revoke`, `sys/revoke-prefix`, `sys/revoke-force`:
 * the leases of tokens (core/auth/token-leases.ts) and of the secrets engines' secrets
 * (core/leases/), with Vault's paths, fields and answers
 * (https://developer.hashicorp.com/vault/api-docs/system/leases, docs/leases.md). A token's lease
 * id starts with `auth/`, where no secrets engine can be mounted, so the id says which store holds
 * it. Listing leases, revoking a prefix and listing irrevocable leases need sudo, as in Vault.
 */
import { BadRequestError, PermissionDeniedError } from '../../errors.js';
import { definePath, listResponse, type AnyPathDefinition, type LogicalResponse } from '../../framework/index.js';
import { TokenLeases } from '../../auth/token-leases.js';
import { rfc3339 } from '../../auth/token/issue.js';
import type { SystemDeps } from '../services.js';

const LEASE_ID = { type: 'string', description: 'The lease: `<mount>/<path>/<id>` for a secret, `auth/<mount>/login/<...>/<id>` for a token from a login.' } as const;
const URL_LEASE_ID = { type: 'string', description: 'The lease, in the path instead of the body.' } as const;
const SYNC = { type: 'bool', description: 'Answer once revoked (204); false answers 202. Revocation is done before the answer either way.', default: true } as const;
const PREFIX = { type: 'string', description: 'A lease, or the prefix of the leases to revoke (`<mount>/` for every secret of a mount, `auth/<mount>/` for every token from a mount).', required: true } as const;

/** How many irrevocable leases a listing without `limit` shows (Vault's MaxIrrevocableLeases). */
const IRREVOCABLE_LIMIT = 10_000;

/** Whether a lease id or prefix names tokens' leases: every token's lease is under `auth/`. */
function namesTokens(id: string): boolean {
  return id === 'auth' || id.startsWith('auth/');
}

/** Revoked before the answer; `sync: false` only changes the status to Vault's 202 for queued work. */
function revoked(sync: boolean): LogicalResponse | null {
  return sync ? null : { raw: { status: 202 } };
}

/** Two sorted listings as one, sorted, each name once. */
function merged(a: readonly string[], b: readonly string[]): string[] {
  return [...new Set([...a, ...b])].sort();
}

export function leasePaths(services: SystemDeps): AnyPathDefinition[] {
  const leases = new TokenLeases(services.authz.tokens);
  const secrets = services.leases;
  const leaseIdOf = (input: { lease_id?: string | undefined; url_lease_id?: string | undefined }) => {
    const id = input.lease_id || input.url_lease_id;
    if (!id) throw new BadRequestError('lease_id must be specified');
    return id;
  };

  const lookup = definePath({
    pattern: 'leases/lookup/',
    fields: { lease_id: LEASE_ID },
    operations: {
      update: {
        summary: 'Read a lease: its issue and expiry times, TTL and whether it can be renewed.',
        handler: async (_req, input) => {
          const id = leaseIdOf(input);
          if (!namesTokens(id)) return secretLookup(id);
          const lease = await leases.find(id);
          if (!lease) throw new BadRequestError('invalid lease');
          const entry = lease.entry;
          const now = services.authz.tokens.now();
          return {
            data: {
              id: lease.id,
              issue_time: rfc3339(entry.creationTime),
              expire_time: rfc3339(entry.expireTime),
              last_renewal: entry.lastRenewalTime ? rfc3339(entry.lastRenewalTime) : null,
              renewable: entry.renewable,
              ttl: Math.max(entry.expireTime - now, 0),
            },
          };
        },
      },
      list: {
        summary: 'List the top of the lease tree (needs sudo).',
        handler: async (req) => {
          // Vault's sudo covers `leases/lookup/*`, which takes in this listing but not the lookup above.
          if (!req.auth?.sudo) throw new PermissionDeniedError();
          return listResponse(merged(await leases.list(''), await secrets.list('')));
        },
      },
    },
    synopsis: 'Look up a lease; LIST the top of the lease tree.',
    description: 'PUT with lease_id reads the lease. LIST needs sudo and lists the first level of lease ids (`auth/`).',
  });

  const lookupList = definePath({
    pattern: 'leases/lookup/:prefix*/',
    sudo: true,
    fields: { prefix: { type: 'string', description: 'The prefix to list under.', required: true } },
    operations: {
      list: {
        summary: 'List the leases and lease folders one level under a prefix.',
        handler: async (_req, input) => {
          const prefix = input.prefix.replace(/\/?$/, '/');
          return listResponse(namesTokens(prefix) ? await leases.list(prefix) : await secrets.list(prefix));
        },
      },
    },
    synopsis: 'List leases under a prefix.',
    description: 'Names one level below the prefix: a folder ends in `/`, a lease is the last segment of its id. Needs sudo.',
  });

  const renewFields = {
    lease_id: LEASE_ID,
    url_lease_id: URL_LEASE_ID,
    increment: { type: 'duration', description: 'The TTL asked for.', default: 0 },
  } as const;
  const renewHandler = async (_req: unknown, input: { lease_id?: string | undefined; url_lease_id?: string | undefined; increment: number }): Promise<LogicalResponse | null> => {
    const id = leaseIdOf(input);
    if (!namesTokens(id)) {
      const renewed = await secrets.renew(id, input.increment);
      return { lease: renewed.lease, ...(renewed.data ? { data: renewed.data } : {}), ...(renewed.warnings.length > 0 ? { warnings: renewed.warnings } : {}) };
    }
    const lease = await leases.find(id);
    if (!lease) throw new BadRequestError('lease not found');
    // Every lease here is a token's; Vault renews those only through auth/token/renew*.
    throw new BadRequestError('tokens cannot be renewed through this endpoint');
  };
  const renew = (pattern: string) =>
    definePath({
      pattern,
      fields: renewFields,
      operations: { update: { summary: 'Renew a lease.', handler: renewHandler } },
      synopsis: 'Renew a lease.',
      description: 'A secret\'s lease is renewed through the secrets engine that issued it, up to its max TTL. As in Vault, a token is renewed through auth/token/renew, renew-self or renew-accessor instead.',
    });

  const revokeFields = { lease_id: LEASE_ID, url_lease_id: URL_LEASE_ID, sync: SYNC } as const;
  const revoke = (pattern: string) =>
    definePath({
      pattern,
      fields: revokeFields,
      operations: {
        update: {
          summary: 'Revoke a lease.',
          handler: async (_req, input) => {
            const id = leaseIdOf(input);
            if (!namesTokens(id)) {
              await secrets.revoke(id);
              return revoked(input.sync);
            }
            const lease = await leases.find(id);
            if (lease) await leases.revoke(lease);
            return revoked(input.sync);
          },
        },
      },
      synopsis: 'Revoke a lease.',
      description: 'A secret\'s lease is revoked through the secrets engine that issued it; a token\'s revokes the token and every token created from it. Revoking an unknown lease is not an error.',
    });

  const prefixDescription = (force: boolean) =>
    'A prefix that is a lease id revokes that lease; otherwise every lease whose id is under `prefix/`: `<mount>/` revokes ' +
    'every secret the mount issued, `auth/<mount>/` every token that mount\'s logins minted, before the answer. ' +
    (force ? 'A secrets engine that fails to revoke a secret does not stop it: the lease is dropped anyway. ' : '') +
    'Needs sudo.';
  const revokeUnder = async (prefix: string, force: boolean) => {
    if (namesTokens(prefix)) await leases.revokePrefix(prefix);
    else await secrets.revokePrefix(prefix, force);
  };
  const revokePrefix = (pattern: string) =>
    definePath({
      pattern,
      sudo: true,
      fields: { prefix: PREFIX, sync: SYNC },
      operations: {
        update: {
          summary: 'Revoke every lease under a prefix.',
          handler: async (_req, input) => {
            await revokeUnder(input.prefix, false);
            return revoked(input.sync);
          },
        },
      },
      synopsis: 'Revoke every lease under a prefix.',
      description: prefixDescription(false),
    });
  const revokeForce = (pattern: string) =>
    definePath({
      pattern,
      sudo: true,
      fields: { prefix: PREFIX },
      operations: {
        update: {
          summary: 'Revoke every lease under a prefix, ignoring backend errors.',
          handler: async (_req, input) => {
            await revokeUnder(input.prefix, true);
            return null;
          },
        },
      },
      synopsis: 'Revoke every lease under a prefix, ignoring errors.',
      description: prefixDescription(true),
    });

  const tidy = definePath({
    pattern: 'leases/tidy',
    fields: {},
    operations: {
      update: {
        summary: 'Remove expired leases and stale index entries.',
        handler: async () => {
          const swept = await services.authz.tokens.sweepExpired();
          const tidied = await secrets.tidy();
          const removed = swept + tidied.expired + tidied.orphaned;
          return { status: 202, warnings: [`Tidy operation done: ${removed} expired leases removed.`] };
        },
      },
    },
    synopsis: 'Clean up the lease store.',
    description: 'Revokes the leases that expired and are not swept yet, drops the leases of secrets whose mount is gone and index entries of leases renewed or revoked meanwhile, before the answer (202, as Vault answers).',
  });

  const irrevocable = {
    type: { type: 'string', description: 'The kind of leases: only `irrevocable` is counted, as in Vault.', required: true },
    include_child_namespaces: { type: 'bool', description: 'Accepted for Vault\'s clients; there are no namespaces.', default: false },
  } as const;
  const onlyIrrevocable = (type: string) => {
    if (type.toLowerCase() !== 'irrevocable') throw new BadRequestError(`type: "${type}" is not counted; only "irrevocable" is`);
  };
  // A token's revocation has no backend to fail, so only secrets' leases are ever irrevocable.
  const count = definePath({
    pattern: 'leases/count',
    fields: irrevocable,
    operations: {
      read: {
        summary: 'Count irrevocable leases.',
        handler: async (_req, input) => {
          onlyIrrevocable(input.type);
          const found = await secrets.irrevocable(1);
          return { data: { lease_count: found.count, counts: found.counts } };
        },
      },
    },
    synopsis: 'Count the leases whose revocation failed.',
    description: 'A lease is irrevocable when its secrets engine failed to revoke it at its expiry; `counts` is by mount accessor. Token leases never are.',
  });
  const list = definePath({
    pattern: 'leases',
    sudo: true,
    fields: { ...irrevocable, limit: { type: 'string', description: 'At most this many (a positive integer) or `none`.', default: '' } },
    operations: {
      read: {
        summary: 'List irrevocable leases.',
        handler: async (_req, input) => {
          onlyIrrevocable(input.type);
          if (input.limit !== '' && input.limit.toLowerCase() !== 'none' && !/^[1-9]\d*$/.test(input.limit)) {
            throw new BadRequestError("limit must be 'none' or a positive integer");
          }
          const limit = input.limit === '' ? IRREVOCABLE_LIMIT : input.limit.toLowerCase() === 'none' ? 0 : Number(input.limit);
          const found = await secrets.irrevocable(limit);
          const warnings = input.limit === '' && found.count > IRREVOCABLE_LIMIT ? [`more than ${IRREVOCABLE_LIMIT} irrevocable leases: only the first ${IRREVOCABLE_LIMIT} are listed; set limit=none for all`] : [];
          return { data: { lease_count: found.count, counts: found.counts, leases: found.leases }, ...(warnings.length > 0 ? { warnings } : {}) };
        },
      },
    },
    synopsis: 'List the leases whose revocation failed.',
    description: 'Each with its mount accessor (`mount_id`) and the error; 10000 at most unless `limit` says otherwise, as in Vault. Needs sudo.',
  });

  /** A secret's lease as Vault's lookup shows it. */
  async function secretLookup(id: string): Promise<LogicalResponse> {
    const entry = await secrets.find(id);
    if (!entry) throw new BadRequestError('invalid lease');
    return {
      data: {
        id: entry.leaseId,
        issue_time: rfc3339(entry.issueTime),
        expire_time: rfc3339(entry.expireTime),
        last_renewal: entry.lastRenewalTime ? rfc3339(entry.lastRenewalTime) : null,
        renewable: entry.renewable,
        ttl: Math.max(entry.expireTime - secrets.now(), 0),
      },
    };
  }

  return [
    lookup,
    lookupList,
    renew('leases/renew'),
    renew('leases/renew/:url_lease_id*'),
    renew('renew'),
    renew('renew/:url_lease_id*'),
    revoke('leases/revoke'),
    revoke('leases/revoke/:url_lease_id*'),
    revoke('revoke'),
    revoke('revoke/:url_lease_id*'),
    revokePrefix('leases/revoke-prefix/:prefix*'),
    revokePrefix('revoke-prefix/:prefix*'),
    revokeForce('leases/revoke-force/:prefix*'),
    revokeForce('revoke-force/:prefix*'),
    tidy,
    count,
    list,
  ];
}
