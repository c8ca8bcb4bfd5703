/**
 * The userpass auth method (mount type `userpass`): users log in with a username and a password
 * kept as a bcrypt hash. This file wires the paths, the password hasher and the renewal hook for
 * one mount.
 */
import { FrameworkBackend, type PluginContext, type PluginManifest } from '../../sdk/index.js';
import { USERPASS_PLUGIN } from './manifest.js';
import { UserpassContext } from './context.js';
import { createHasher, type PasswordHasher } from './hasher.js';
import { userPaths } from './paths/users.js';
import { userPasswordPath } from './paths/user-password.js';
import { userPoliciesPath } from './paths/user-policies.js';
import { loginPath } from './paths/login.js';
import { renewLogin } from './renew.js';

export interface UserpassOptions {
  /** Replaces the bcrypt hasher (tests that count its work). */
  readonly hasher?: PasswordHasher;
}

export function createUserpassBackend(plugin: PluginContext, options: UserpassOptions = {}): FrameworkBackend {
  const ctx = new UserpassContext(plugin.storage, plugin.system, options.hasher ?? createHasher());
  return new FrameworkBackend({
    description: 'Log in with a username and a password.',
    paths: [...userPaths(ctx), userPasswordPath(ctx), userPoliciesPath(ctx), loginPath(ctx)],
    renew: (_req, auth) => renewLogin(ctx, auth),
    initialize: async () => {
      // Made now, off the event loop, so the first login of an unknown user takes no longer than others.
      void ctx.dummyHash().catch(() => undefined);
    },
    cleanup: () => ctx.hasher.close(),
  });
}

export const userpassPlugin: PluginManifest = { ...USERPASS_PLUGIN, factory: (context) => createUserpassBackend(context) };
