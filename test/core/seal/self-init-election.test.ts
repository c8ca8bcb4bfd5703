/**
 * Self-initialization across an HA election (core/seal/self-init.ts): the node that initialized
 * the store may find another node active and still promoting itself, which refuses what is
 * forwarded to it with a 503 and runs nothing; the run asks again, as a client would, rather than
 * stopping. Without HA a 503 is a failure like any other. The pipeline here is a function that
 * answers as a promoting active node does, then as a ready one.
 */
import { expect } from 'chai';
import { selfInitialize, type SelfInitDeps } from '../../../core/seal/self-init.js';
import type { SelfInitBlock } from '../../../core/config/settings.js';
import type { HostRequest, HostResponse } from '../../../core/pipeline/types.js';

const blocks: SelfInitBlock[] = [
  { name: 'access', requests: [{ name: 'policy', operation: 'update', path: 'sys/policies/acl/superuser', data: { policy: 'path "*" {}' }, allowFailure: false, declaredAt: 'test.hcl:1' }] },
];

/** Deps whose pipeline answers 503 (a leader still promoting) `refusals` times per path, then succeeds. */
function depsRefusing(refusals: number, ha: boolean) {
  const seen: string[] = [];
  const refused = new Map<string, number>();
  const errors: string[] = [];
  const deps: SelfInitDeps = {
    seal: { isInitialized: async () => false, initializeAuto: async () => ({ rootToken: 'hvs.self-init' }), status: async () => ({ sealed: false }), startAutoUnseal: () => undefined },
    handle: async (request: HostRequest): Promise<HostResponse> => {
      seen.push(request.path);
      const count = refused.get(request.path) ?? 0;
      if (count < refusals) {
        refused.set(request.path, count + 1);
        return { status: 503, body: { errors: ['this node is not the active node (the request was forwarded here during a change of leader); retry'] } };
      }
      return { status: 204, body: undefined };
    },
    ...(ha ? { activeNodeKnown: async () => true } : {}),
    log: { info: () => undefined, warn: () => undefined, error: (fields: object) => void errors.push(JSON.stringify(fields)) },
  };
  return { deps, seen, errors };
}

describe('self-initialization during an HA election', () => {
  it('asks again while the active node is still promoting itself, and completes: every request and the revoke run once they are taken', async () => {
    const { deps, seen, errors } = depsRefusing(2, true);
    expect(await selfInitialize(blocks, deps)).to.equal('completed');
    expect(seen).to.deep.equal(['sys/policies/acl/superuser', 'sys/policies/acl/superuser', 'sys/policies/acl/superuser', 'auth/token/revoke-self', 'auth/token/revoke-self', 'auth/token/revoke-self']);
    expect(errors).to.deep.equal([]);
  });

  it('without HA, stops at a 503 as at any failure', async () => {
    const { deps, seen, errors } = depsRefusing(1, false);
    expect(await selfInitialize(blocks, deps)).to.equal('stopped');
    expect(seen[0]).to.equal('sys/policies/acl/superuser');
    expect(errors[0]).to.contain('503');
  });
});
