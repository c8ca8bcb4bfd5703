/**
 * Stage 9b, lease the secret: a secrets engine's answer that carries a secret gets its lease
 * (core/leases/), and the envelope shows the lease's id, duration and renewability. Only the host
 * sets an answer's lease: one a mounted backend wrote itself is dropped, and only secrets engines
 * may answer with a secret.
 */
import type { ResolvedToken } from '../auth/token-entry.js';
import type { LogicalResponse } from '../framework/request.js';
import type { SecretLeases } from '../leases/secret-leases.js';
import type { Route } from './types.js';

export type SecretRegistry = Pick<SecretLeases, 'register'>;

export class LeaseStage {
  constructor(private readonly leases: SecretRegistry) {}

  /** The answer with its secret leased; the sys backend's answers (a renewal's lease) pass unchanged. */
  async lease(route: Route, path: string, response: LogicalResponse, token: ResolvedToken | undefined): Promise<LogicalResponse> {
    const live = route.live;
    if (!live) return response;
    const { secret, lease: _ignored, ...rest } = response;
    if (!secret) return rest;
    if (live.entry.table !== 'secret') throw new Error('only secrets engines may return a secret');
    return { ...rest, lease: await this.leases.register(live, path, secret, token) };
  }
}
