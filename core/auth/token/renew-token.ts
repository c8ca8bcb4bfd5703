/**
 * Renewing a token. A token from a login asks its auth method first (the method may refuse, or
 * change the TTL it allows); then the TTL is extended within the token's maximum lifetime.
 */
import { BadRequestError } from '../../errors.js';
import type { LogicalRequest } from '../../framework/request.js';
import type { MountTable } from '../../mounts/mount-table.js';
import type { ResolvedToken, TokenEntry, TokenStore } from '../token-store.js';
import { renewTokenTtl } from '../ttl.js';

export async function renewToken(
  tokens: TokenStore,
  mounts: MountTable,
  token: ResolvedToken,
  increment: number,
  req: LogicalRequest,
): Promise<{ entry: TokenEntry; warnings: string[] }> {
  const entry = token.entry;
  if (!entry.renewable) throw new BadRequestError('token is not renewable');
  let period = entry.period;
  let requested = increment;
  let maxTtl = entry.maxTtl;
  const origin = entry.origin;
  if (origin) {
    const live = mounts.byAccessor(origin.mountAccessor);
    if (!live) throw new BadRequestError('the auth method that issued this token is no longer mounted');
    const acquired = live.acquire();
    try {
      if (acquired.backend.renew) {
        const renewed = await acquired.backend.renew(
          {
            ...req,
            operation: 'update',
            path: '',
            data: {},
            storage: live.storage,
            mount: { path: live.routePrefix, type: live.entry.type, accessor: live.entry.accessor, uuid: live.entry.uuid },
          },
          {
            policies: origin.policies,
            ...(origin.metadata ? { metadata: origin.metadata } : {}),
            ...(origin.internalData ? { internalData: origin.internalData } : {}),
            ...(origin.displayName ? { displayName: origin.displayName } : {}),
            ttl: entry.creationTtl,
            period: entry.period,
          },
        );
        if (renewed.period !== undefined) period = renewed.period;
        if (!increment && renewed.ttl) requested = renewed.ttl;
        // The auth method's current maximum (a role's token_max_ttl may have been lowered).
        if (renewed.maxTtl) maxTtl = entry.maxTtl ? Math.min(entry.maxTtl, renewed.maxTtl) : renewed.maxTtl;
      }
    } finally {
      acquired.release();
    }
  }
  const now = tokens.now();
  const next = renewTokenTtl({
    increment: requested,
    period,
    creationTtl: entry.creationTtl,
    creationTime: entry.creationTime,
    maxTtl,
    explicitMaxTtl: entry.explicitMaxTtl,
    now,
  });
  const saved = await tokens.saveRenewal(token.hash, (current) => ({
    ...current,
    ttl: next.ttl,
    expireTime: next.expireTime,
    period,
    lastRenewalTime: now,
  }));
  if (!saved) throw new BadRequestError('invalid token');
  return { entry: saved, warnings: next.warnings };
}
