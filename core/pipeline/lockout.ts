/**
 * Stage 8b, user lockout: a login on a path under user lockout (PathDefinition.userLockout) runs
 * through the mount's lockout (core/auth/lockout/user-lockout.ts), which refuses a locked user
 * before the handler sees the credentials and counts wrong ones.
 */
import type { PreparedRequest } from '../framework/backend.js';
import type { LogicalResponse } from '../framework/request.js';
import type { UserLockout } from '../auth/lockout/user-lockout.js';
import type { Route } from './types.js';

export class LockoutStage {
  constructor(private readonly lockout: UserLockout) {}

  /** Runs a prepared login naming `user` (its `lockoutUser`) under its mount's lockout. */
  run(route: Route, prepared: PreparedRequest, user: string): Promise<LogicalResponse | null> {
    const entry = route.live?.entry;
    if (!entry || entry.table !== 'auth') return prepared.execute();
    return this.lockout.guard(entry, user, () => prepared.execute());
  }
}
