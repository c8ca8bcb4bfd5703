/** The user lockout stage: which logins run under the mount's lockout, and with what. */
import { expect } from 'chai';
import { LockoutStage, type LoginGuard } from '../../../core/pipeline/lockout.js';
import type { Route } from '../../../core/pipeline/types.js';
import type { LiveMount } from '../../../core/mounts/live-mount.js';
import { defaultMountConfig, type MountEntry } from '../../../core/mounts/mount-entry.js';

function routeOn(entry: MountEntry | undefined): Route {
  return {
    backend: undefined as never,
    relative: 'login',
    live: entry ? ({ entry } as unknown as LiveMount) : undefined,
    unauthenticated: true,
    availableSealed: false,
    release: () => {},
  };
}

function entryOf(table: 'auth' | 'secret'): MountEntry {
  return {
    table, path: 'userpass/', type: 'userpass', description: '', uuid: 'u-1', accessor: `${table}_userpass_1`, local: false, seal_wrap: false,
    external_entropy_access: false, options: null, config: defaultMountConfig(), plugin_version: '',
  };
}

/** A guard that records what it was asked to guard and refuses one user, as a lock does. */
function recordingGuard(calls: string[]): LoginGuard {
  return {
    guard: async (entry, user, login) => {
      calls.push(`${entry.accessor} ${user}`);
      if (user === 'locked') throw new Error('locked out');
      return login();
    },
  };
}

describe('the user lockout stage', () => {
  it("runs a login on an auth mount under that mount's lockout, for the user the login names", async () => {
    const calls: string[] = [];
    const stage = new LockoutStage(recordingGuard(calls));
    const response = await stage.run(routeOn(entryOf('auth')), 'ada', async () => ({ data: { ok: true } }));
    expect(response).to.deep.equal({ data: { ok: true } });
    expect(calls).to.deep.equal(['auth_userpass_1 ada']);
  });

  it('never runs the handler of a login the lockout refuses', async () => {
    let ran = false;
    const stage = new LockoutStage(recordingGuard([]));
    const run = stage.run(routeOn(entryOf('auth')), 'locked', async () => {
      ran = true;
      return null;
    });
    await run.then(
      () => expect.fail('the locked user logged in'),
      (err: Error) => expect(err.message).to.equal('locked out'),
    );
    expect(ran).to.equal(false);
  });

  it('runs a request outside an auth mount (a secrets engine, sys) as it is: lockout is for logins', async () => {
    const calls: string[] = [];
    const stage = new LockoutStage(recordingGuard(calls));
    expect(await stage.run(routeOn(entryOf('secret')), 'ada', async () => ({ data: { n: 1 } }))).to.deep.equal({ data: { n: 1 } });
    expect(await stage.run(routeOn(undefined), 'ada', async () => ({ data: { n: 2 } }))).to.deep.equal({ data: { n: 2 } });
    expect(calls).to.deep.equal([]);
  });
});
