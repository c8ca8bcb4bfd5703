/**
 * Stage 8b, user lockout: a login on a path under user lockout (PathDefinition.userLockout) runs
 * through the mount's lockout (core/auth/lockout/user-lockout.ts), which refuses a locked user
 * before the handler sees the credentials and counts wrong ones.
 */
import type { LogicalResponse } from '../framework/request.js';
import type { UserLockout } from '../auth/lockout/user-lockout.js';
import type { Route } from './types.js';

/** What the stage needs of the user lockout: running one login under it. */
export type LoginGuard = Pick<UserLockout, 'guard'>;

export class LockoutStage {
  constructor(private readonly lockout: LoginGuard) {}

  /** Runs `execute`, a prepared login naming `user` (its `lockoutUser`), under its mount's lockout. */
  run(route: Route, user: string, execute: () => Promise<LogicalResponse | null>): Promise<LogicalResponse | null> {
    const entry = route.live?.entry;
    if (!entry || entry.table !== 'auth') return execute();
    return this.lockout.guard(entry, user, execute);
  }
}
